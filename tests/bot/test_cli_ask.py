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


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the developer's checkout
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "lore"))
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("offline")
def test_two_files_of_one_name_are_told_apart_by_their_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
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


@pytest.mark.usefixtures("offline")
def test_sources_of_one_name_are_shown_by_their_folders_and_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Several projects' docs added at once: every project has an `index.md`, and "[1]
    index.md … [2] index.md" would not say which is which."""
    for project, day in (("billing", "Tuesday"), ("payroll", "Friday")):
        docs = tmp_path / "projects" / project / "docs"
        docs.mkdir(parents=True)
        (docs / "index.md").write_text(
            f"# {project.title()}\n\nWhat the {project} service does.\n\n"
            f"## Deploying\n\nThe {project} service is deployed every {day} by the deploy pipeline.\n"
        )
    lore(["ingest", str(tmp_path / "projects"), "--index", "team"], monkeypatch, capsys)
    question = "Which day is the billing service deployed, and which day the payroll service?"

    printed = lore(["ask", question, "--index", "team"], monkeypatch, capsys)
    answer = json.loads(lore(["ask", question, "--index", "team", "--json"], monkeypatch, capsys))

    sources = printed.split("Sources:\n", 1)[1]
    assert "billing/docs/index.md › Deploying, added" in sources
    assert "payroll/docs/index.md › Deploying, added" in sources
    cited = {c["source"]: c for c in answer["citations"]}
    assert {Path(s).parts[-3] for s in cited} >= {"billing", "payroll"}
    assert all(c["name"] == "index.md" and c["section"] == "Deploying" for c in cited.values())


@pytest.mark.usefixtures("offline")
def test_forgetting_a_name_two_documents_share_forgets_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for project in ("billing", "payroll"):
        docs = tmp_path / "projects" / project / "docs"
        docs.mkdir(parents=True)
        (docs / "index.md").write_text(f"# {project.title()}\n\nWhat the {project} service does.\n")
    lore(["ingest", str(tmp_path / "projects"), "--index", "team"], monkeypatch, capsys)

    monkeypatch.setattr(sys, "argv", ["lore", "forget", "team", "index.md"])
    with pytest.raises(SystemExit) as ended:
        main()
    said = capsys.readouterr()

    assert ended.value.code not in (0, None)
    assert "“index.md” matches 2 documents in the team index, so I forgot none of them" in said.err + said.out
    assert (
        "billing/docs/index.md (id " in said.err + said.out
        and "payroll/docs/index.md (id " in said.err + said.out
    )
    listed = lore(["docs", "team"], monkeypatch, capsys)
    assert "billing/docs/index.md (" in listed and "payroll/docs/index.md (" in listed, "both are still there"
