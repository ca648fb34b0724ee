"""CLI commands for document-level access from connected sources: `lore access explain
--user U… DOCUMENT` (may they read it, and why; never its text), `lore access refresh`
(permission and group syncs now), `lore access status`, and `lore access grant --key NAME
PRINCIPAL` (what a service key may read beyond public documents; `--revoke` takes it back).
"""

from __future__ import annotations

import asyncio

import typer

from bot.app.local import operator_place
from bot.app.services import Services
from bot.chat.render import permissions_refreshed, plain, render_access_status, render_explanation
from bot.cli.common import settings_or_exit, with_services
from knowledge.errors import KnowledgeError
from storage.values import LOCAL_TENANT

TENANT_HELP = "Workspace: a Slack team id (T…), or `local` for the shell and the CLI."

app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""

access_app = typer.Typer(
    help="Who may read what, as connected sources say: explain, refresh, status, grant.",
    no_args_is_help=True,
)
app.add_typer(access_app, name="access")


@access_app.command("explain")
def explain(
    document: str = typer.Argument(..., help="The document: its id, name or URL."),
    user: str = typer.Option(..., "--user", "-u", help="The Slack user id (U…) to explain for."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Whether a user may read a document, and why (its source's permissions, their accounts
    and groups there), without showing its text."""

    async def work(services: Services) -> str:
        place = await operator_place(services, tenant)
        return plain(render_explanation(await services.actions.access.explain(place, user, document)))

    typer.echo(with_services(settings_or_exit(), work))


@access_app.command("refresh")
def refresh(tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP)) -> None:
    """Sync now who may read each document of every connected source, and who is in the
    groups their permissions name (what `refresh permissions` does in chat)."""

    async def work(services: Services) -> str:
        place = await operator_place(services, tenant)
        return plain(permissions_refreshed(await services.actions.access.refresh(place)))

    typer.echo(with_services(settings_or_exit(), work))


@access_app.command("status")
def status(tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP)) -> None:
    """When each connected source's permissions and groups were last synced, and how many
    of its documents are restricted."""

    async def work(services: Services) -> str:
        return plain(render_access_status(await services.actions.access.status(tenant)))

    typer.echo(with_services(settings_or_exit(), work))


@access_app.command("grant")
def grant(
    principal: str = typer.Argument(
        ..., help="A source's principal, like 3:group:finance (3: the source's id)."
    ),
    key: str = typer.Option(..., "--key", "-k", help="The API key (id or name) whose reads it widens."),
    revoke: bool = typer.Option(False, "--revoke", help="Take the grant back."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Let an API key read what a source's group (or user) may read. A service key reads
    public documents only until an admin grants it more; a key made for a user reads what
    that user may."""

    async def work(services: Services) -> str:
        from bot.app.keys import ApiKeys

        keys = ApiKeys(services.db)
        found = [k for k in keys.listing(tenant) if key in (str(k.id), k.name) and k.active]
        if len(found) != 1:
            raise KnowledgeError(
                f"there is no single active API key “{key}” in {tenant}; see `lore api-key list`"
            )
        user_id = await keys.user_id(found[0])
        user = await asyncio.to_thread(services.directory.user, user_id)
        place = await operator_place(services, tenant)
        changed = await services.actions.access.grant(place, user, principal, revoke=revoke)
        verb = "Revoked" if revoke else "Granted"
        if not changed:
            return f"Nothing to do: API key {found[0].name} {'did not hold' if revoke else 'already holds'} {principal}."
        return f"{verb} {principal} {'from' if revoke else 'to'} API key {found[0].name}."

    typer.echo(with_services(settings_or_exit(), work))
