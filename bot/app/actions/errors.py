"""Refusals of the use cases, each a sentence a user can act on."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge import KnowledgeError, NotAllowed, document_names
from storage.access import Action
from storage.records import DocumentRef, IndexRef
from storage.values import Scope

CONNECTORS = (
    "Only workspace admins (and the people in LORE_CONNECTOR_ADMINS) can connect sources, choose "
    "what they index, or refresh, stop and forget what they bring."
)
SETTINGS_LOCKED = "An admin locked this channel's settings; ask a workspace admin to change them."
ANSWER_SETTINGS = "Only workspace admins change how Lore answers in a channel; in your DM with Lore, you can."
PARTNERS = "People from other organisations can ask questions here, but not change Lore's settings or memory."


def refused(action: Action, index: IndexRef) -> NotAllowed:
    """Why `action` on `index` is refused here."""
    name = index.name
    if action == Action.DELETE:
        if index.scope == Scope.SHARED:
            return NotAllowed(f"only the person who created the {name} index (or an admin) can delete it")
        return NotAllowed(f"the {name} index can be deleted only by a workspace admin, from its channel")
    if index.scope == Scope.CHANNEL and action in (Action.ADD, Action.FORGET, Action.MANAGE_SOURCES):
        return NotAllowed(f"the {name} index belongs to its channel: change it from there")
    if action in (Action.FORGET, Action.MANAGE_SOURCES):
        return NotAllowed(
            f"only the person who created the {name} index, whoever added that, or an admin can "
            + ("remove it" if action == Action.FORGET else "change its sources")
        )
    return NotAllowed(f"the {name} index can't be used from here")


AMBIGUOUS_SHOWN = 10


class Ambiguous(KnowledgeError):
    """A reference to forget that names several documents: none is forgotten, and the
    message names them apart with their ids, which name one each."""

    def __init__(self, reference: str, index: IndexRef, documents: Sequence[DocumentRef]) -> None:
        first = documents[:AMBIGUOUS_SHOWN]
        names = document_names(first)
        more = len(documents) - len(first)
        shown = ", ".join(f"{name} (id {d.id})" for name, d in zip(names, first, strict=True)) + (
            f" and {more} more" if more > 0 else ""
        )
        super().__init__(
            f"“{reference.strip()}” matches {len(documents)} documents in the {index.name} index, so I "
            f"forgot none of them: {shown}. Say which one by its id, like “forget {documents[0].id}”"
        )
