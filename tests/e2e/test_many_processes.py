"""Many Lore processes on one PostgreSQL database and one Chroma server (real processes,
real servers): starting a process never deletes what another is writing, a paused worker
writes nothing once its job was taken over, and two replicas meeting a new channel at once
both answer, with one index."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.app.local import local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from knowledge.indexing.ingest import collection_for
from storage.values import JobState, Scope
from tests.e2e.test_two_workers import ready
from tests.fakes.slack_server import FakeSlack
from tests.support.lore_run import BOT, TEAM, TOKEN, Door, lore_run, reply_to
from tests.support.postgres import create_database, drop_database
from tests.support.site import Site

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.chroma_server]
LORE = str(Path(sys.executable).with_name("lore"))
FILES = 40


@pytest.fixture
def database_url(postgres_admin_url: str) -> Iterator[str]:
    url = create_database(postgres_admin_url)
    yield url
    drop_database(postgres_admin_url, url)


def lore_env(home: Path, database_url: str, chroma: tuple[str, int], **more: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    env.update(
        LORE_HOME=str(home),
        DATABASE_URL=database_url,
        CHROMA_HOST=chroma[0],
        CHROMA_PORT=str(chroma[1]),
        ANONYMIZED_TELEMETRY="False",
        **more,
    )
    return env


def services_for(home: Path, database_url: str, chroma: tuple[str, int]) -> Services:
    return build_services(
        Settings(
            _env_file=None,
            lore_home=home,
            database_url=database_url,
            chroma_host=chroma[0],
            chroma_port=chroma[1],
            lore_crawl_allow="127.0.0.1",
        )
    )


def test_an_ingest_while_other_processes_start_and_ask_loses_nothing(
    tmp_path: Path, database_url: str, chroma_server: tuple[str, int]
) -> None:
    """`lore ingest` of 40 files while `lore ask` processes start (each repairing what a crash
    left, at start) one after another from elsewhere: every file is added and searchable,
    with its vectors, and no ask fails."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(FILES):
        paragraphs = [
            f"Runbook {n}, step {s}: restart worker pool {n * 10 + s} after draining it." for s in range(6)
        ]
        (folder / f"runbook-{n:02d}.md").write_text(f"# Runbook {n}\n\n" + "\n\n".join(paragraphs) + "\n")
    ingest = subprocess.Popen(
        [LORE, "ingest", str(folder)],
        env=lore_env(tmp_path / "writer", database_url, chroma_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    asked: list[subprocess.CompletedProcess[str]] = []
    try:
        while ingest.poll() is None:
            asked.append(
                subprocess.run(
                    [LORE, "ask", "how do I restart worker pool 42?"],
                    env=lore_env(tmp_path / f"asker-{len(asked)}", database_url, chroma_server),
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
            )
        out, err = ingest.communicate(timeout=300)
    finally:
        if ingest.poll() is None:
            ingest.kill()
            ingest.wait()
    assert ingest.returncode == 0, out + err
    assert f"{FILES} added or updated, 0 already in memory, 0 failed" in out, out + err
    assert sum(line.strip().startswith("✓ runbook-") for line in out.splitlines()) == FILES
    assert len(asked) >= 2, "other processes started while the ingest ran"
    assert all(a.returncode == 0 for a in asked), [a.stderr for a in asked if a.returncode]

    services = services_for(tmp_path / "checker", database_url, chroma_server)
    try:
        actor = asyncio.run(local_dm(services))
        [index] = [
            i for i in services.indexes.list_for_tenant(actor.place.tenant_id) if i.scope == Scope.PERSONAL
        ]
        documents = services.documents.list_ready(index.id, limit=1000)
        assert sorted(d.name for d in documents) == sorted(f"runbook-{n:02d}.md" for n in range(FILES))
        assert services.documents.unfinished() == []
        chunks = sum(d.chunk_count for d in documents)
        assert services.vectors.count(collection_for(index)) == chunks  # every one's vectors, no others
        hits = asyncio.run(services.retriever.search([index], "restart worker pool 375")).hits
        assert hits and "worker pool 375" in hits[0].text
    finally:
        asyncio.run(services.aclose())


def test_a_paused_worker_writes_nothing_after_its_job_was_taken_over(
    tmp_path: Path, database_url: str, chroma_server: tuple[str, int]
) -> None:
    """Worker A is stopped (SIGSTOP) mid-crawl for longer than the stale time; worker B
    takes the job over and finishes it. Then A is continued (SIGCONT) and goes on from where
    it was: the job, its log, its pages and the index are left exactly as B left them."""
    services = services_for(tmp_path / "home", database_url, chroma_server)
    env = lore_env(
        tmp_path / "workers",
        database_url,
        chroma_server,
        LORE_CRAWL_ALLOW="127.0.0.1",
        LORE_CRAWL_DELAY_SECONDS="0.3",
        LORE_JOB_WORKERS="1",
        LORE_JOB_STALE_SECONDS="3",
        LORE_DB_IDLE_IN_TRANSACTION_SECONDS="5",  # A may be stopped inside a transaction
    )
    first = subprocess.Popen([LORE, "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    second: subprocess.Popen[bytes] | None = None
    try:
        name_a = ready(first)
        with Site(pages=16) as site:
            actor = asyncio.run(local_dm(services))
            index = asyncio.run(services.catalog.create_shared(actor.place, "docs"))
            source = asyncio.run(services.jobs.attach_site(index, [site.url("/docs/")]))
            job = asyncio.run(services.jobs.start_indexing_job(index, source))
            jobs = services.jobs.repository
            wait_for(lambda: jobs.get(job.id).counters.get("documents_added", 0) >= 2, "A to add pages")
            first.send_signal(signal.SIGSTOP)
            taken_by_a = jobs.get(job.id)
            assert taken_by_a.worker == name_a and taken_by_a.state == JobState.RUNNING

            second = subprocess.Popen(
                [LORE, "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            name_b = ready(second)
            wait_for(lambda: jobs.get(job.id).finished, "B to take the job over and finish it", 240, services)
            done = jobs.get(job.id)
            assert done.state == JobState.SUCCEEDED and done.worker == name_b, done.error
            before = snapshot(services, job.id, index.id)

            first.send_signal(signal.SIGCONT)
            time.sleep(8)  # A wakes, finishes what it was doing and tries to go on
            assert first.poll() is None, "A keeps running (it just writes nothing to that job)"
            after = snapshot(services, job.id, index.id)
        assert after == before
        lines = [line.message for line in jobs.lines(job.id)]
        assert sum(m.startswith("interrupted") for m in lines) == 1
        assert not any(m.startswith(("cancelled", "failed")) for m in lines)
        assert lines[-1].startswith("done in")
        # What A had half written when it stopped, it removed itself when refused.
        assert services.documents.unfinished() == []
        ready_chunks = sum(d.chunk_count for d in services.documents.list_ready(index.id, limit=1000))
        assert services.vectors.count(collection_for(services.indexes.get(index.id))) == ready_chunks
    finally:
        for worker in (first, second):
            if worker is not None and worker.poll() is None:
                worker.send_signal(signal.SIGCONT)
                worker.terminate()
                worker.communicate(timeout=60)
        asyncio.run(services.aclose())


def snapshot(services: Services, job_id: int, index_id: int) -> dict[str, Any]:
    """Everything a worker may write for a job: the job row, its log and pages, the index's
    documents (a half-written one of its own it may remove: not part of the job's result)."""
    jobs = services.jobs.repository
    job = jobs.get(job_id)
    documents = services.documents.list_ready(index_id, limit=1000)
    return {
        "job": (job.state, job.worker, job.counters, job.finished_at, job.error),
        "log": [(line.id, line.message) for line in jobs.lines(job_id, limit=10_000)],
        "pages": jobs.pages(job_id),
        "documents": sorted((d.id, d.url, d.content_hash, d.chunk_count) for d in documents),
    }


def wait_for(condition: Any, what: str, timeout: float = 120, services: Services | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:.0f} s for {what}: {activity(services)}"
        time.sleep(0.1)


def activity(services: Services | None) -> str:
    """What the database's sessions are doing (for a failure's message)."""
    if services is None:
        return ""
    with services.db.engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT pid, state, wait_event_type, wait_event, left(query, 120) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).all()
    return "\n".join(str(tuple(row)) for row in rows)


async def test_two_replicas_meeting_a_new_channel_at_once_both_answer_with_one_index(
    tmp_path: Path, database_url: str, chroma_server: tuple[str, int]
) -> None:
    """Two `lore run` replicas behind one request URL; the first two messages of a new
    channel land one on each, at the same moment. Both are answered (no "something went
    wrong"), and the channel has one index, enabled once."""
    env = {
        "DATABASE_URL": database_url,
        "CHROMA_HOST": chroma_server[0],
        "CHROMA_PORT": str(chroma_server[1]),
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with (
        FakeSlack(TOKEN, TEAM, BOT) as slack,
        lore_run(tmp_path / "a", slack, **env) as first,
        lore_run(tmp_path / "b", slack, **env) as second,
        aiohttp.ClientSession() as http,
    ):
        doors = [Door(http, first, slack), Door(http, second, slack)]
        doors[1].serial = 5000  # event ids of their own
        slack.add_user("UANA", "ana")
        slack.add_user("UBEN", "ben")
        for trial in range(3):
            channel = f"CNEW{trial}"
            slack.add_channel(channel, f"launch-{trial}")
            stamps = []
            events = []
            for user in ("UANA", "UBEN"):
                ts = slack._next_ts()
                text = f"<@{BOT}> what is the launch plan?"
                slack.add_message(channel, ts, text, user)
                stamps.append(ts)
                events.append(
                    {
                        "type": "app_mention",
                        "user": user,
                        "text": text,
                        "ts": ts,
                        "channel": channel,
                        "event_ts": ts,
                        "team": TEAM,
                        "user_team": TEAM,
                    }
                )
            await asyncio.gather(*(door.deliver(event) for door, event in zip(doors, events, strict=True)))
            for ts in stamps:
                await reply_to(slack, ts)
        said = [str(call.params.get("text", "")) for call in slack.calls if call.method.startswith("chat.")]
        assert not any("went wrong" in text for text in said), said

    services = services_for(tmp_path / "checker", database_url, chroma_server)
    try:
        channel_indexes = [i for i in services.indexes.list_for_tenant(TEAM) if i.scope == Scope.CHANNEL]
        assert sorted(i.name for i in channel_indexes) == ["launch-0", "launch-1", "launch-2"]
        for index in channel_indexes:
            channel = services.directory.channel(index.channel_id or 0)
            conversation = services.directory.channel_conversation(channel)
            assert [i.id for i in services.indexes.enabled(conversation.id)].count(index.id) == 1
    finally:
        await services.aclose()
