"""`lore shell`: talk to Lore in the terminal, through the same router as Slack.

Each line is a message from a local user in the local workspace. `/in #channel` moves to
a channel, `/dm` back to the DM, `/as NAME` switches user, `/quit` leaves. Paths in a
message (`@lore add ./notes to your memory`) are attached as files. Reads piped stdin too.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TextIO

from bot.app.audit import Origin, Surface, acting_from
from bot.app.conversations import enter_channel, enter_dm
from bot.app.local import files_under, local_user
from bot.app.services import Services
from bot.chat import messages
from bot.chat.commands import Question, near_misses
from bot.chat.router import Router
from bot.chat.surface import IncomingFile, Turn
from bot.shell.surface import ShellSurface
from storage.values import LOCAL_TENANT

MENTION = re.compile(r"^\s*@lore\b", re.I)
QUIET = "(Lore stayed quiet: in a help channel it answers only what it is sure of; say “@lore …” to ask it.)"
PATH = re.compile(r"(?<!\S)((?:~|\.{1,2})?/[^\s]*|\.{1,2})(?!\S)")
PROMPT = "you> "
ADDING = re.compile(r"^(?:@lore\s+)?(?:please\s+)?(add|remember|save|ingest)\b", re.I)
FILE_NAME = re.compile(r"(?<![\w/.:~-])([\w-][\w.-]*\.[A-Za-z0-9]{1,5})(?![\w/])")
URLISH = re.compile(r"^www\.|\.(?:com|org|net|io|dev|app|co|uk|de|fr|edu|gov|example)$", re.I)


class Shell:
    def __init__(self, services: Services, router: Router, out: TextIO = sys.stdout) -> None:
        self._services = services
        self._router = router
        self.surface = ShellSurface(out)
        self._user_name: str | None = None
        self._channel: str | None = None

    async def run(self, lines: AsyncIterator[str]) -> None:
        async for line in lines:
            if not await self.handle_line(line.strip()):
                break

    async def handle_line(self, line: str) -> bool:
        """Act on one line; False when the user asked to quit."""
        if not line:
            return True
        if line.startswith("/"):
            return await self._meta(line)
        with acting_from(Origin(Surface.SHELL, where=self._channel or "DM")):
            return await self._handle(line)

    async def _handle(self, line: str) -> bool:
        if await self._mistaken(line):
            return True
        turn = await self._turn(line)
        if self.surface.pending and line.lower() in ("yes", "y", "no", "n"):
            action, value = self.surface.pending
            self.surface.pending = None
            if line.lower().startswith("y"):
                await self._router.confirmed(turn, self.surface, action, value)
            else:
                await self.surface.say("Cancelled.")
            return True
        if self._unasked(turn, line):
            if not await self._router.unasked(turn, self.surface):
                self.surface.write(QUIET)
            return True
        await self._router.handle(turn, self.surface)
        return True

    def _unasked(self, turn: Turn, line: str) -> bool:
        """A question posted in a help channel without “@lore”, as to the channel: Lore
        answers it only when sure (`Router.unasked`). Commands are Lore's whatever the room."""
        return (
            turn.actor.conversation.help_channel
            and not MENTION.match(line)
            and isinstance(turn.command, Question)
        )

    async def _mistaken(self, line: str) -> bool:
        """Say so, rather than answer it as a question, when a line adds files none of which
        exist, or starts like a command but is none. True when it said so."""
        if self.surface.pending and line.lower() in ("yes", "y", "no", "n"):
            return False
        if ADDING.match(line):
            spelled = paths_in(line)
            missing, where = await asyncio.to_thread(_missing, spelled)
            if spelled and len(missing) == len(spelled):
                await self.surface.say(messages.no_such_path(missing, where))
                return True
            if spelled:
                return False
        closest = near_misses(line)
        if closest:
            await self.surface.say(messages.did_you_mean(line, closest))
            return True
        return False

    async def _meta(self, line: str) -> bool:
        command, _, argument = line.partition(" ")
        argument = argument.strip()
        if command in ("/quit", "/exit"):
            return False
        if command == "/in" and argument:
            self._channel = argument.lstrip("#")
            self.surface.write(f"(now in #{self._channel})")
        elif command == "/dm":
            self._channel = None
            self.surface.write("(now in your DM with Lore)")
        elif command == "/as" and argument:
            self._user_name = argument
            self.surface.write(f"(now speaking as {argument})")
        else:
            self.surface.write(
                "Shell commands: /in #channel, /dm, /as NAME, /quit. Anything else is a message to Lore."
            )
        return True

    async def _turn(self, line: str) -> Turn:
        user = await local_user(self._services, self._user_name)
        if self._channel:
            channel = await asyncio.to_thread(
                self._services.directory.ensure_channel,
                LOCAL_TENANT,
                self._channel,
                self._channel,
                is_private=False,
            )
            actor = await enter_channel(self._services, user, channel)
        else:
            actor = await enter_dm(self._services, user)
        files: list[IncomingFile] = []
        text = line
        if ADDING.match(line):
            files = await asyncio.to_thread(local_files, paths_in(line))
            if files:
                text = "add these files to your memory"
        return Turn(actor=actor, text=text, files=files, is_dm=self._channel is None)


def paths_in(line: str) -> list[str]:
    """The paths a line spells: `./notes`, `/tmp/a.md`, `~/x`, or a bare file name with an
    extension (`README.md`), never a web address."""
    found = PATH.findall(line) + [n for n in FILE_NAME.findall(line) if not URLISH.search(n)]
    return list(dict.fromkeys(found))


def _missing(spelled: Sequence[str]) -> tuple[list[str], str]:
    """The paths that are not there, and where they were looked for."""
    return [p for p in spelled if not Path(p).expanduser().exists()], str(Path.cwd())


def local_files(spelled: Sequence[str]) -> list[IncomingFile]:
    """Files at the paths a message spells (folders recursively); missing paths ignored."""
    existing = [p for p in (Path(s).expanduser() for s in spelled) if p.exists()]
    return [_incoming(path) for path in files_under(existing)]


def _incoming(path: Path) -> IncomingFile:
    async def fetch() -> bytes:
        return await asyncio.to_thread(path.read_bytes)

    size = path.stat().st_size
    return IncomingFile(id=str(path), name=path.name, mime_type=None, size=size, fetch=fetch)


async def stdin_lines(interactive: bool) -> AsyncIterator[str]:
    """Lines from stdin, read in a thread; prints a prompt when a person is typing."""
    while True:
        if interactive:
            sys.stdout.write(PROMPT)
            sys.stdout.flush()
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        yield line
