"""Use cases of the people who run Lore for a workspace (the admin console, the CLI, the
API's audit route): who may use the console, usage, the audit log and its export, the query
history's export, retention and forgetting a person.

Workspace-wide pages are for `may_administer` (workspace admins and LORE_CONNECTOR_ADMINS);
the owners of shared indexes see their own indexes (`bot.app.actions.inventory`). Names and
texts follow the same rules as everywhere: an index's name is shown to whoever may list it,
a question's text to whoever may read it where it was asked (`storage.access.sight`).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

from bot.app.audit import AuditAction, AuditFilter, AuditRecord
from knowledge import KnowledgeError, NotAllowed
from storage.access import Action, Place, Sight, allowed, may_administer, sight
from storage.records import IndexRef
from storage.repositories.forget_jobs import ForgetRef
from storage.repositories.history import AnswerHistory, Asked
from storage.repositories.retention import Removed
from storage.repositories.usage import Day, Usage, UsageRepository
from storage.values import Scope, utcnow

if TYPE_CHECKING:
    from bot.app.services import Services

__all__ = ["AdminActions", "ConsoleRole", "Day", "HistoryLine", "Named", "Overview", "SettingsView", "Usage"]

ADMINS_ONLY = "only workspace admins (and LORE_CONNECTOR_ADMINS) may do that"
MOST_DAYS = 366
WITHHELD = "(withheld: asked where you can't read it)"
PAGE = 500
T = TypeVar("T")


class ConsoleRole(enum.StrEnum):
    ADMIN = "admin"
    """Every page, and what the permission table lets admins do."""
    OWNER = "index owner"
    """The Knowledge and Coverage pages, for the shared indexes they created."""


@dataclass(frozen=True)
class Named:
    """A count under the name its reader may see (`hidden`: several places or indexes they
    may not name, counted together)."""

    name: str
    count: int
    hidden: bool = False


@dataclass(frozen=True)
class Overview:
    days: int
    since: datetime
    usage: Usage
    places: tuple[Named, ...]
    indexes: tuple[Named, ...]
    outcomes: tuple[Named, ...]
    """How the questions ended: answered from the documents, from a verified answer, or not
    at all (each question once; escalations are `usage.escalated`, of any of them)."""


@dataclass(frozen=True)
class HistoryLine:
    """One question of the exported history, as its reader may see it."""

    at: datetime
    where: str
    asker: str
    question: str
    answer: str
    abstained: bool
    latency_ms: int | None
    helpful: int
    unhelpful: int
    indexes: str
    withheld: bool


@dataclass(frozen=True)
class SettingsView:
    retention_days: int
    default_retention_days: int
    configuration: tuple[tuple[str, str], ...]


@dataclass
class AdminActions:
    services: Services

    def __post_init__(self) -> None:
        self._usage = UsageRepository(self.services.db)
        self._history = AnswerHistory(self.services.db)

    # --- who ---

    async def role(self, place: Place) -> ConsoleRole | None:
        """What the place's user may use the console for (None: nothing)."""
        if place.partner or place.user_id is None:
            return None
        if may_administer(place):
            return ConsoleRole.ADMIN
        owned = await self.owned(place)
        return ConsoleRole.OWNER if owned else None

    async def owned(self, place: Place) -> list[IndexRef]:
        """The shared indexes the place's user created."""
        indexes = await asyncio.to_thread(self.services.indexes.list_for_tenant, place.tenant_id)
        return [i for i in indexes if i.scope == Scope.SHARED and i.owner_user_id == place.user_id]

    def check(self, place: Place) -> None:
        if not may_administer(place):
            raise NotAllowed(ADMINS_ONLY)

    # --- usage ---

    async def overview(self, place: Place, days: int = 30) -> Overview:
        self.check(place)
        days = max(1, min(days, MOST_DAYS))
        until = utcnow()
        since = until - timedelta(days=days)
        usage = await asyncio.to_thread(self._usage.usage, place.tenant_id, since, until)
        indexes = {
            i.id: i for i in await asyncio.to_thread(self.services.indexes.list_for_tenant, place.tenant_id)
        }
        outcomes = [
            Named("answered", usage.answered - usage.verified),
            Named("answered from a verified answer", usage.verified),
            Named("abstained", usage.abstained),
        ]
        return Overview(
            days=days,
            since=since,
            usage=usage,
            places=_places(usage),
            indexes=_indexes(usage, indexes, place),
            outcomes=tuple(outcomes),
        )

    # --- the audit log ---

    async def audit(self, place: Place, wanted: AuditFilter, *, limit: int = 100) -> list[AuditRecord]:
        self.check(place)
        log = self.services.audit.log
        return await asyncio.to_thread(log.page, place.tenant_id, wanted, limit=max(1, min(limit, 1000)))

    async def audit_actions(self, place: Place) -> list[str]:
        self.check(place)
        return await asyncio.to_thread(self.services.audit.log.actions, place.tenant_id)

    async def export_audit(
        self, place: Place, wanted: AuditFilter, *, how: str
    ) -> AsyncIterator[AuditRecord]:
        """Every matching entry, newest first; the export is itself recorded."""
        self.check(place)
        await self.services.audit.record(place, AuditAction.EXPORT_AUDIT, how, filter=_filter_details(wanted))
        return _in_thread(self.services.audit.log.stream(place.tenant_id, wanted))

    async def export_for_tenant(
        self, tenant_id: str, wanted: AuditFilter, *, how: str
    ) -> AsyncIterator[AuditRecord]:
        """The same, for an API key allowed to read the audit log (a SIEM)."""
        await self.services.audit.record_for(
            tenant_id, AuditAction.EXPORT_AUDIT, how, filter=_filter_details(wanted)
        )
        return _in_thread(self.services.audit.log.stream(tenant_id, wanted))

    # --- the query history ---

    async def export_history(self, place: Place, days: int = 30) -> AsyncIterator[HistoryLine]:
        """The questions of the last `days` days, each as much as `place` may read of it
        (withheld text is marked; questions it may not even count are left out)."""
        self.check(place)
        days = max(1, min(days, MOST_DAYS))
        until = utcnow()
        since = until - timedelta(days=days)
        await self.services.audit.record(place, AuditAction.EXPORT_HISTORY, f"{days} days", days=days)
        indexes = {
            i.id: i for i in await asyncio.to_thread(self.services.indexes.list_for_tenant, place.tenant_id)
        }
        rows = _in_thread(self._history.between(place.tenant_id, since, until))

        async def lines() -> AsyncIterator[HistoryLine]:
            async for asked in rows:
                line = history_line(place, asked, indexes)
                if line is not None:
                    yield line

        return lines()

    # --- settings, retention, people ---

    async def settings_view(self, place: Place) -> SettingsView:
        self.check(place)
        retention = self.services.retention
        days = await asyncio.to_thread(retention.days, place.tenant_id)
        settings = self.services.settings
        shown = tuple(sorted(_configuration(settings.masked(), settings)))
        return SettingsView(days, settings.lore_retention_days, shown)

    async def set_retention(self, place: Place, days: int) -> int:
        """Keep the workspace's questions `days` days (0: for good)."""
        self.check(place)
        if not 0 <= days <= 3650:
            raise KnowledgeError("retention is a number of days from 0 (keep questions) to 3650")
        before = await asyncio.to_thread(self.services.retention.days, place.tenant_id)
        await asyncio.to_thread(self.services.retention.set_days, place.tenant_id, days)
        await self.services.audit.record(
            place, AuditAction.SETTINGS_CHANGE, "retention days", before=before, after=days
        )
        return days

    async def run_retention(self, place: Place) -> Removed:
        """Apply the workspace's retention now; what it removed."""
        self.check(place)
        purged = await self.services.retention.purge(place.tenant_id)
        return purged.removed if purged is not None else {}

    async def forget_user(self, place: Place, external_id: str) -> ForgetRef:
        """Queue the removal of what a person (by Slack user id) asked and said, and of their
        personal index (`bot.app.forgetting`); the job already under way for them if any."""
        self.check(place)
        person = await asyncio.to_thread(
            self.services.directory.find_user, place.tenant_id, external_id.strip()
        )
        if person is None:
            raise KnowledgeError(f"Lore knows nobody called {external_id.strip()!r} in this workspace")
        job, _ = await self.services.forgetting.request(place, person)
        return job

    async def forget_jobs(self, place: Place, *, limit: int = 10) -> list[ForgetRef]:
        """The workspace's latest jobs forgetting people, newest first."""
        self.check(place)
        return await self.services.forgetting.recent(place.tenant_id, limit=limit)


def history_line(place: Place, asked: Asked, indexes: dict[int, IndexRef]) -> HistoryLine | None:
    """One question as `place` may see it (None: it may not even count it)."""
    facts = [indexes[i].facts if i in indexes else None for i in asked.index_ids]
    seen = sight(asked.facts, facts, place)
    if seen is None:
        return None
    reads = seen == Sight.TEXT
    named = [
        indexes[i].name
        for i in asked.index_ids
        if i in indexes and allowed(Action.LIST, indexes[i].facts, place)
    ]
    where = (
        f"#{asked.channel_name}" if reads and asked.channel_name and asked.channel_id else asked.given.value
    )
    return HistoryLine(
        at=asked.at,
        where=where,
        asker=asked.asker if reads else "",
        question=asked.question if reads else WITHHELD,
        answer=(asked.answer or "") if reads else "",
        abstained=asked.abstained,
        latency_ms=asked.latency_ms,
        helpful=asked.helpful,
        unhelpful=asked.unhelpful,
        indexes=", ".join(named),
        withheld=not reads,
    )


def _places(usage: Usage) -> tuple[Named, ...]:
    """Public channels by name; private channels and DMs only counted, together."""
    named: list[Named] = []
    private = direct = 0
    for place in usage.places:
        if place.channel_id is None:
            direct += place.questions
        elif place.is_private:
            private += place.questions
        else:
            named.append(Named(f"#{place.name}" if place.name else "a channel", place.questions))
    if private:
        named.append(Named("private channels", private, hidden=True))
    if direct:
        named.append(Named("direct messages", direct, hidden=True))
    return tuple(sorted(named, key=lambda n: -n.count))


def _indexes(usage: Usage, indexes: dict[int, IndexRef], place: Place) -> tuple[Named, ...]:
    """Indexes the reader may list by name, the others counted together."""
    named: list[Named] = []
    others = 0
    for index_id, count in usage.indexes:
        index = indexes.get(index_id)
        if index is not None and allowed(Action.LIST, index.facts, place):
            named.append(Named(index.name, count))
        else:
            others += count
    if others:
        named.append(Named("indexes you can't see", others, hidden=True))
    return tuple(named)


def _configuration(masked: dict[str, str], settings: object) -> Iterator[tuple[str, str]]:
    from bot.app.settings import SECRET_FIELDS

    for name, value in masked.items():
        yield name, "(set)" if name.lower() in SECRET_FIELDS and value != "(unset)" else value


def _filter_details(wanted: AuditFilter) -> dict[str, str]:
    found = {
        "actor": wanted.actor,
        "action": wanted.action,
        "surface": wanted.surface,
        "since": wanted.since.isoformat() if wanted.since else None,
        "until": wanted.until.isoformat() if wanted.until else None,
    }
    return {k: v for k, v in found.items() if v}


async def _in_thread(rows: Iterator[T]) -> AsyncIterator[T]:
    """Read a blocking iterator of rows in a worker thread, a page at a time."""
    while True:
        page = await asyncio.to_thread(_take, rows, PAGE)
        for row in page:
            yield row
        if len(page) < PAGE:
            return


def _take(rows: Iterator[T], count: int) -> list[T]:
    found = []
    for row in rows:
        found.append(row)
        if len(found) >= count:
            break
    return found
