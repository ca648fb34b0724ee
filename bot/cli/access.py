"""CLI commands for document-level access from connected sources: `lore access explain
--user U… DOCUMENT` (may they read it, and why; never its text), `lore access refresh`
(permission and group syncs now), `lore access status`, and `lore access grant --key NAME
PRINCIPAL` (what a service key may read beyond public documents) or `--user U… PRINCIPAL`
(a person given a source's user or group); `--revoke` takes it back. `lore access map U…
octocat` says who a Slack user is in a connected source (a GitHub login, an Atlassian account
id), `unmap` takes it back, `mappings` lists them.
"""

from __future__ import annotations

import asyncio

import typer

from bot.app.local import operator_place
from bot.app.services import Services
from bot.chat.render import (
    permissions_refreshed,
    plain,
    render_access_status,
    render_explanation,
    render_mapped,
    render_mappings,
    render_restricted,
    render_unmapped,
)
from bot.cli.common import settings_or_exit, with_services
from knowledge import KnowledgeError
from storage.values import LOCAL_TENANT

TENANT_HELP = "Workspace: a Slack team id (T…), or `local` for the shell and the CLI."

app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""

access_app = typer.Typer(
    help="Who may read what, as connected sources say: explain, refresh, status, map, grant.",
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
        from bot.slack.memberships import attach

        place = await operator_place(services, tenant)
        return plain(permissions_refreshed(await attach(services).actions.access.refresh(place)))

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
        ..., help="A source's principal, like 3:group:finance or 3:user:octocat (3: the source's id)."
    ),
    key: str | None = typer.Option(
        None, "--key", "-k", help="The API key (id or name) whose reads it widens."
    ),
    user: str | None = typer.Option(
        None,
        "--user",
        "-u",
        help="The person (Slack user id U…; in the local workspace, the OS user name) it maps to "
        "that source user (and their groups) or gives that group.",
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Take the grant back."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Let an API key, or a person, read what a source's group (or user) may read. A service
    key reads public documents only until an admin grants it more; a key made for a user
    reads what that user may. Granting a person a source's user maps them to it (for people
    the source gives no confirmed email: a GitHub login, say)."""
    if (key is None) == (user is None):
        raise typer.BadParameter("say whom it is for: --key NAME or --user U…")

    async def work(services: Services) -> str:
        from bot.app.keys import ApiKeys

        place = await operator_place(services, tenant)
        if user is not None:
            person = await asyncio.to_thread(services.directory.ensure_user, tenant, user)
            whom = f"{user}"
        else:
            keys = ApiKeys(services.db)
            found = [k for k in keys.listing(tenant) if key in (str(k.id), k.name) and k.active]
            if len(found) != 1:
                raise KnowledgeError(
                    f"there is no single active API key “{key}” in {tenant}; see `lore api-key list`"
                )
            person = await asyncio.to_thread(services.directory.user, await keys.user_id(found[0]))
            whom = f"API key {found[0].name}"
        changed = await services.actions.access.grant(place, person, principal, revoke=revoke)
        verb = "Revoked" if revoke else "Granted"
        if not changed:
            return f"Nothing to do: {whom} {'did not hold' if revoke else 'already holds'} {principal}."
        return f"{verb} {principal} {'from' if revoke else 'to'} {whom}."

    typer.echo(with_services(settings_or_exit(), work))


SOURCE_HELP = "The connected source (its id, name, host or kind, as `lore source list` shows); the only one that knows people when omitted."


@access_app.command("map")
def map_account(
    user: str = typer.Argument(..., help="The Slack user id (U…; in the local workspace, the OS user name)."),
    account: str = typer.Argument(
        ..., help="Their account in the source: a GitHub login, an Atlassian account id."
    ),
    source: str | None = typer.Option(None, "--source", "-s", help=SOURCE_HELP),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Say who a Slack user is in a connected source that syncs permissions (for people it
    gives no confirmed email): they read in private what that account may, from their next
    question, without a re-sync. Replaces their earlier mapping to that source."""

    async def work(services: Services) -> str:
        place = await operator_place(services, tenant)
        mapping, changed = await services.actions.access.map(place, user, account, source)
        return plain(render_mapped(mapping, changed=changed))

    typer.echo(with_services(settings_or_exit(), work))


@access_app.command("unmap")
def unmap_account(
    user: str = typer.Argument(..., help="The Slack user id (U…; in the local workspace, the OS user name)."),
    source: str | None = typer.Option(
        None, "--source", "-s", help="The connected source; every source when omitted."
    ),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Take back a Slack user's mapping to an account of a connected source."""

    async def work(services: Services) -> str:
        place = await operator_place(services, tenant)
        return plain(render_unmapped(user, await services.actions.access.unmap(place, user, source)))

    typer.echo(with_services(settings_or_exit(), work))


@access_app.command("mappings")
def list_mappings(tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP)) -> None:
    """Everyone mapped to an account of a connected source."""

    async def work(services: Services) -> str:
        place = await operator_place(services, tenant)
        return plain(render_mappings(await services.actions.access.mappings(place)))

    typer.echo(with_services(settings_or_exit(), work))


@access_app.command("restrict")
def restrict(
    source: str = typer.Argument(
        ...,
        help="The connector attachment: its kind (notion), connection name or host, or a folder it indexes.",
    ),
    channel: list[str] = typer.Option([], "--channel", "-c", help="A Slack channel id (C…); repeatable."),
    usergroup: list[str] = typer.Option(
        [], "--usergroup", "-g", help="A Slack user group id (S…); repeatable."
    ),
    index: str | None = typer.Option(
        None, "--index", "-i", help="The index it is attached to, when several."
    ),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Let only the members of Slack channels or user groups read what a connector attachment
    brings (Notion says nobody's permissions): in private, and in those channels. Members are
    read from Slack now and on the permission sync's schedule; when Slack won't say, nobody
    reads through that group."""
    groups = [f"channel:{c}" for c in channel] + [f"usergroup:{g}" for g in usergroup]
    if not groups:
        raise typer.BadParameter(
            "say whom: --channel C… or --usergroup S… (`lore access unrestrict` lifts it)"
        )
    typer.echo(_restrict(source, index, groups, tenant))


@access_app.command("unrestrict")
def unrestrict(
    source: str = typer.Argument(..., help="The connector attachment, as for `lore access restrict`."),
    index: str | None = typer.Option(
        None, "--index", "-i", help="The index it is attached to, when several."
    ),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Lift a connector attachment's restriction to Slack channels or user groups."""
    typer.echo(_restrict(source, index, [], tenant))


def _restrict(source: str, index: str | None, groups: list[str], tenant: str) -> str:
    async def work(services: Services) -> str:
        from bot.slack.memberships import attach

        place = await operator_place(services, tenant)
        done = await attach(services).actions.restrictions.restrict(place, source, index, groups)
        return plain(render_restricted(done))

    return with_services(settings_or_exit(), work)
