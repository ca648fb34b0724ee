"""CLI commands for sites and indexing jobs: `lore ingest URL --site` (through `crawl_site`),
`lore jobs [--follow ID]`, `lore jobs cancel ID`, and `lore worker`."""

from __future__ import annotations

import asyncio
import signal

import typer
from rich.progress import Progress

from bot.app.conversations import Actor
from bot.app.forgetting import ForgetRef, listed
from bot.app.local import operator_place
from bot.app.services import Services
from bot.chat import messages
from bot.chat.render import age, plain
from bot.cli.common import settings_or_exit, with_services
from bot.cli.tables import table
from knowledge import Count, IndexingJobs, JobCounters, KnowledgeError
from storage.records import IndexRef, JobRef


async def crawl_site(services: Services, actor: Actor, target: IndexRef, urls: list[str]) -> JobRef:
    """Attach the site, run its job in this process with a progress bar, print the summary."""
    try:
        done = await services.actions.sources.attach_site(
            actor.place, target, urls, conversation_id=actor.conversation.id
        )
    except KnowledgeError as exc:
        raise typer.BadParameter(str(exc)) from None
    from bot.app.workers import running_jobs
    from bot.slack.history import channel_syncs

    async with running_jobs(services, schedule=False, more=channel_syncs):
        job = await follow_with_bar(services.jobs, done.job, done.source.name)
    typer.echo(
        plain(messages.job_summary(done.source.name, job.state.value, job.counters, job.seconds, job.error))
    )
    return job


async def follow_with_bar(jobs: IndexingJobs, job: JobRef, site: str) -> JobRef:
    """Poll the job until it ends, with a progress bar of pages done out of pages found."""
    with Progress(transient=True) as bar:
        task = bar.add_task(f"Indexing {site}", total=None)
        while not job.finished:
            await asyncio.sleep(0.25)
            job = await jobs.get_indexing_job_status(job.id)
            counted = JobCounters(job.counters)
            bar.update(task, completed=counted.pages_done, total=counted[Count.PAGES_FOUND] or None)
    return job


app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""

jobs_app = typer.Typer(help="Indexing jobs: list, follow, cancel.", invoke_without_command=True)
app.add_typer(jobs_app, name="jobs")


@jobs_app.callback()
def jobs(
    context: typer.Context,
    follow: int | None = typer.Option(None, "--follow", "-f", help="Follow this job's log live."),
) -> None:
    """Recent indexing jobs, or one job's log as it runs."""
    if context.invoked_subcommand is not None:
        return

    async def work(services: Services) -> None:
        if follow is not None:
            async for line in services.jobs.tail_indexing_job(follow):
                typer.echo(f"{line.at:%H:%M:%S} {line.level:<7} {line.message}")
            job = await services.jobs.get_indexing_job_status(follow)
            typer.echo(f"job {job.id}: {job.state.value}")
            return
        recent = await services.jobs.recent(limit=20)
        forgetting = await services.forgetting.recent(limit=10)
        if forgetting:
            typer.echo(forget_table(forgetting))
        if not recent:
            if not forgetting:
                typer.echo("No indexing jobs yet. Add a site with `lore ingest URL --site`.")
            return
        rows = []
        for job in recent:
            counted = JobCounters(job.counters)
            pages = f"{counted.pages_done}/{counted[Count.PAGES_FOUND]}"
            rows.append(
                (job.id, job.state.value, pages, counted[Count.CHUNKS], job.trigger, age(job.created_at))
            )
        typer.echo(table([">job", "state", ">pages", ">chunks", "trigger", "created"], rows))

    with_services(settings_or_exit(), work)


def forget_table(found: list[ForgetRef]) -> str:
    """Jobs forgetting people: who, how far, what they removed."""
    rows = [
        (
            job.id,
            job.person,
            job.state.value,
            listed(job.removed) if job.removed else "—",
            f"{job.surface}{' ' + job.actor if job.actor else ''}",
            age(job.created_at),
        )
        for job in found
    ]
    return table([">forget job", "person", "state", "removed", "asked from", "created"], rows)


@jobs_app.command("cancel")
def cancel(job_id: int) -> None:
    """Ask a job to stop (what it indexed stays)."""

    async def work(services: Services) -> None:
        job = await services.actions.sources.cancel_job(await operator_place(services), job_id)
        typer.echo(f"job {job.id}: {'cancelled' if job.finished else 'stopping'}")

    with_services(settings_or_exit(), work)


@app.command()
def worker() -> None:
    """Run indexing jobs (and scheduled refreshes) in this process until stopped. With
    PostgreSQL, several workers may run at once; each job is taken by one of them."""
    settings = settings_or_exit()

    async def work(services: Services) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        from bot.app.workers import build_worker, refresh_scheduler
        from bot.slack.history import channel_syncs
        from bot.slack.memberships import attach

        attach(services)  # its scheduler reads restrictions' Slack groups, as `lore run`'s does
        job_worker, name = build_worker(services, more=channel_syncs)
        typer.echo(f"worker {name} waiting for indexing jobs (Ctrl-C to stop)")
        scheduler = refresh_scheduler(services)
        try:
            await job_worker.run(stop, name)
        finally:
            scheduler.shutdown(wait=False)

    with_services(settings, work)
