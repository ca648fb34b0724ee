"""Who may read a document, as its source says: the access a connected source gives each
document, the filter a search or a listing applies, and the one SQL rule behind both.

The index decides who may search it (`storage.access`); inside an index, a document a
connector brought in may be restricted further by its source. A document's access is
either **public** (whoever may read the index), **restricted** (clauses of principals: a
reader needs one principal of *every* clause: a Confluence page readable by the space's
`confluence-users` group *and*, by an ancestor's restriction, only by `finance`), or
**unknown** (a permission sync failed: nobody reads it until one succeeds).

Principals are the source's own users and groups, named per connection
(`7:user:5b10ac8d…`, `7:group:finance`), so a principal of one Confluence site never
matches another's. Documents added in Slack, by the CLI or the API are public: the index
decides, as before.

Stored in SQL as `document.access_clauses` (0 public, n clauses, -1 unknown) and one
`document_access` row per (document, clause, principal). A reader is an `AccessFilter`:
the principals they hold. A document is readable when it is public, or when the reader's
principals meet as many distinct clauses as it has (`readable_sql`): one indexed count per
restricted document, evaluated inside the keyword search's own query, so a page of
restricted hits never crowds out what the reader may see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import TextClause, bindparam, text

from storage.access import IndexKind

PUBLIC = 0
"""`document.access_clauses` of a document whoever may read its index may read."""
UNKNOWN = -1
"""`document.access_clauses` of a document nobody may read: its permission sync failed."""


@dataclass(frozen=True)
class DocumentAccess:
    """The access a source gives a document: no clauses (public), clauses of principals, or
    unknown. A reader needs one principal of every clause."""

    clauses: tuple[frozenset[str], ...] = ()
    unknown: bool = False

    @classmethod
    def public(cls) -> DocumentAccess:
        return cls()

    @classmethod
    def nobody(cls) -> DocumentAccess:
        """Unknown access: fail closed."""
        return cls(unknown=True)

    @classmethod
    def restricted(cls, *clauses: Iterable[str]) -> DocumentAccess:
        """Clauses of principals; a clause with no principal makes the document unreadable."""
        kept = tuple(frozenset(clause) for clause in clauses)
        return cls(unknown=True) if any(not c for c in kept) else cls(simplified(kept))

    @property
    def is_public(self) -> bool:
        return not self.unknown and not self.clauses

    @property
    def count(self) -> int:
        """What `document.access_clauses` stores."""
        return UNKNOWN if self.unknown else len(self.clauses)

    def also(self, clause: frozenset[str] | None) -> DocumentAccess:
        """This access with one more clause a reader must meet too (None: as it is)."""
        if clause is None or self.unknown:
            return self
        return DocumentAccess.restricted(*self.clauses, clause)

    def readable_by(self, principals: Iterable[str]) -> bool:
        held = set(principals)
        return not self.unknown and all(clause & held for clause in self.clauses)


def simplified(clauses: tuple[frozenset[str], ...]) -> tuple[frozenset[str], ...]:
    """The same rule with fewer clauses: duplicates go, and so does any clause that holds all
    of another's principals (meeting the smaller one meets it too). Sorted, so equal rules
    are stored alike."""
    unique = sorted(set(clauses), key=lambda c: (len(c), sorted(c)))
    kept: list[frozenset[str]] = []
    for clause in unique:
        if not any(smaller <= clause for smaller in kept):
            kept.append(clause)
    return tuple(kept)


SLACK = "slack"
RESTRICTED_TO = "restricted_to"
"""The option of a connector attachment that restricts what it brings to the members of Slack
channels and user groups (`channel:C…`, `usergroup:S…`), whatever its source says."""


def slack_principal(group_key: str) -> str:
    """The principal the members of a Slack channel or user group hold (`slack:channel:C…`)."""
    return f"{SLACK}:{group_key}"


def restriction(options: Mapping[str, object]) -> frozenset[str] | None:
    """The clause an attachment's restriction adds to each of its documents' access: one of
    its Slack groups' members (None: not restricted)."""
    groups = options.get(RESTRICTED_TO)
    if not isinstance(groups, list) or not groups:
        return None
    return frozenset(slack_principal(str(g)) for g in groups)


@dataclass(frozen=True)
class AccessFilter:
    """What a reader may read beyond the public documents: those whose every clause holds
    one of `principals`. No principals: public documents only (a channel's answer, an asker
    the source does not know, a service key)."""

    principals: frozenset[str] = frozenset()

    @property
    def public_only(self) -> bool:
        return not self.principals

    def allows(self, access: DocumentAccess) -> bool:
        return access.is_public or access.readable_by(self.principals)


PUBLIC_ONLY = AccessFilter()


def readable_condition(access: AccessFilter, document: str = "d") -> tuple[str, dict[str, list[str]]]:
    """The SQL condition that is true for the documents `access` may read, and its
    parameters (`access_principals`, to bind as an expanding parameter), where `document`
    is the name (or alias) of the `document` table in the query. The one place the rule is
    written: keyword search, the dense search's pre-filter, listings and counts use it."""
    if access.public_only:
        return f"{document}.access_clauses = {PUBLIC}", {}
    if not document.isidentifier():
        raise ValueError(f"not a table name: {document!r}")
    condition = (  # only the table's name is formatted in, an identifier; principals are bound
        f"({document}.access_clauses = {PUBLIC} OR {document}.access_clauses = "  # noqa: S608
        "(SELECT count(DISTINCT a.clause) FROM document_access AS a "
        f"WHERE a.document_id = {document}.id AND a.principal IN :access_principals))"
    )
    return condition, {"access_principals": sorted(access.principals)}


def readable_sql(access: AccessFilter, document: str = "document", *, negate: bool = False) -> TextClause:
    """`readable_condition` as a clause for a SQLModel query's `where` (with `negate`, true
    for the documents `access` may not read)."""
    condition, params = readable_condition(access, document)
    clause = text(f"NOT ({condition})" if negate else condition)
    if params:
        clause = clause.bindparams(
            bindparam("access_principals", value=params["access_principals"], expanding=True)
        )
    return clause


def access_rows(document_id: int, access: DocumentAccess) -> list[Mapping[str, object]]:
    """The `document_access` rows of a document's access."""
    return [
        {"document_id": document_id, "clause": n, "principal": principal}
        for n, clause in enumerate(access.clauses)
        for principal in sorted(clause)
    ]


def restricted_readers(kind: IndexKind) -> str:
    """Who may read, in an index of this kind, a document its source restricts: the docs'
    permission table shows it beside the actions (`python -m bot.cli.docs`)."""
    who = "its owner" if kind == IndexKind.PERSONAL else "whoever may search it (never a partner)"
    return (
        f"{who}, in an answer only they see (DM, /lore, App Home, CLI, their API key), if the source "
        "lets them; in an answer posted in a channel, nobody"
    )
