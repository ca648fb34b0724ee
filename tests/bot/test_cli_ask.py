"""`lore ingest` of folders, then `lore ask --json`, in process: what a script reading the
answer gets to tell its sources apart."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bot.cli.main import main


def lore(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setattr(sys, "argv", ["lore", *argv])
    try:
        main()
    except SystemExit as ended:
        assert ended.code in (0, None), capsys.readouterr().err
    return capsys.readouterr().out


def test_two_files_of_one_name_are_told_apart_by_their_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the developer's checkout
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "lore"))
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    billing, payroll = tmp_path / "billing", tmp_path / "payroll"
    for folder, text in (
        (
            billing,
            "# Deploying\n\nThe billing service is deployed every Tuesday by the blue-green pipeline.\n",
        ),
        (payroll, "# Holidays\n\nPayroll closes the books on the last Friday of each month.\n"),
    ):
        folder.mkdir()
        (folder / "index.md").write_text(text)

    added = lore(["ingest", str(billing), str(payroll), "--index", "team"], monkeypatch, capsys)
    assert "2 added or updated" in added
    answer = json.loads(
        lore(
            ["ask", "When is the billing service deployed?", "--index", "team", "--json"], monkeypatch, capsys
        )
    )

    first = answer["citations"][0]
    assert first["name"] == "index.md" and "Tuesday" in first["text"]
    assert first["source"] == str((billing / "index.md").resolve()), "the file it came from, not its namesake"
