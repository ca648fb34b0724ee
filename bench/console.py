"""The admin console at scale: its Overview page over 100k logged questions, fetched over
HTTP from the real console (signed in with a one-time link), and the coverage-gap job over
10k unanswered questions: over a backlog logged before their vectors were kept (every
question embedded once, as after upgrading), then as every run goes since Lore keeps a
question's vector when it abstains or gets a 👎 (nothing to embed).

`python -m bench.console [--quick]`; `make bench` runs it as the `console` section.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from sqlalchemy import text

from bench import run_alone
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.web import install_console
from storage.values import LOCAL_TENANT, utcnow

QUESTIONS, QUICK_QUESTIONS = 100_000, 2_000
GAPS, QUICK_GAPS = 10_000, 100
DAYS = 30
CHANNELS = 20
FETCHES = 15
TOPICS = (
    "parental leave", "the VPN", "expense reports", "travel booking", "the staging deploy", "on-call pay",
    "laptop refresh", "the billing service", "SSO login", "the office gym", "holiday calendar", "payroll dates",
    "the data retention policy", "code review rules", "the incident process", "desk booking", "visa letters",
    "the pension plan", "security training", "the API rate limits", "the mobile release", "hiring referrals",
    "the coffee machine", "guest wifi", "the design system", "quarterly planning", "customer refunds",
    "the support rota", "GDPR requests", "the search index", "backups", "the sales commission", "conference budget",
    "the intern program", "performance reviews", "the bike scheme", "parking", "the wiki", "Kubernetes access",
    "the feature flags",
)  # fmt: skip
PHRASINGS = (
    "how does {} work?", "who owns {}?", "where do I find {}?", "what is the policy on {}?",
    "is there a doc about {}?", "how do I get started with {}?", "what changed in {} lately?",
    "who do I ask about {}?", "what are the rules for {}?", "can you explain {}?", "why is {} so slow?",
    "when was {} last updated?",
)  # fmt: skip
QUALIFIERS = ("", " for contractors", " in Berlin", " this quarter", " for new hires", " in the US office",
    " for managers", " on weekends", " for the EU team", " after the reorg", " for interns", " in 2027",
    " for remote staff", " in London", " for the sales team", " right now", " for engineers", " in Paris",
    " for part-timers", " at the offsite", " for the board")  # fmt: skip


def questions(count: int, rng: random.Random) -> list[str]:
    """`count` distinct questions (as many as the templates make), in groups by topic."""
    made = [p.format(t + q) for t in TOPICS for p in PHRASINGS for q in QUALIFIERS]
    rng.shuffle(made)
    return made[:count]


def fill(services: Services, count: int, gaps: int, rng: random.Random) -> None:
    """`count` questions over the last 30 days, in channels and DMs, through three indexes,
    some with verdicts; the newest `gaps` of them unanswered."""
    directory = services.directory
    directory.ensure_tenant(LOCAL_TENANT)
    users = [directory.ensure_user(LOCAL_TENANT, f"U{n:04d}", f"person {n}").id for n in range(200)]
    conversations = [
        directory.channel_conversation(
            directory.ensure_channel(LOCAL_TENANT, f"C{n:03d}", f"channel-{n}", is_private=n % 5 == 0)
        ).id
        for n in range(CHANNELS)
    ]
    conversations += [directory.dm_conversation(directory.user(u)).id for u in users[:20]]
    indexes = [
        services.indexes.create(
            LOCAL_TENANT,
            f"index-{n}",
            "shared",
            embedding_model="m",
            embedding_dimension=384,  # type: ignore[arg-type]
        ).id
        for n in range(3)
    ]
    texts = questions(gaps, rng)
    now = utcnow()
    answers, searched, verdicts = [], [], []
    for n in range(count):
        at = (
            now - timedelta(seconds=rng.uniform(0, DAYS * 86400)) if n >= gaps else now - timedelta(minutes=n)
        )
        answers.append(
            {
                "id": n + 1, "tenant_id": LOCAL_TENANT, "conversation_id": rng.choice(conversations),
                "user_id": rng.choice(users), "question": texts[n] if n < gaps else f"question {n}?",
                "text": "an answer", "mode": "rag_only", "abstained": n < gaps, "cited": "[]",
                "latency_ms": int(rng.lognormvariate(7, 0.6)), "created_at": at,
            }
        )  # fmt: skip
        searched.append({"answer_id": n + 1, "index_id": rng.choice(indexes), "cited": n >= gaps})
        if rng.random() < 0.05:
            verdicts.append(
                {"answer_id": n + 1, "tenant_id": LOCAL_TENANT, "user_id": rng.choice(users),
                 "helpful": rng.random() < 0.7, "created_at": at, "updated_at": at}
            )  # fmt: skip
    with services.db.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO answer_log (id, tenant_id, conversation_id, user_id, question, text, mode, "
                "abstained, cited, latency_ms, created_at) VALUES (:id, :tenant_id, :conversation_id, "
                ":user_id, :question, :text, :mode, :abstained, :cited, :latency_ms, :created_at)"
            ),
            answers,
        )
        connection.execute(
            text(
                "INSERT INTO answer_index (answer_id, index_id, cited) VALUES (:answer_id, :index_id, :cited)"
            ),
            searched,
        )
        connection.execute(
            text(
                "INSERT INTO answer_feedback (answer_id, tenant_id, user_id, helpful, created_at, updated_at) "
                "VALUES (:answer_id, :tenant_id, :user_id, :helpful, :created_at, :updated_at)"
            ),
            verdicts,
        )


async def overview(services: Services, fetches: int) -> dict[str, Any]:
    """GET /console/overview over loopback, signed in, `fetches` times: wall time (`cold_ms`:
    the first, which counts and keeps the window's whole past days), and the CPU time this
    process spent per fetch (server and client: on a machine shared with other
    work, the figure that does not depend on how busy it is)."""
    app = web.Application()
    install_console(app, services, None)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    base = f"http://127.0.0.1:{port}"
    times = []
    cpu = 0.0
    try:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # 127.0.0.1
            secret = await asyncio.to_thread(services.signin.link)
            async with http.get(f"{base}/console/link/{secret}") as signed:
                assert signed.status == 200, await signed.text()
            cpu = time.process_time()
            for _ in range(fetches):
                started = time.perf_counter()
                async with http.get(f"{base}/console/overview") as page:
                    body = await page.text()
                    assert page.status == 200 and 'id="questions"' in body
                times.append((time.perf_counter() - started) * 1000)
            cpu = time.process_time() - cpu
    finally:
        await runner.cleanup()
    cold = times[0]
    times.sort()
    return {
        "fetches": fetches,
        "cold_ms": round(cold, 1),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 1),
        "first_ms": round(times[0], 1),
        "cpu_ms": round(cpu * 1000 / fetches, 1),
        "load_average": round(os.getloadavg()[0], 1),
    }


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    count, gaps = (QUICK_QUESTIONS, QUICK_GAPS) if quick else (QUESTIONS, GAPS)
    settings = Settings(_env_file=None, lore_home=workdir / "home", lore_retention_days=0)
    services = await asyncio.to_thread(build_services, settings)
    try:
        started = time.perf_counter()
        await asyncio.to_thread(fill, services, count, gaps, random.Random(43))
        filled = time.perf_counter() - started
        page = await overview(services, 3 if quick else FETCHES)
        first = await services.gaps.run(LOCAL_TENANT)
        again = await services.gaps.run(LOCAL_TENANT)
        assert first is not None and again is not None
        return {
            "questions": count,
            "fill_s": round(filled, 1),
            "overview": page,
            "gaps": {
                "questions": first.questions,
                "groups": first.groups,
                "first_s": round(first.seconds, 1),
                "embedded_first": first.embedded,
                "again_s": round(again.seconds, 2),
                "embedded_again": again.embedded,
            },
        }
    finally:
        await services.aclose()


if __name__ == "__main__":
    run_alone("console", run, "a seconds-long smoke run")
