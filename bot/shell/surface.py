"""The shell's surface: replies printed to the terminal, a pending yes/no remembered."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TextIO

from bot.chat.render import plain, render_answer
from bot.chat.surface import Confirmation, Offers
from knowledge import Answer, Delta


class ShellSurface:
    """Prints replies; remembers a pending yes/no question."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self.pending: tuple[Confirmation, str] | None = None

    def write(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    async def working(self) -> None:
        self.write("lore> …")

    async def say(self, text: str) -> None:
        self.write(f"lore> {plain(text)}")

    async def tell(self, text: str, *, note: str | None = None) -> None:
        await self.say(text)  # a terminal has one reader

    async def confirm(self, text: str, action: Confirmation, value: str) -> None:
        self.pending = (action, value)
        self.write(f"lore> {plain(text)} (yes/no)")

    async def progress(self, text: str) -> Callable[[str], Awaitable[None]]:
        """In a terminal the line is printed again when it changes."""
        shown = [text]
        await self.say(text)

        async def update(new_text: str) -> None:
            if new_text != shown[0]:
                shown[0] = new_text
                await self.say(new_text)

        return update

    async def offer_form(self, text: str, form: str) -> bool:
        return False  # a terminal has no private form; the CLI reads secrets from the environment

    async def not_sure(self, text: str, answer_id: int | None) -> None:
        await self.say(text)

    async def answer(
        self,
        events: AsyncIterator[Delta | Answer],
        answer_id: Callable[[Answer], Awaitable[int]],
        offers: Offers = Offers(),
    ) -> Answer | None:
        """The whole answer (a terminal has room), a verified answer it matched first."""
        streamed = False
        final: Answer | None = None
        async for event in events:
            if isinstance(event, Delta):
                if not streamed:
                    self._out.write("lore> ")
                    streamed = True
                self._out.write(event.text)
                self._out.flush()
            else:
                final = event
        if final is None:
            return None
        await answer_id(final)
        if streamed:
            self.write("")
        self.write("lore> " + render_answer(final))
        return final
