"""`python -m bench.notion [--quick]`: Notion sync cost, first and unchanged, in requests and seconds.

The fake Notion (`tests.fakes.notion_server`, the real wire format, on loopback) serves a
shared handbook of 300 pages: twelve area pages under the handbook, pages under them, and a
database of rows; each page has headings, paragraphs, a bulleted list nested two deep, a
toggle holding a paragraph and a code block, so that reading a page follows its blocks'
children. Lore connects it as a user would (`Connections.connect`, a token), attaches the
workspace to an index and the worker the bot runs syncs it: a first sync, then a scheduled
re-sync with nothing changed (a listing newest first that stops at the last sync; no block
read). The client's pacing is off here (`LORE_NOTION_REQUESTS_PER_SECOND=0`) so that the
seconds are Lore's; at Notion's documented three requests a second, a sync takes at least
its requests ÷ 3 seconds, which the report says beside.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import run_alone
from bench.syncs import Report, settings, two_syncs, words
from bot.app.services import build_services
from knowledge.sources.connectors import Credentials, FolderSpec
from storage.records import JobRef
from tests.fakes.notion_server import TOKEN, FakeBlock, FakeNotion

NOTION_RATE = 3.0
"""Notion's documented average rate for an integration, in requests a second."""


def blocks(fake: FakeNotion, n: int) -> list[FakeBlock]:
    b = fake.block
    return [
        b("heading_2", f"Section {n}"),
        b("paragraph", words(n, 80) + "."),
        b(
            "bulleted_list_item",
            words(n + 1, 12),
            b("bulleted_list_item", words(n + 2, 12), b("bulleted_list_item", words(n + 3, 12))),
        ),
        b("toggle", f"Details of {n}", b("paragraph", words(n + 4, 60) + ".")),
        b("code", {"rich_text": [f"TIMEOUT_{n} = {n % 90 + 10}\n"], "language": "python"}),
        b("paragraph", words(n + 5, 60) + "."),
    ]


def fill(fake: FakeNotion, pages: int) -> None:
    """A shared handbook of `pages` documents: twelve areas, pages under them, and a sixth of
    them as rows of a database in the handbook."""
    handbook = fake.add_page("Handbook", shared=True, blocks=blocks(fake, 0))
    areas = [fake.add_page(f"Area {a}", parent=handbook.id, blocks=blocks(fake, a)) for a in range(12)]
    database = fake.add_database(
        "Decisions", {"Name": "title", "Status": "select", "Summary": "rich_text"}, parent=handbook.id
    )
    rows = max(1, (pages - 13) // 6)
    for n in range(rows):
        fake.add_row(
            database,
            f"Decision {n}",
            {
                "Status": {"select": {"id": "s1", "name": "Accepted", "color": "green"}},
                "Summary": {"rich_text": [words(n, 30)]},
            },
            blocks=blocks(fake, n)[:3],
        )
    for n in range(pages - 13 - rows):
        fake.add_page(f"Page {n}", parent=areas[n % 12].id, blocks=blocks(fake, n))


def measure(fake: FakeNotion) -> Callable[[JobRef], Report]:
    """What the fake served during a sync: requests by endpoint, block children read."""
    seen, read = len(fake.api_requests()), len(fake.children_served)

    def report(job: JobRef) -> Report:
        made = fake.api_requests()[seen:]
        counters, seconds = job.counters, job.seconds
        pages = counters.get("pages_fetched", 0) + counters.get("pages_unchanged", 0)
        return {
            "pages": pages,
            "pages_fetched": counters.get("pages_fetched", 0),
            "pages_unchanged": counters.get("pages_unchanged", 0),
            "seconds": round(seconds, 2),
            "pages_per_s": round(pages / seconds, 1) if seconds else 0.0,
            "chunks": counters.get("chunks", 0),
            "requests": len(made),
            "requests_by_path": dict(Counter(_kind(r.path) for r in made).most_common()),
            "block_children_read": len(fake.children_served) - read,
            "seconds_at_notion_rate": round(len(made) / NOTION_RATE, 1),
        }

    return report


def _kind(path: str) -> str:
    """A request's endpoint, ids left out: `/v1/blocks/{id}/children`."""
    parts = path.split("/")
    return "/".join("{id}" if len(p) >= 32 else p for p in parts)


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    pages = 30 if quick else 300
    config = settings(workdir / "lore", lore_notion_requests_per_second=0)
    load_before = os.getloadavg()[0]
    fake = FakeNotion().start_in_thread()
    try:
        fill(fake, pages)
        blocks_total = len(fake.blocks)
        services = build_services(config)
        try:
            first, again, _ = await two_syncs(
                services,
                kind="notion",
                url=fake.base_url,
                credentials=Credentials(TOKEN),
                folder=FolderSpec("workspace"),
                measure=lambda: measure(fake),
            )
        finally:
            await services.aclose()
    finally:
        fake.stop()
    return {
        "quick": quick,
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "workspace": {"pages": pages, "blocks": blocks_total},
        "first_sync": first,
        "unchanged_resync": again,
    }


def main() -> None:
    run_alone("notion", run, "thirty pages (seconds)")


if __name__ == "__main__":
    main()
