"""Items that fail one after another while a sync reads them (GitHub's, Notion's).

One item that fails is skipped (`Skipped`: it stays as indexed, and is tried again at the next
sync); `FAILURES_IN_A_ROW` in a row mean the service is failing, not one item, and the sync
stops with `ConnectorUnavailable`; refused credentials stop it at once."""

from __future__ import annotations

from knowledge.sources.connectors.base import BadCredentials, ConnectorError, ConnectorUnavailable

FAILURES_IN_A_ROW = 5  # then the service is down, not the item: the sync stops and says so


class FailureStreak:
    """Counts the `noun`s ("pages") that failed in a row."""

    def __init__(self, noun: str, limit: int = FAILURES_IN_A_ROW) -> None:
        self._noun = noun
        self._limit = limit
        self._count = 0

    def failed(self, exc: ConnectorError) -> None:
        """An item failed: fine, unless the credentials are refused or the service keeps failing."""
        if isinstance(exc, BadCredentials):
            raise exc
        self._count += 1
        if self._count >= self._limit:
            raise ConnectorUnavailable(
                f"{self._limit} {self._noun} failed in a row; the last: {exc}"
            ) from exc

    def succeeded(self) -> None:
        self._count = 0
