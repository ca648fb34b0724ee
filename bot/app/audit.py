"""The audit trail of administrative actions, recorded once, by the use cases themselves.

A surface says only where a request comes from (`acting_from(Origin(...))`, once per
request: Slack's middleware, the API's endpoint wrapper, the console's, the shell, the CLI);
the use case that changes something records who did it (the place's user), what and on
what. So every surface is covered by the same lines of code, and a new surface cannot
forget to audit: at worst its entries say `lore` where it should say its own name.

The origin travels in a context variable: asyncio tasks and `asyncio.to_thread` copy it,
so work a request starts in the background is still attributed to it.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from storage.access import Place
from storage.db import Database
from storage.records import NotFound
from storage.repositories.audit import AuditFilter, AuditLog, AuditRecord, NewAuditEntry
from storage.repositories.directory import Directory

__all__ = ["AuditAction", "AuditFilter", "AuditRecord", "Auditor", "Origin", "Surface", "acting_from"]

log = logging.getLogger(__name__)


class Surface(enum.StrEnum):
    SLACK = "slack"
    SHELL = "shell"
    CLI = "cli"
    API = "api"
    CONSOLE = "console"
    LORE = "lore"
    """Lore itself: scheduled jobs (retention, workspace purges), Slack's own events."""


class AuditAction(enum.StrEnum):
    """Everything the audit log records; the part before the dot is its family."""

    INDEX_CREATE = "index.create"
    INDEX_DELETE = "index.delete"
    INDEX_DOCUMENTS_ONLY = "index.documents_only"
    DOCUMENT_FORGET = "document.forget"
    ANSWER_VERIFY = "answer.verify"
    """A written answer added as a document (from a coverage gap)."""
    DOCUMENT_ADD = "document.add"
    """A document added from the console (chat's own additions are not administrative)."""
    SOURCE_ATTACH = "source.attach"
    SOURCE_REFRESH = "source.refresh"
    SOURCE_STOP = "source.stop"
    SOURCE_RESCHEDULE = "source.reschedule"
    SOURCE_DETACH = "source.detach"
    SOURCE_FORGET_FOLDER = "source.forget_folder"
    """One folder (a space, a repository) taken out of a connector's attachment of several."""
    JOB_CANCEL = "job.cancel"
    CONNECTOR_CONNECT = "connector.connect"
    CONNECTOR_ATTACH = "connector.attach"
    CONNECTOR_DISCONNECT = "connector.disconnect"
    ACCESS_MAP = "access.map"
    """A Slack user mapped to an account of a connected source (a GitHub login)."""
    ACCESS_UNMAP = "access.unmap"
    ACCESS_GRANT = "access.grant"
    """A source's principal granted to a person or an API key (`lore access grant`)."""
    ACCESS_REVOKE = "access.revoke"
    SOURCE_RESTRICT = "source.restrict"
    """A connector attachment restricted to a Slack channel's or user group's members."""
    SOURCE_UNRESTRICT = "source.unrestrict"
    CONVERSATION_ENABLE = "conversation.enable"
    CONVERSATION_DISABLE = "conversation.disable"
    CONVERSATION_DEFAULT = "conversation.default"
    CONVERSATION_MODE = "conversation.mode"
    CONVERSATION_STRATEGY = "conversation.strategy"
    CONVERSATION_LOCK = "conversation.lock"
    CONVERSATION_MENTIONS = "conversation.mentions"
    API_KEY_CREATE = "api_key.create"
    API_KEY_REVOKE = "api_key.revoke"
    EXPORT_HISTORY = "export.history"
    EXPORT_AUDIT = "export.audit"
    RETENTION_PURGE = "retention.purge"
    USER_FORGET = "user.forget"
    """A person forgotten: what the job removed (`bot.app.forgetting`)."""
    USER_FORGET_REQUEST = "user.forget_request"
    """Forgetting a person asked for (the job is queued)."""
    SETTINGS_CHANGE = "settings.change"
    CONSOLE_SIGN_IN = "console.sign_in"
    WORKSPACE_UNINSTALL = "workspace.uninstall"
    WORKSPACE_REINSTALL = "workspace.reinstall"
    WORKSPACE_PURGE = "workspace.purge"


@dataclass(frozen=True)
class Origin:
    """Where a request comes from: its surface and, where it has one, the channel, the
    address or the key; `actor` names who acts when no user of Lore's does (`cli:alice`)."""

    surface: Surface
    where: str = ""
    actor: str | None = None


ORIGIN: ContextVar[Origin | None] = ContextVar("lore_origin", default=None)
LORE = Origin(Surface.LORE)


@contextmanager
def acting_from(origin: Origin) -> Iterator[Origin]:
    """Attribute what happens in the block (and the tasks it starts) to `origin`."""
    token = ORIGIN.set(origin)
    try:
        yield origin
    finally:
        ORIGIN.reset(token)


def attribute_to(origin: Origin) -> None:
    """Attribute the rest of the current task (and the tasks it starts) to `origin`: for a
    framework whose middleware returns before the handler runs in the same task (Bolt runs
    listeners after its middleware chain), where a `with` block would end too soon. Each
    request runs in a task of its own, so the origin goes no further than its request."""
    ORIGIN.set(origin)


def current_origin() -> Origin:
    """Where the work under way comes from (Lore itself when no surface said)."""
    return ORIGIN.get() or LORE


class Auditor:
    """Appends to the audit log, naming the actor from the directory."""

    def __init__(self, db: Database, directory: Directory | None = None) -> None:
        self._log = AuditLog(db)
        self._directory = directory or Directory(db)

    @property
    def log(self) -> AuditLog:
        return self._log

    async def record(self, place: Place, action: AuditAction, target: str = "", **details: Any) -> None:
        """`place`'s user did `action` on `target` (from the current origin)."""
        await asyncio.to_thread(self.record_sync, place.tenant_id, place.user_id, action, target, details)

    async def record_for(self, tenant_id: str, action: AuditAction, target: str = "", **details: Any) -> None:
        """An entry with no user of Lore's behind it (Lore's own jobs, an API key's service)."""
        await asyncio.to_thread(self.record_sync, tenant_id, None, action, target, details)

    def record_sync(
        self,
        tenant_id: str,
        user_id: int | None,
        action: AuditAction,
        target: str = "",
        details: dict[str, Any] | None = None,
    ) -> AuditRecord:
        origin = current_origin()
        actor, name = self._who(user_id, origin)
        entry = NewAuditEntry(
            tenant_id=tenant_id,
            actor=actor,
            actor_name=name,
            surface=origin.surface.value,
            origin=origin.where,
            action=action.value,
            target=target,
            details={k: _plain(v) for k, v in (details or {}).items()},
        )
        return self._log.append(entry)

    def _who(self, user_id: int | None, origin: Origin) -> tuple[str, str]:
        if user_id is not None:
            try:
                user = self._directory.user(user_id)
            except NotFound:
                log.warning("audit: user %s is gone; recorded by id", user_id)
                return f"user:{user_id}", ""
            return user.external_id, user.name
        return origin.actor or origin.surface.value, ""


def _plain(value: Any) -> Any:
    """Details as JSON can hold them."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
