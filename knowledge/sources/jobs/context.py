"""What a running job offers the code that fills its index, and the seams a job is built from."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from knowledge.sources.jobs.counters import Count
from storage.records import IndexRef, JobRef, SourceConfigRef

if TYPE_CHECKING:
    from knowledge.sources.crawl import Crawler

MakeCrawler = Callable[[Mapping[str, object]], "Crawler"]
"""Builds a crawler for one job from the source's options (limit overrides)."""


class JobContext(Protocol):
    """What a running job offers the code that fills its index: counters, a log, the
    pages it handled before an interruption, and whether it should stop."""

    job: JobRef
    counters: dict[str, int]
    worker: str

    def count(self, name: Count, n: int = 1) -> None: ...

    def skip(self, reason: str) -> None:
        """Count one thing skipped for `reason`."""

    async def say(self, message: str, level: str = "info") -> None: ...

    def stopped(self) -> bool:
        """Cancelled, or taken over by another worker: stop at the next item."""

    async def done_before(self) -> set[str]:
        """Keys of the items this job handled before it was interrupted."""

    async def handled(self, key: str, outcome: str) -> None:
        """Record an item as handled (a resumed job skips it), save the counters, and
        check for cancellation."""


class SourceSync(Protocol):
    """Fills an index from a connector attachment; `knowledge.sources.jobs` picks one by the
    source's kind. It returns when done or when `context.stopped()`; it raises to fail."""

    async def sync(self, context: JobContext, source: SourceConfigRef, index: IndexRef) -> None: ...
