"""CLI commands for the people who run Lore: `lore admin link` (a one-time sign-in link to
the console), `lore forget-user`, `lore audit`, `lore history` and `lore retention run`.

They act as the operator (`operator_place`: an admin of the workspace named), through the
same use cases as the console, so each leaves its audit entry.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime

import typer

from bot.app.audit import AuditFilter
from bot.app.exports import Format, audit_lines, history_lines
from bot.app.forgetting import listed
from bot.app.local import operator_place
from bot.app.services import Services
from bot.cli.common import settings_or_exit, with_services
from storage.values import LOCAL_TENANT, JobState

TENANT_HELP = "Workspace: a Slack team id (T…), or `local` for the shell and the CLI."
CONSOLE_PORT = 3000

app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""

admin_app = typer.Typer(help="The admin console.", no_args_is_help=True)
app.add_typer(admin_app, name="admin")
retention_app = typer.Typer(help="How long questions are kept.", no_args_is_help=True)
app.add_typer(retention_app, name="retention")


@admin_app.command("link")
def link(
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", "-t", help=TENANT_HELP),
    user: str | None = typer.Option(
        None, "--user", "-u", help="Sign in as this person (Slack user id); default: you, the local admin."
    ),
    url: str | None = typer.Option(
        None, "--url", help="The console's address (default: LORE_CONSOLE_URL, else http://127.0.0.1:PORT)."
    ),
    port: int = typer.Option(
        CONSOLE_PORT, "--port", envvar="PORT", help="Lore's port, for the default address."
    ),
) -> None:
    """Print a one-time link that signs in to the admin console (for 15 minutes)."""
    settings = settings_or_exit()

    async def work(services: Services) -> str:
        return await asyncio.to_thread(services.signin.link, tenant, user)

    secret = with_services(settings, work)
    base = (url or settings.lore_console_url or f"http://127.0.0.1:{port}").rstrip("/")
    typer.echo(f"{base}/console/link/{secret}")
    typer.secho("It works once, within 15 minutes; whoever holds it signs in as you.", fg="yellow", err=True)


@app.command("forget-user")
def forget_user(
    user: str = typer.Argument(..., help="The person's Slack user id (U…), or shell name."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", "-t", help=TENANT_HELP),
    now: bool = typer.Option(
        False, "--now", help="Run the job in this process and wait for it; print what it removed."
    ),
) -> None:
    """Queue a job removing what a person asked and said (questions, answers to them,
    feedback) and their personal index; `lore jobs` shows it and what it removed. A running
    Lore (or `lore worker`) takes it within seconds; `--now` runs it here."""

    async def work(services: Services) -> str:
        place = await operator_place(services, tenant)
        job = await services.actions.admin.forget_user(place, user)
        if not now:
            return (
                f"Forget job {job.id} for {user}: {job.state.value}. A running Lore or `lore worker` "
                "does it within seconds (`lore jobs` shows it); `--now` runs it here."
            )
        from knowledge import worker_name

        done = await services.forgetting.wait(job, worker_name())
        if done.state != JobState.SUCCEEDED:
            raise typer.Exit(_failed(done.id, done.error))
        return (
            f"Forgot {user} (job {done.id}): {listed(done.removed) if done.removed else 'nothing to remove'}"
        )

    typer.echo(with_services(settings_or_exit(), work))


def _failed(job_id: int, error: str | None) -> int:
    typer.secho(f"Forget job {job_id} failed: {error or 'no reason given'}", fg="red", err=True)
    return 1


@retention_app.command("run")
def retention_run(tenant: str = typer.Option(LOCAL_TENANT, "--tenant", "-t", help=TENANT_HELP)) -> None:
    """Remove the questions older than the workspace keeps them, now; prints what went."""

    async def work(services: Services) -> str:
        place = await operator_place(services, tenant)
        days = await asyncio.to_thread(services.retention.days, tenant)
        if days <= 0:
            return f"Workspace {tenant} keeps questions for good (retention 0): nothing to remove."
        removed = await services.actions.admin.run_retention(place)
        listed = ", ".join(f"{name} {count}" for name, count in sorted(removed.items())) or "nothing"
        return f"Retention {days} days in {tenant}: removed {listed}"

    typer.echo(with_services(settings_or_exit(), work))


@app.command("audit")
def audit(
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", "-t", help=TENANT_HELP),
    action: str | None = typer.Option(
        None, "--action", help="An action, or its family (`index`, `document.forget`)."
    ),
    actor: str | None = typer.Option(
        None, "--actor", help="Who acted (a Slack user id, `cli:NAME`, `lore`)."
    ),
    since: datetime | None = typer.Option(None, "--since", help="From this date or time (UTC)."),
    output: str = typer.Option("jsonl", "--format", "-f", help="jsonl or csv."),
) -> None:
    """Print the audit log, newest first, as JSON lines or CSV (the export is recorded too)."""
    try:
        how = Format.parse(output)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--format") from None
    wanted = AuditFilter(actor=actor, action=action, since=_utc(since))

    async def work(services: Services) -> None:
        place = await operator_place(services, tenant)
        entries = await services.actions.admin.export_audit(place, wanted, how=f"cli {how.value}")
        async for line in audit_lines(entries, how):
            sys.stdout.write(line)

    with_services(settings_or_exit(), work)


@app.command("history")
def history(
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", "-t", help=TENANT_HELP),
    days: int = typer.Option(30, "--days", min=1, max=366, help="The last this many days."),
) -> None:
    """Print the questions asked (CSV), as an admin may read them: text from DMs and private
    channels is withheld. The export is recorded in the audit log."""

    async def work(services: Services) -> None:
        place = await operator_place(services, tenant)
        async for line in history_lines(await services.actions.admin.export_history(place, days)):
            sys.stdout.write(line)

    with_services(settings_or_exit(), work)


def _utc(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment
