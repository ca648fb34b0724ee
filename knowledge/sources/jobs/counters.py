"""What a job counts, by name: pages by outcome, documents by outcome, passages, skips by
reason. Jobs write them through `JobContext.count` / `skip`; surfaces read them through
`JobCounters`, never by spelling keys."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

SKIPPED = "skipped: "


class Count(enum.StrEnum):
    PAGES_FOUND = "pages_found"
    PAGES_FETCHED = "pages_fetched"
    PAGES_UNCHANGED = "pages_unchanged"
    PAGES_SKIPPED = "pages_skipped"
    PAGES_FAILED = "pages_failed"
    PAGES_GONE = "pages_gone"
    DOCUMENTS_ADDED = "documents_added"
    DOCUMENTS_UPDATED = "documents_updated"
    DOCUMENTS_UNCHANGED = "documents_unchanged"
    DOCUMENTS_REMOVED = "documents_removed"
    ATTACHMENTS_ADDED = "attachments_added"
    ATTACHMENTS_UPDATED = "attachments_updated"
    ATTACHMENTS_UNCHANGED = "attachments_unchanged"
    CHUNKS = "chunks"
    LINKS_BROKEN = "links_broken"

    @classmethod
    def page(cls, outcome: str) -> Count:
        """The count of pages with a crawl outcome (`fetched`, `unchanged`, `skipped` …)."""
        return cls(f"pages_{outcome}")

    @classmethod
    def document(cls, outcome: str, *, attachment: bool = False) -> Count:
        """The count of documents (or attachments) with an ingest outcome (`added` …)."""
        return cls(f"{'attachments' if attachment else 'documents'}_{outcome}")


def skipped_key(reason: str) -> str:
    """The counter of things skipped for `reason` (reasons are open-ended, so keyed by text)."""
    return SKIPPED + reason


@dataclass(frozen=True)
class JobCounters:
    """A job's counters, read by meaning."""

    raw: Mapping[str, int]

    def __getitem__(self, count: Count) -> int:
        return int(self.raw.get(count, 0))

    @property
    def pages_done(self) -> int:
        """Pages the job has finished with, whatever became of them (the progress bar)."""
        outcomes = (Count.PAGES_FETCHED, Count.PAGES_UNCHANGED, Count.PAGES_SKIPPED, Count.PAGES_FAILED)
        return sum(self[c] for c in (*outcomes, Count.PAGES_GONE))

    @property
    def pages_indexed(self) -> int:
        return self[Count.PAGES_FETCHED] + self[Count.PAGES_UNCHANGED]

    @property
    def attachments_indexed(self) -> int:
        return self[Count.ATTACHMENTS_ADDED] + self[Count.ATTACHMENTS_UPDATED]

    @property
    def skipped(self) -> dict[str, int]:
        """Things skipped, by reason."""
        return {k.removeprefix(SKIPPED): v for k, v in self.raw.items() if k.startswith(SKIPPED)}
