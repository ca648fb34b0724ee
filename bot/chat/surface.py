"""What the router needs from wherever a message came from (a Slack thread, the shell)."""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from bot.app.actions import MembersOf, no_groups
from bot.app.actions.threads import ThreadText
from bot.app.conversations import Actor
from bot.chat.commands import Command, parse
from knowledge import Answer, Delta, Message
from storage.records import ChannelRef


class Confirmation(enum.StrEnum):
    """What a yes/no question asks to confirm (its value rides on the buttons)."""

    DELETE_INDEX = "delete_index"


@dataclass(frozen=True)
class IncomingFile:
    """A file attached to a message; `fetch` downloads it (raising `DownloadError`)."""

    id: str
    name: str
    mime_type: str | None
    size: int | None
    fetch: Callable[[], Awaitable[bytes]]


class DownloadError(Exception):
    """A file could not be downloaded; the message is fit to show the user."""


@dataclass(frozen=True)
class ThreadRead:
    """The thread a message is in, read when a command needs it: its text and its files."""

    text: ThreadText
    files: Sequence[IncomingFile] = ()


ReadThread = Callable[[], Awaitable[ThreadRead]]
"""Reads the thread (raising a `KnowledgeError` that says why it could not)."""


@dataclass(frozen=True)
class Offers:
    """What an answer offers besides feedback, from what the conversation has: with experts,
    "Verify" (for them) on an answer, and "Ask an expert" when Lore is not sure."""

    experts: bool = False

    def verify(self, answer: Answer) -> bool:
        return self.experts and not answer.abstained and answer.verified is None

    def escalate(self, answer: Answer) -> bool:
        return self.experts and answer.verified is None and (answer.abstained or answer.hedged)


AnsweredByPeople = Callable[[], Awaitable[bool]]
"""Whether people have begun answering the message in its thread (asked just before Lore
would answer unasked)."""


async def nobody_yet() -> bool:
    return False


@dataclass(frozen=True)
class Turn:
    """One message to Lore: who, where, what they wrote, their files, the thread so far."""

    actor: Actor
    text: str
    files: Sequence[IncomingFile] = ()
    history: Sequence[Message] = ()
    is_dm: bool = False
    thread_files: Sequence[IncomingFile] = field(default=())
    """Files of the thread's parent message, used when this message has none."""
    thread: ReadThread | None = None
    """Reads the thread this message is a reply in (None outside a thread, or in the shell)."""
    viewing: ChannelRef | None = None
    """The channel the person is looking at while they ask in a DM (Slack's agent view):
    its index is searched too, when they may search it from there."""
    thread_id: str | None = None
    """The thread Lore replies in (Slack's thread ts), kept with the answer."""
    answered_by_people: AnsweredByPeople = nobody_yet
    """Whether people have begun answering this message already."""
    members_of: MembersOf = no_groups
    """The members of a user group (experts may be named by group)."""
    private: bool = False
    """Only the asker sees the replies (`/lore`), wherever they ask from: an answer may use
    what the asker may read in connected sources, as in a DM."""

    @cached_property
    def command(self) -> Command:
        """What the message asks for (parsed once, whoever asks)."""
        return parse(self.text)


class Surface(Protocol):
    async def working(self) -> None:
        """Show, within a second, that work has started."""

    async def say(self, text: str) -> None:
        """A plain reply in the thread, for everyone there."""

    async def tell(self, text: str, *, note: str | None = None) -> None:
        """A reply only the asker sees: listings, errors and refusals (where everything is
        private already, as in a DM or the shell, it is simply said). `note` is a one-line
        public sign for the thread, where others wait for something (a failed question)."""

    async def answer(
        self,
        events: AsyncIterator[Delta | Answer],
        answer_id: Callable[[Answer], Awaitable[int]],
        offers: Offers = Offers(),
    ) -> Answer | None:
        """Render (streaming where possible) an answer at a glance, with "Show more" for the
        rest; `answer_id` records it and gives the id its buttons carry; `offers` says which
        buttons besides feedback it carries."""

    async def confirm(self, text: str, action: Confirmation, value: str) -> None:
        """Ask a yes/no question whose yes calls the router's `confirmed(action, value)`."""

    async def progress(self, text: str) -> Callable[[str], Awaitable[None]]:
        """Post a status line; the returned function replaces it in place."""

    async def offer_form(self, text: str, form: str) -> bool:
        """Post `text` with a button that opens the private form `form` (a Slack modal, for
        credentials that must not be typed into a conversation); False where there are no
        forms (the shell), so the caller explains another way."""

    async def not_sure(self, text: str, answer_id: int | None) -> None:
        """Tell the asker alone that Lore is not sure enough to answer here, with "Ask an
        expert" for the answer `answer_id` when there is one to escalate."""


def history_from(pairs: Sequence[tuple[str, str]]) -> list[Message]:
    """Chat messages from (role, text) pairs, empty texts dropped."""
    return [{"role": role, "content": text} for role, text in pairs if text.strip()]
