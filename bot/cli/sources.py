"""CLI commands for connector sources (Confluence): `lore source add confluence`,
`lore source list`, `lore source spaces SOURCE`, `lore source attach SOURCE --index NAME
--space KEY [--page ID]`, `lore source remove SOURCE`.

Secrets never come from the command line, where shell history and `ps` would keep them:
`--token-env VAR` / `--pat-env VAR` name an environment variable that holds them, and
without one the token is asked for at a prompt that does not echo.
"""

from __future__ import annotations

import asyncio
import os
from typing import TypeVar

import typer

from bot.app.actions.sources import label as source_label
from bot.app.local import operator_place
from bot.app.services import Services
from bot.chat import messages
from bot.chat.render import age, plain
from bot.cli.common import settings_or_exit, with_services
from bot.cli.jobs import follow_with_bar
from knowledge.sources.connectors import Credentials, FolderSpec
from storage.access import Place
from storage.records import ConnectionRef
from storage.values import LOCAL_TENANT

T = TypeVar("T")
TENANT_HELP = "Workspace: a Slack team id (T…), or `local` for the shell and the CLI."


app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""

source_app = typer.Typer(
    help="Connected doc sources (Confluence): add, list, spaces, attach, remove.", no_args_is_help=True
)
app.add_typer(source_app, name="source")


@source_app.command("add")
def add(
    kind: str = typer.Argument(..., help="What to connect: confluence."),
    url: str = typer.Option(..., "--url", help="Confluence's address, e.g. https://acme.atlassian.net/wiki."),
    email: str | None = typer.Option(None, "--email", help="Cloud: the Atlassian account's email."),
    token_env: str | None = typer.Option(
        None,
        "--token-env",
        help="Cloud: the environment variable holding the API token (never the token itself).",
    ),
    pat_env: str | None = typer.Option(
        None,
        "--pat-env",
        help="Data Center: the environment variable holding a personal access token (never the token itself).",
    ),
    name: str | None = typer.Option(None, "--name", help="What to call it (default: the host)."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Connect Confluence: the credentials are checked against it, then kept encrypted
    (LORE_SECRET_KEY). Without --token-env/--pat-env the token is asked for, unechoed."""
    from knowledge.sources.connectors.registry import CONNECTORS

    if kind.lower() not in CONNECTORS:
        raise typer.BadParameter(f"Lore can connect {', '.join(CONNECTORS)}, not {kind}", param_hint="KIND")
    credentials = _credentials(email, token_env, pat_env)

    async def work(services: Services) -> str:
        place = await _place(services, tenant)
        done = await services.actions.connectors.connect(place, url, credentials, name=name)
        connection = done.connection
        return plain(
            messages.connected(
                connection.name, done.account, connection.credentials_hint, [f.key for f in done.spaces]
            )
        )

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("list")
def list_sources(tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP)) -> None:
    """Connected sources, credentials masked, with the indexes they fill."""

    async def work(services: Services) -> str:
        found = await services.connections.for_tenant(tenant)
        if not found:
            return "No sources connected yet. Connect one with `lore source add confluence --url URL …`."
        return "\n".join([await asyncio.to_thread(_describe, services, c) for c in found])

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("spaces")
def spaces(
    source: str = typer.Argument(..., help="The source: its id, name or host."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """The spaces the connected account can read (what `attach --space` takes)."""

    async def work(services: Services) -> str:
        connection = await services.connections.find(tenant, source)
        folders = await services.connections.folders(connection)
        return "\n".join(f"{f.key:<12} {f.name}" for f in folders) or "The account can't read any space."

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("attach")
def attach(
    source: str = typer.Argument(..., help="The source: its id, name or host."),
    index: str = typer.Option(
        ..., "--index", "-i", help="The index to fill (a shared one is created if new)."
    ),
    space: list[str] = typer.Option(..., "--space", "-s", help="A space key (repeatable)."),
    page: str | None = typer.Option(None, "--page", help="Only this page and its descendants (one --space)."),
    schedule: str = typer.Option(
        "daily", "--schedule", help="hourly, daily, weekly, `every N hours`, never."
    ),
    follow: bool = typer.Option(True, "--follow/--no-follow", help="Run the sync here with a progress bar."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Attach spaces (or a page tree) to an index and start syncing them."""
    folders = _folders(space, page)

    async def work(services: Services) -> str:
        from knowledge.sources.jobs import Schedule

        every = Schedule.parse(schedule)
        if every is None:
            raise typer.BadParameter(f"“{schedule}” is not a schedule", param_hint="--schedule")
        place = await _place(services, tenant)
        connection = await services.connections.find(tenant, source)
        done = await services.actions.connectors.attach(place, connection, index, folders, schedule=every)
        target, job = done.index, done.job
        label = source_label(done.source)
        if not follow:
            return f"job {job.id} queued: {label} into {target.name}; follow it with `lore jobs --follow {job.id}`"
        from bot.app.workers import running_jobs
        from bot.slack.history import channel_syncs

        async with running_jobs(services, schedule=False, more=channel_syncs):
            job = await follow_with_bar(services.jobs, job, label)
        return plain(messages.job_summary(label, job.state.value, job.counters, job.seconds, job.error))

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("remove")
def remove(
    source: str = typer.Argument(..., help="The source: its id, name or host."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Disconnect a source: detach it from every index (its documents go) and forget its
    credentials."""

    async def work(services: Services) -> str:
        connection = await services.connections.find(tenant, source)
        removed = await services.actions.connectors.disconnect(await _place(services, tenant), connection)
        return f"Disconnected {connection.name}: removed {messages.plural(removed, 'document')} and its credentials."

    typer.echo(with_services(settings_or_exit(), work))


def _credentials(email: str | None, token_env: str | None, pat_env: str | None) -> Credentials:
    """Credentials from the environment variable named, or from an unechoed prompt."""
    if pat_env and (email or token_env):
        raise typer.BadParameter("use --pat-env alone (Data Center), or --email with --token-env (Cloud)")
    if token_env and not email:
        raise typer.BadParameter("--token-env goes with --email (Cloud); for Data Center use --pat-env")
    variable = pat_env or token_env
    if variable:
        token = os.environ.get(variable, "")  # named by the user at the entry point: not a setting
        if not token.strip():
            raise typer.BadParameter(f"the environment variable {variable} is empty or unset")
    else:
        token = typer.prompt("API token" if email else "Personal access token", hide_input=True)
    try:
        return Credentials(token.strip(), email)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _folders(spaces: list[str], page: str | None) -> list[FolderSpec]:
    if page and len(spaces) != 1:
        raise typer.BadParameter("--page goes with exactly one --space", param_hint="--page")
    try:
        return [FolderSpec.parse(f"{key}/{page}" if page else key) for key in spaces]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--space/--page") from None


async def _place(services: Services, tenant: str) -> Place:
    """The person acting: the local user, or the CLI's admin user of another workspace."""
    return await operator_place(services, tenant)


def _describe(services: Services, connection: ConnectionRef) -> str:
    lines = [
        f"{connection.id:>4}  {connection.kind:<10} {connection.name:<24} {connection.base_url}",
        f"      credentials: {connection.credentials_hint}",
    ]
    groups = services.source_access.groups_state(connection.id)
    for attached in services.connections.repository.attachments(connection.id):
        index = services.indexes.get(attached.index_id)
        synced = f"synced {age(attached.sync_cursor)}" if attached.sync_cursor else "not synced yet"
        lines.append(f"      → {index.name}: {', '.join(attached.folders)} ({attached.schedule}, {synced})")
        permissions = services.source_access.permissions_state(attached.id)
        access = messages.permissions_line(
            services.source_access.restricted_count(attached.id),
            age(permissions.synced_at) if permissions.synced_at else None,
            permissions.error,
            age(groups.synced_at) if groups.synced_at else None,
            groups.error,
        )
        lines.append(f"        {plain(access)}")
    return "\n".join(lines)
