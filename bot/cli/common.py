"""What every `lore` command needs: the settings (read once; a bad one ends in one line) and
the services, built for the command and always closed; optionally as the local user."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import typer

from bot.app.conversations import Actor
from bot.app.local import local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings, SettingsError, load_settings
from knowledge import KnowledgeError
from storage.records import StorageError

T = TypeVar("T")


def settings_or_exit() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        typer.secho(f"lore: invalid setting: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None


def with_services(settings: Settings, work: Callable[[Services], Awaitable[T]]) -> T:
    """Build the services, do the work, always close them. What Lore refuses on purpose
    (a `KnowledgeError`, a `StorageError`) ends as one line and exit 1; anything else reaches
    the boundary in `bot.cli.main`."""

    async def main() -> T:
        services = await asyncio.to_thread(build_services, settings)
        try:
            return await work(services)
        finally:
            await services.aclose()

    try:
        return asyncio.run(main())
    except (KnowledgeError, StorageError) as exc:
        fail(exc)


def fail(exc: Exception) -> NoReturn:
    """End the command with `exc` as one line."""
    typer.secho(f"lore: {sentence(str(exc))}", fg="red", err=True)
    raise typer.Exit(1) from None


def sentence(text: str) -> str:
    """The first line of an error's text, as a sentence."""
    line = (text.strip().splitlines() or [""])[0][:300]
    return line[:1].upper() + line[1:] if line else "no details"


def as_local_user(settings: Settings, work: Callable[[Services, Actor], Awaitable[T]]) -> T:
    """`with_services`, acting as the local user in their DM with Lore, after finishing what
    a crash left half done."""

    async def acting(services: Services) -> T:
        actor = await local_dm(services)
        indexes = await asyncio.to_thread(services.indexes.list_for_tenant, actor.place.tenant_id)
        await services.ingestor.repair({i.id: i for i in indexes})
        return await work(services, actor)

    return with_services(settings, acting)
