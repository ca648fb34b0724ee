"""The command line's one error boundary: every `lore` command given a bad argument (or meeting
a bad setting) ends with a short message and a non-zero exit, never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.cli.main import main

BAD = [
    (["jobs", "cancel", "999"], "no indexing job 999"),
    (["jobs", "--follow", "999"], "no indexing job 999"),
    (["ask", "what?", "--index", "nosuch"], "I don't know an index called 'nosuch'"),
    (["ask", "what?", "--mode", "BOGUS"], "BOGUS"),
    (["ask", "  "], "the question is empty"),
    (["docs", "nosuch"], "I don't know an index called 'nosuch'"),
    (["forget", "personal", "nothing-like-this.pdf"], "there is no document matching"),
    (["forget", "nosuch", "x"], "I don't know an index called 'nosuch'"),
    (["ingest", "https://127.0.0.1:9/page"], "127.0.0.1"),
    (["ingest", "no-such-file.txt"], "no such file or folder"),
    (["eval", "beir", "no-such-folder"], "no-such-folder"),
    (["source", "spaces", "nosuch"], "no source is connected yet"),
    (["source", "remove", "nosuch"], "no source is connected yet"),
    (["source", "attach", "nosuch", "--index", "x", "--space", "ENG"], "no source is connected yet"),
    (["source", "add", "jira", "--url", "https://example.com"], "confluence, github, notion"),
    (["source", "add", "notion", "--email", "a@b.c", "--token-env", "X"], "Notion takes one token"),
    (["api-key", "revoke", "nosuch"], "nosuch"),
    (["serve", "--port", "port"], "port"),
    (["ingest"], "Missing argument"),
    (["no-such-command"], "No such command"),
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "lore"))
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["lore", *argv])
    with pytest.raises(SystemExit) as ended:
        main()
    code = ended.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


@pytest.mark.parametrize(("argv", "says"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_argument_ends_in_a_message_not_a_traceback(
    home: Path,
    argv: list[str],
    says: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = run(argv, monkeypatch, capsys)
    assert code != 0
    assert "Traceback" not in err and 'File "' not in err
    assert says.lower() in " ".join(err.split()).lower(), err


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("LORE_MAX_FILE_MB", "lots", "LORE_MAX_FILE_MB"),
        ("DATABASE_URL", "nosuchdb://x", "nosuchdb"),
        ("LORE_SLACK_CONNECT", "sometimes", "LORE_SLACK_CONNECT"),
    ],
)
@pytest.mark.parametrize("command", [["indexes"], ["db", "upgrade"], ["doctor"]])
def test_a_bad_setting_ends_in_one_line(
    home: Path,
    command: list[str],
    variable: str,
    value: str,
    says: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(variable, value)
    code, err = run(command, monkeypatch, capsys)
    assert code != 0 and "Traceback" not in err
    assert says in err and len(err.strip().splitlines()) <= 3, err
