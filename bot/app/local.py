"""The local workspace the shell and the CLI act in: tenant `local`, the OS user."""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from bot.app.conversations import Actor, enter_dm
from bot.app.services import Services
from storage.records import IndexRef, UserRef
from storage.repositories.directory import LOCAL_TENANT

SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".lore"}


def local_user_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "local-user"


async def local_user(services: Services, user_name: str | None = None) -> UserRef:
    """The local user (an admin of the local workspace)."""
    name = user_name or local_user_name()
    return await asyncio.to_thread(services.directory.ensure_user, LOCAL_TENANT, name, name, is_admin=True)


async def local_dm(services: Services, user_name: str | None = None) -> Actor:
    """The local user in their private conversation with Lore (personal index enabled)."""
    return await enter_dm(services, await local_user(services, user_name))


async def index_for_cli(services: Services, actor: Actor, name: str, *, create: bool) -> IndexRef:
    """The index called `name`; with `create`, a new shared index if there is none."""
    from knowledge.catalog import IndexNotFound
    from storage.access import Action

    try:
        return await services.catalog.find(actor.place, name, Action.SEARCH)
    except IndexNotFound:
        if not create:
            raise
        return await services.catalog.create_shared(actor.place, name)


def files_under(
    paths: Iterable[Path], *, on_missing: Callable[[Path], None] = lambda _: None
) -> Iterator[Path]:
    """The files at or under `paths`, sorted per folder, without hidden files and tool folders
    (`.git`, `.venv`, …); `on_missing` hears of each path that does not exist."""
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if (
                    child.is_file()
                    and not (set(child.relative_to(path).parts) & SKIPPED_DIRS)
                    and not child.name.startswith(".")
                ):
                    yield child
        elif path.is_file():
            yield path
        else:
            on_missing(path)
