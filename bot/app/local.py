"""The local workspace the shell and the CLI act in: tenant `local`, the OS user."""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from bot.app.conversations import Actor, enter_dm
from bot.app.services import Services
from storage.access import Place
from storage.records import IndexRef, UserRef
from storage.values import LOCAL_TENANT

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


async def operator_place(services: Services, tenant: str = LOCAL_TENANT) -> Place:
    """Where the person at the command line acts from: a private place, as an admin who may
    manage connectors (they run Lore). Outside the local workspace, as the CLI's own user."""
    if tenant == LOCAL_TENANT:
        user = await local_user(services)
    else:
        user = await asyncio.to_thread(
            services.directory.ensure_user, tenant, "cli", "Lore CLI", is_admin=True
        )
    return Place(tenant, user.id, user_is_admin=True, connector_admin=True)


async def local_dm(services: Services, user_name: str | None = None) -> Actor:
    """The local user in their private conversation with Lore (personal index enabled)."""
    return await enter_dm(services, await local_user(services, user_name))


async def index_for_cli(services: Services, actor: Actor, name: str, *, create: bool) -> IndexRef:
    """The index called `name`; with `create`, a new shared index (enabled in the local DM,
    as chat does) if there is none."""
    if create:
        return (
            await services.actions.indexes.find_or_create(actor.place, name, conversation=actor.conversation)
        ).index
    return await services.actions.indexes.find(actor.place, name)


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
