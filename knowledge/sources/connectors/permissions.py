"""What a connector that knows its source's permissions offers beside its content: who may
read each item (permission sync) and who is in each group, with the emails that tie the
source's people to Slack's (group sync). Confluence is the first; GitHub, Google Drive and
Notion plug into the same two capabilities.

An item's access is said in the source's own terms (`SourceAccess`: clauses of `user:ID`,
`group:NAME` and `domain:NAME` grantees, a reader needing one of every clause; a domain is
held by everyone whose confirmed email is in it, Google Drive's "anyone at acme.com"), and
becomes a document's
access (`storage.document_access.DocumentAccess`) once prefixed with the connection's id,
so that two sites' principals never meet.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from knowledge.sources.connectors.base import FolderSpec
from storage.document_access import DocumentAccess

USER = "user"
GROUP = "group"
DOMAIN = "domain"


def user(account_id: str) -> str:
    """A grantee: one of the source's people, by its own id for them."""
    return f"{USER}:{account_id}"


def group(name: str) -> str:
    """A grantee: one of the source's groups, by name."""
    return f"{GROUP}:{name}"


def domain(name: str) -> str:
    """A grantee: everyone whose confirmed email is in this domain (`acme.com`)."""
    return f"{DOMAIN}:{name.lower()}"


def principal(connection_id: int, grantee: str) -> str:
    """A grantee of connection `connection_id`, as documents and readers carry it."""
    return f"{connection_id}:{grantee}"


def grantee_of(principal_text: str) -> tuple[int, str, str] | None:
    """(connection id, `user`, `group` or `domain`, id) of a principal; None for anything else."""
    connection, _, rest = principal_text.partition(":")
    kind, _, value = rest.partition(":")
    if not connection.isdigit() or kind not in (USER, GROUP, DOMAIN) or not value:
        return None
    return int(connection), kind, value


@dataclass(frozen=True)
class SourceAccess:
    """Who may read an item, as its source says: nobody in particular (`public`: anyone,
    even anonymously), clauses of grantees, or unknown (the source could not tell; nobody)."""

    clauses: tuple[frozenset[str], ...] = ()
    unknown: bool = False

    @classmethod
    def public(cls) -> SourceAccess:
        return cls()

    @classmethod
    def nobody(cls) -> SourceAccess:
        return cls(unknown=True)

    @classmethod
    def of(cls, clauses: Iterable[Iterable[str]]) -> SourceAccess:
        return cls(tuple(frozenset(c) for c in clauses))

    def document_access(self, connection_id: int) -> DocumentAccess:
        """The access of the item's document in Lore."""
        if self.unknown:
            return DocumentAccess.nobody()
        return DocumentAccess.restricted(
            *({principal(connection_id, g) for g in clause} for clause in self.clauses)
        )

    def groups(self) -> set[str]:
        return {g.partition(":")[2] for clause in self.clauses for g in clause if g.startswith(GROUP + ":")}


@dataclass(frozen=True)
class SourceUser:
    """One of the source's people: its id for them, their email if it tells, their name."""

    account_id: str
    email: str | None = None
    name: str = ""


@runtime_checkable
class AccessReader(Protocol):
    """The permission-sync and group-sync capabilities of a connector."""

    def item_access(
        self, folders: Sequence[FolderSpec], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[tuple[str, SourceAccess]]:
        """(item id, access) for every item under `folders`, without their content: what a
        permission sync reads; `options` are the attachment's (`ConnectorKind.check_options`:
        Google Drive's `link_sharing`). Raises `ConnectorError` when the source cannot say
        (the caller fails closed)."""

    async def group_members(self, name: str) -> list[SourceUser]:
        """Every member of the group, every page of them (`ConnectorError` if it can't)."""

    async def people(self, account_ids: Sequence[str]) -> list[SourceUser]:
        """The people with those ids, with their emails where the source gives them."""
