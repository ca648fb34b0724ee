"""Chat commands about a channel's history: “learn this channel” (read it into the channel's
own index, with live progress in the thread) and “forget this channel's history”. The use
cases are `bot.app.actions.threads`; this renders them."""

from __future__ import annotations

from bot.app.actions.threads import learned_label
from bot.app.services import Services
from bot.chat import messages
from bot.chat.sources import SiteCommands
from bot.chat.surface import Surface, Turn


class HistoryCommands:
    def __init__(self, services: Services, sites: SiteCommands) -> None:
        self._threads = services.actions.threads
        self._sites = sites

    async def learn(self, turn: Turn, surface: Surface) -> None:
        attached = await self._threads.learn(turn.actor)
        label = learned_label(attached.source)
        if attached.already_running:
            await surface.say(messages.job_already_running(label))
            return
        await surface.say(messages.learning(label, attached.index.name))
        await self._sites.follow(
            attached.job, label, surface, line=messages.reading_history, summary=messages.history_summary
        )

    async def forget(self, turn: Turn, surface: Surface) -> None:
        forgotten = await self._threads.forget_history(turn.actor)
        if forgotten is None:
            await surface.say(messages.NOT_LEARNED)
            return
        source, removed = forgotten
        await surface.say(messages.history_forgotten(learned_label(source), removed))
