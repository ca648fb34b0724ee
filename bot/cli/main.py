"""The `lore` command: a thin entry point over the same functions the bot uses.

Settings are read once here and passed down; errors end as one clear line, never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import sys

import typer

from bot.app.audit import Origin, Surface, acting_from
from bot.app.local import local_user_name
from bot.app.logs import configure_logging
from bot.app.settings import Settings
from bot.cli.common import settings_or_exit
from knowledge import KnowledgeError
from storage.records import StorageError

log = logging.getLogger(__name__)

app = typer.Typer(
    help="Lore: a team's shared memory, in Slack and in your shell.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="The SQL database.", no_args_is_help=True)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply database migrations (also done automatically at start)."""
    from storage.db import open_database
    from storage.migrations_runner import current_revision

    settings = settings_or_exit()
    settings.lore_home.mkdir(parents=True, exist_ok=True)
    db = open_database(settings.effective_database_url)
    typer.echo(f"database at schema {current_revision(db.engine)}")
    db.dispose()


@db_app.command("rebind")
def db_rebind() -> None:
    """After moving the database (dump and restore elsewhere): make this deployment's vectors
    on the Chroma server this database's. Only when the old database is gone for good."""
    from bot.app.services import build_vector_store
    from storage.db import open_database
    from storage.deployment import database_identity, deployment

    settings = settings_or_exit()
    db = open_database(settings.effective_database_url)
    try:
        found = deployment(db)
        build_vector_store(settings, found.id).rebind(database_identity(db))
        typer.echo(f"deployment {found.id}: its vectors are this database's now")
    finally:
        db.dispose()


@db_app.command("fork")
def db_fork() -> None:
    """For a restored copy that is to run beside its original: give it a deployment of its
    own and copy its indexes' vectors into it (the original's are left as they are)."""
    from bot.app.services import build_vector_store
    from storage.db import open_database
    from storage.deployment import deployment, fork

    settings = settings_or_exit()
    db = open_database(settings.effective_database_url)
    try:
        old = deployment(db).id
        new, copied = fork(db, build_vector_store(settings, old))
        typer.echo(f"deployment {old} is now {new} in this database: {copied} vectors copied")
    finally:
        db.dispose()


@app.command()
def doctor() -> None:
    """Show the effective configuration and check every component."""
    from bot.cli.doctor import format_report, run_checks

    settings = settings_or_exit()
    settings.lore_home.mkdir(parents=True, exist_ok=True)
    checks = asyncio.run(run_checks(settings))
    typer.echo(format_report(settings, checks))
    if not all(check.ok for check in checks):
        raise typer.Exit(1)


@app.command()
def shell() -> None:
    """Talk to Lore in this terminal (also reads piped stdin)."""
    settings = settings_or_exit()
    asyncio.run(_shell(settings))


async def _shell(settings: Settings) -> None:
    from bot.chat.runtime import open_runtime
    from bot.shell.session import Shell, stdin_lines

    async with open_runtime(settings, serving=True) as runtime:
        interactive = sys.stdin.isatty()
        if interactive:
            typer.echo("Lore shell: ask a question, or say “help”. /quit leaves.")
        await Shell(runtime.services, runtime.router).run(stdin_lines(interactive))


@app.command()
def run(
    host: str = typer.Option("0.0.0.0", help="HTTP mode: interface to listen on."),  # noqa: S104
    port: int = typer.Option(
        None,
        help="HTTP mode: port (default $PORT or 3000); Socket Mode: where /healthz, /readyz and "
        "/metrics are served (only when set).",
        envvar="PORT",
    ),
) -> None:
    """Connect to Slack (Socket Mode with SLACK_APP_TOKEN, else HTTP); without Slack
    tokens, open the local shell."""
    from bot.chat import messages

    settings = settings_or_exit()
    if not settings.slack_configured:
        typer.echo(messages.CONNECT_SLACK)
        asyncio.run(_shell(settings))
        return
    from bot.cli.run import run_slack

    configure_logging("INFO")
    asyncio.run(run_slack(settings, host=host, port=port))


def _add_commands() -> None:
    """The command groups, one module each (`bot.cli.knowledge`, `jobs`, `sources`, `access`,
    `api`, `mcp`, `admin`)."""
    from bot.cli import access, admin, api, jobs, knowledge, mcp, sources

    for group in (knowledge.app, jobs.app, sources.app, access.app, api.app, mcp.app, admin.app):
        app.registered_commands.extend(group.registered_commands)
        app.registered_groups.extend(group.registered_groups)


_add_commands()


def main() -> None:
    """The one error boundary of the command line: whatever goes wrong ends as one line on
    stderr and a non-zero exit, never a traceback (the log at DEBUG keeps the details)."""
    configure_logging("WARNING")
    try:
        with acting_from(Origin(Surface.CLI, where=local_user_name(), actor=f"cli:{local_user_name()}")):
            app()
    except KeyboardInterrupt:
        sys.exit(130)
    except (KnowledgeError, StorageError) as exc:
        typer.secho(f"lore: {_sentence(str(exc))}", fg="red", err=True)
        sys.exit(1)
    except Exception as exc:
        log.debug("lore failed", exc_info=exc)
        typer.secho(
            f"lore: something went wrong: {type(exc).__name__}: {_sentence(str(exc))}", fg="red", err=True
        )
        sys.exit(1)


def _sentence(text: str) -> str:
    """The first line of an error's text, as a sentence."""
    line = (text.strip().splitlines() or [""])[0][:300]
    return line[:1].upper() + line[1:] if line else "no details"
