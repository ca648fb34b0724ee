"""CLI commands for the HTTP API: `lore serve`, and `lore api-key create | revoke | list`."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import typer

from bot.app.keys import ApiKeyRef, ApiKeys, open_keys
from bot.app.settings import Settings
from bot.cli.common import settings_or_exit
from bot.cli.tables import table
from storage.records import StorageError
from storage.values import LOCAL_TENANT

log = logging.getLogger(__name__)
DEFAULT_PORT = 8080


app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""


@app.command()
def serve(
    host: str = typer.Option("0.0.0.0", help="Interface to listen on."),  # noqa: S104
    port: int = typer.Option(None, help=f"Port (default $PORT or {DEFAULT_PORT}).", envvar="PORT"),
) -> None:
    """Serve the HTTP API (OpenAI-compatible chat over indexes, index and document management)."""
    from bot.app.logs import configure_logging

    settings = settings_or_exit()
    configure_logging("INFO")
    asyncio.run(serve_api(settings, host, port or DEFAULT_PORT))


keys_app = typer.Typer(help="API keys for the HTTP API.", no_args_is_help=True)
app.add_typer(keys_app, name="api-key")


@keys_app.command("create")
def create(
    name: str = typer.Option(..., "--name", "-n", help="A name to recognise the key by."),
    tenant: str = typer.Option(
        LOCAL_TENANT, "--tenant", "-t", help="Slack team id (T…), or `local` for the shell's workspace."
    ),
    user: str | None = typer.Option(
        None, "--user", "-u", help="Act as this user (Slack user id), who may see their personal index."
    ),
    audit: bool = typer.Option(
        False, "--audit", help="It may read the workspace's audit log (GET /v1/audit), for a SIEM."
    ),
) -> None:
    """Create a key; its secret is shown once and stored only as a hash."""
    with _keys(settings_or_exit()) as keys:
        issued = keys.create(tenant, name, user=user, reads_audit=audit)
    typer.echo(
        f"Created API key {issued.key.id} ({name}) for tenant {tenant}" + (f" as {user}" if user else "")
    )
    typer.echo(issued.secret)
    typer.secho("This is the only time the key is shown: store it now.", fg="yellow", err=True)


@keys_app.command("revoke")
def revoke(
    key: str = typer.Argument(..., help="The key's id or name."),
    tenant: str | None = typer.Option(None, "--tenant", "-t", help="Tenant, when a name is used in several."),
) -> None:
    """Revoke a key: requests with it are refused from now on."""
    with _keys(settings_or_exit()) as keys:
        revoked = keys.revoke(key, tenant_id=tenant)
    typer.echo(f"Revoked API key {revoked.id} ({revoked.name}) of tenant {revoked.tenant_id}")


@keys_app.command("list")
def list_keys(tenant: str | None = typer.Option(None, "--tenant", "-t")) -> None:
    """List keys (revoked ones too), never their secrets."""
    with _keys(settings_or_exit()) as keys:
        rows = keys.listing(tenant)
    if not rows:
        typer.echo("No API keys yet. Create one with `lore api-key create --name NAME`.")
        return
    columns = [">id", "tenant", "name", "key", "created", "last used", "state"]
    typer.echo(table(columns, [_row(row) for row in rows]))


async def serve_api(settings: Settings, host: str, port: int) -> None:
    """Run the API until SIGINT or SIGTERM."""
    from aiohttp import web

    from bot.app.audit import Origin, Surface, attribute_to

    attribute_to(Origin(Surface.LORE))  # a server: each request says where it comes from
    from bot.api import build_api
    from bot.api.state import API_STATE
    from bot.chat.runtime import open_runtime
    from bot.cli.mcp import mount_mcp
    from bot.cli.run import slack_signin
    from bot.slack.history import channel_syncs
    from bot.slack.memberships import attach
    from bot.web import install_console

    async with open_runtime(settings, more_syncs=channel_syncs, serving=True) as runtime:
        attach(runtime.services)
        web_app = build_api(runtime.services)
        install_console(web_app, runtime.services, slack_signin(settings, runtime.services))
        mount_mcp(web_app, runtime, web_app[API_STATE])
        runner = web.AppRunner(web_app)
        await runner.setup()
        await web.TCPSite(runner, host, port).start()
        log.info("Lore's HTTP API listens on http://%s:%d (described at /openapi.json)", host, port)
        typer.echo(
            f"Lore's HTTP API: http://{host}:{port} (OpenAPI at /openapi.json), MCP at /mcp. Ctrl-C stops it."
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()


@contextmanager
def _keys(settings: Settings) -> Iterator[ApiKeys]:
    try:
        with open_keys(settings) as keys:
            yield keys
    except StorageError as exc:
        typer.secho(f"lore: {exc}", fg="red", err=True)
        raise typer.Exit(1) from None


def _row(key: ApiKeyRef) -> tuple[object, ...]:
    state = "active" if key.active else f"revoked {_when(key.revoked_at)}"
    return (
        key.id,
        key.tenant_id,
        key.name,
        key.prefix + "…",
        _when(key.created_at),
        _when(key.last_used_at),
        state,
    )


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else "never"
