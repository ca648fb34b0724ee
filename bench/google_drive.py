"""`python -m bench.google_drive [--quick]`: Google Drive sync throughput, and what an unchanged
re-sync costs.

The fake Google (`tests.fakes.google_server`, Drive v3's and Sheets v4's wire format, on
loopback) holds a Handbook folder with ten subfolders and 500 files of mixed kinds: Google
Docs (exported as Markdown), Sheets of two sheets each (read through the Sheets API, every
sheet a table), Slides (exported as PowerPoint), PDFs and Markdown files (downloaded). Lore
connects it as a user would (`Connections.connect`, a service account acting as a user),
attaches the folder to an index and the worker the bot runs syncs it: a first sync (a
complete listing), then a scheduled re-sync with nothing changed, which reads Drive's change
feed from its token; then a permission sync and a group sync of the attachment (Drive's
sharing read again: a listing, no content): the requests it makes are counted, the seconds timed.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import run_alone
from bench.syncs import WORDS, Report, settings, two_syncs, words
from bot.app.services import Services, build_services
from knowledge.sources.connectors import FolderSpec
from knowledge.sources.connectors.google_keys import service_account
from storage.records import ConnectionRef, JobRef
from tests.fakes.google_server import DOCUMENT, DOMAIN, PRESENTATION, SPREADSHEET, FakeGoogle, pdf_bytes

ADA = f"ada@{DOMAIN}"
KINDS = ("doc", "sheet", "slides", "pdf", "markdown")
"""In turn: 100 of each kind in 500 files."""


def fill(fake: FakeGoogle, files: int) -> str:
    """A Handbook folder, ten subfolders, `files` files of the five kinds in turn; its id."""
    fake.add_user(ADA, "Ada Lovelace", admin=True)
    handbook = fake.folder("Handbook", None)
    folders = [fake.folder(f"Area {n}", handbook.id).id for n in range(10)]
    for n in range(files):
        parent, kind = folders[n % len(folders)], KINDS[n % len(KINDS)]
        if kind == "doc":
            body = "\n\n".join(f"## Part {p}\n\n{words(n + p, 80)}." for p in range(3))
            fake.add(f"Doc {n}", DOCUMENT, parent, content=f"# Doc {n}\n\n{body}\n")
        elif kind == "sheet":
            rows = [
                ["Item", "Owner", "Note"],
                *([f"row {r} of {n}", WORDS[r % 20], words(n + r, 8)] for r in range(20)),
            ]
            fake.add(f"Sheet {n}", SPREADSHEET, parent, sheets=[("Plan", rows), ("Owners", rows[:8])])
        elif kind == "slides":
            slides = [(f"Slide {s}", words(n + s, 30)) for s in range(4)]
            fake.add(f"Deck {n}", PRESENTATION, parent, slides=slides)
        elif kind == "pdf":
            fake.add(
                f"Policy {n}.pdf",
                "application/pdf",
                parent,
                content=pdf_bytes(f"Policy {n}. {words(n, 120)}."),
            )
        else:
            fake.add(f"Note {n}.md", "text/markdown", parent, content=f"# Note {n}\n\n{words(n, 150)}.\n")
    return handbook.id


def measure(fake: FakeGoogle) -> Callable[[JobRef], Report]:
    """What the fake served during a sync: requests by endpoint, tokens, exports and downloads."""
    seen, tokens, exports = len(fake.api_requests()), len(fake.token_requests()), len(fake.exports)

    def report(job: JobRef) -> Report:
        made = fake.api_requests()[seen:]
        counters, seconds = job.counters, job.seconds
        files = counters.get("pages_fetched", 0) + counters.get("pages_unchanged", 0)
        return {
            "files": files,
            "files_fetched": counters.get("pages_fetched", 0),
            "sheets_read": counters.get("attachments_added", 0) + counters.get("attachments_updated", 0),
            "seconds": round(seconds, 2),
            "files_per_s": round(files / seconds, 1) if seconds else 0.0,
            "chunks": counters.get("chunks", 0),
            "requests": len(made),
            "by_path": dict(Counter(_kind(r.path) for r in made).most_common()),
            "token_requests": len(fake.token_requests()) - tokens,
            "exports_and_downloads": len(fake.exports) - exports,
        }

    return report


async def access_syncs(services: Services, fake: FakeGoogle, connection: ConnectionRef) -> dict[str, Any]:
    """A permission sync of the attachment, then a group sync of its connection: requests
    and seconds of each (Drive's sharing read again; nothing fetched, nothing embedded)."""
    syncer = services.access_sync
    [source] = services.connections.repository.attachments(connection.id)
    found: dict[str, Any] = {}
    for name in ("permissions", "groups"):
        seen, exports, started = len(fake.api_requests()), len(fake.exports), time.perf_counter()
        report: Any = await (
            syncer.permissions(source) if name == "permissions" else syncer.groups(connection)
        )
        if report.error is not None:
            raise RuntimeError(f"the {name} sync failed: {report.error}")
        made = fake.api_requests()[seen:]
        found[name] = {
            "seconds": round(time.perf_counter() - started, 2),
            "requests": len(made),
            "by_path": dict(Counter(_kind(r.path) for r in made).most_common()),
            "exports_and_downloads": len(fake.exports) - exports,
        }
    documents = services.sources.documents(source.id)
    found["documents"] = len(documents)
    found["restricted"] = sum(1 for d in documents if not services.documents.access(d.id).is_public)
    return found


def _kind(path: str) -> str:
    """A request's endpoint without ids: `files/{id}/export`, `changes`, `spreadsheets/{id}`."""
    parts = path.removeprefix("/drive/v3/").removeprefix("/v4/").split("/")
    if parts[0] in ("files", "spreadsheets") and len(parts) > 1:
        return "/".join([parts[0], "{id}", *parts[2:]])
    return "/".join(parts)


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    files = 20 if quick else 500
    config = settings(workdir / "lore")
    load_before = os.getloadavg()[0]
    with FakeGoogle() as fake:
        handbook = fill(fake, files)
        services = build_services(config)
        try:
            first, again, connection = await two_syncs(
                services,
                kind="google-drive",
                url=fake.drive_url,
                credentials=service_account(fake.service_account_key(), ADA),
                folder=FolderSpec(handbook),
                measure=lambda: measure(fake),
            )
            permissions = await access_syncs(services, fake, connection)
        finally:
            await services.aclose()
    if first["files"] != files:
        raise RuntimeError(f"the first sync read {first['files']} files of {files}")
    return {
        "quick": quick,
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "drive": {"files": files, "folders": 11, "kinds": {k: files // len(KINDS) for k in KINDS}},
        "first_sync": first,
        "unchanged_resync": again,
        "permission_sync": permissions,
    }


def main() -> None:
    run_alone("google_drive", run, "twenty files (seconds)")


if __name__ == "__main__":
    main()
