"""The Notion issue's "done when", through the real `lore` entry points against the fake
Notion (on loopback): `lore source add notion` with the integration's token read from an
environment variable, `lore source attach --workspace` through a storm of 429s, then a
scripted shell session in which a fact inside a toggle of a nested page, one in a database
row's property and one in a code block are each answered with a citation linking to the
Notion page; an edited, an archived and an unshared page are reflected after "refresh"; and
the chat commands (connect notion, list notion pages, add … notion page … to … index) go
through the shell's router."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.lore_cli import answers, lore, lore_env
from tests.fakes.notion_server import TOKEN, FakeNotion, Seeded, seed

QUESTIONS = """\
when does the payments on-call rotation hand over?
which database does the ledger run on?
what is the refund worker's timeout in seconds?
"""


@pytest.fixture
def notion() -> Iterator[tuple[FakeNotion, Seeded]]:
    fake = FakeNotion().start_in_thread()
    try:
        yield fake, seed(fake)
    finally:
        fake.stop()


def run(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> str:
    return lore(args, env, cwd, secret=TOKEN, stdin=stdin)


@pytest.mark.e2e
def test_add_attach_answer_with_notion_links_then_follow_changes(
    tmp_path: Path, notion: tuple[FakeNotion, Seeded]
) -> None:
    fake, seeded = notion
    env = {**lore_env(tmp_path), "NOTION_TOKEN": TOKEN, "LORE_NOTION_REQUESTS_PER_SECOND": "50"}

    added = run(
        ["source", "add", "notion", "--url", fake.base_url, "--token-env", "NOTION_TOKEN"], env, tmp_path
    )
    assert "Connected Notion at 127.0.0.1 as Lore in Acme" in added, added
    assert "Engineering Handbook" in added and "Scratchpad" in added, added

    fake.rate_limit(6, retry_after="1")
    attached = run(["source", "attach", "127.0.0.1", "--index", "handbook", "--workspace"], env, tmp_path)
    assert "Done indexing Notion workspace" in attached and "8 pages indexed (8 new" in attached, attached
    assert [r.status for r in fake.api_requests()].count(429) == 6, "the storm met, waited out, nothing lost"

    said = run(["shell"], env, tmp_path, stdin="/in #eng\nenable the handbook index\n" + QUESTIONS)
    handover, ledger, timeout = answers(said)
    assert "09:30" in handover and f"<{fake.page_url(seeded.payments_runbook)}>" in handover, handover
    assert "PostgreSQL 16" in ledger and f"<{fake.page_url(seeded.ledger_decision)}>" in ledger, ledger
    assert "45" in timeout and f"<{fake.page_url(seeded.handbook)}>" in timeout, timeout

    fake.edit_text(seeded.deploy_paragraph, "Production deploys of the payments API go out every Thursday.")
    fake.edit_property(
        seeded.ledger_decision, "Summary", {"rich_text": ["The ledger moved to PostgreSQL 17 in May."]}
    )
    fake.archive(seeded.payments_runbook)
    fake.unshare(seeded.scratch.id)
    refreshed = run(
        ["shell"],
        env,
        tmp_path,
        stdin="/in #eng\nrefresh notion workspace\n" + QUESTIONS,
    )
    assert "Done indexing Notion workspace" in refreshed or "Done indexing *Notion workspace*" in refreshed
    assert "Removed 2 pages that no longer exist" in refreshed, refreshed
    docs = run(["docs", "handbook"], env, tmp_path)
    assert "Ledger database" in docs and "Payments runbook" not in docs and "Scratchpad" not in docs, docs
    handover, ledger, _ = answers(refreshed)
    assert "09:30" not in handover, handover
    assert "PostgreSQL 17" in ledger and "PostgreSQL 16" not in ledger, ledger

    chat = run(
        ["shell"],
        env,
        tmp_path,
        stdin=(
            "connect notion\n"
            "list notion pages\n"
            "/in #ops\n"
            f"add the notion page {fake.page_url(seeded.runbooks)} to the ops index\n"
        ),
    )
    assert "connect Notion from the command line: `lore source add notion --token-env NOTION_TOKEN`" in chat
    assert "Engineering Handbook" in chat and "Decisions" in chat, chat
    assert "Syncing Notion" in chat and ("into the *ops* index" in chat or "into the ops index" in chat), chat
    assert "Done indexing Notion" in chat, chat
    print(added + attached + said + refreshed + chat)  # the sessions, for `pytest -s`
