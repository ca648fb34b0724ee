"""`lore source add | list | spaces | attach` against the fake Confluence (on its own thread,
since the CLI runs its own event loop), then `lore jobs --follow`: credentials read from an
environment variable or an unechoed prompt, never echoed back whole."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from typer.testing import CliRunner

from bot.cli.main import app
from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, seed


@pytest.fixture
def confluence() -> Iterator[FakeConfluence]:
    with FakeConfluence() as fake:
        seed(fake)
        yield fake


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no .env from the developer's checkout
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LORE_CRAWL_ALLOW", "127.0.0.1")
    monkeypatch.setenv("LORE_SECRET_KEY", Fernet.generate_key().decode())
    return tmp_path / "home"


def lore(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(app, list(args), input=input)


def test_the_help_says_secrets_never_go_on_the_command_line() -> None:
    shown = " ".join(re.sub(r"[│╭╮╰╯─]", " ", lore("source", "add", "--help").output).split())
    assert "the environment variable holding the API token (never the token itself)" in shown
    assert "asked for, unechoed" in shown


def test_connect_list_spaces_attach_and_follow(
    home: Path, confluence: FakeConfluence, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompted = lore(
        "source", "add", "confluence", "--url", confluence.base_url, "--email", EMAIL, input=TOKEN + "\n"
    )
    assert prompted.exit_code == 0, prompted.output
    assert "API token: \n" in prompted.output, "the prompt does not echo what is typed"
    assert (
        "Connected Confluence at 127.0.0.1 as Ada Lovelace (ada@example.com, API token …wxyz)"
        in prompted.output
    )
    assert "Spaces this account can read: ENG, OPS." in prompted.output

    monkeypatch.setenv("CONFLUENCE_TOKEN", TOKEN)
    again = lore(
        "source",
        "add",
        "confluence",
        "--url",
        confluence.base_url,
        "--email",
        EMAIL,
        "--token-env",
        "CONFLUENCE_TOKEN",
    )
    assert again.exit_code == 0, again.output

    listed = lore("source", "list")
    assert listed.exit_code == 0, listed.output
    assert (
        "1  confluence 127.0.0.1" in listed.output
        and "credentials: ada@example.com, API token …wxyz" in listed.output
    )
    assert "2  confluence" not in listed.output, "connecting the same site again keeps one source"

    spaces = lore("source", "spaces", "127.0.0.1")
    assert spaces.exit_code == 0, spaces.output
    assert spaces.output.splitlines() == ["ENG          Engineering", "OPS          Operations"]

    attached = lore("source", "attach", "127.0.0.1", "--index", "confluence", "--space", "ENG")
    assert attached.exit_code == 0, attached.output
    assert "Done indexing Confluence ENG in" in attached.output
    assert "6 pages indexed (6 new, 0 updated, 0 unchanged)" in attached.output
    assert "Also 1 attachment read and indexed." in attached.output

    assert "→ confluence: ENG (daily, synced just now)" in lore("source", "list").output
    followed = lore("jobs", "--follow", "1")
    assert followed.exit_code == 0, followed.output
    assert "running on" in followed.output and followed.output.rstrip().endswith("job 1: succeeded")
    answer = lore("ask", "how do we deploy the payments API?", "--index", "confluence")
    assert "Deploy" in answer.output

    removed = lore("source", "remove", "127.0.0.1")
    assert removed.exit_code == 0, removed.output
    assert removed.output.strip() == "Disconnected 127.0.0.1: removed 7 documents and its credentials."
    assert "No sources connected yet" in lore("source", "list").output

    for output in (prompted, again, listed, spaces, attached, followed, removed):
        assert TOKEN not in output.output


def test_errors_end_in_one_line(
    home: Path, confluence: FakeConfluence, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WRONG_TOKEN", "not-the-token-1234")
    bad = lore(
        "source",
        "add",
        "confluence",
        "--url",
        confluence.base_url,
        "--email",
        EMAIL,
        "--token-env",
        "WRONG_TOKEN",
    )
    assert bad.exit_code == 1
    assert "Confluence at 127.0.0.1 refused the credentials (401)" in bad.output
    assert "Traceback" not in bad.output
    assert "No sources connected yet" in lore("source", "list").output

    unset = lore(
        "source", "add", "confluence", "--url", confluence.base_url, "--email", EMAIL, "--token-env", "NOPE"
    )
    assert unset.exit_code == 2 and "NOPE is empty or unset" in unset.output

    monkeypatch.delenv("LORE_SECRET_KEY")
    keyless = lore("source", "add", "confluence", "--url", confluence.base_url, "--pat-env", "WRONG_TOKEN")
    assert keyless.exit_code == 1
    assert "LORE_SECRET_KEY is not set. Make a key with" in " ".join(keyless.output.split())
    assert confluence.requests.snapshot()[-1].status == 401, "no request was made without a key"

    missing = lore("source", "spaces", "nowhere")
    assert missing.exit_code == 1 and "No source is connected yet" in missing.output
