"""`lore doctor`: the effective configuration (secrets masked) and a check of each component.

Nothing it prints holds a secret: settings are shown masked (`Settings.masked`) and every
detail or failure reason goes through `mask_text` with the configuration's secret values,
since a driver's error may quote the URL it was given."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.app.masking import mask_text, mask_url
from bot.app.services import build_llm_client, build_vector_store
from bot.app.settings import Settings
from bot.cli.tables import table
from knowledge import KnowledgeError, TiktokenCounter, build_embedder
from storage.db import open_database
from storage.migrations_runner import current_revision


@dataclass(frozen=True)
class Check:
    component: str
    ok: bool
    detail: str


async def run_checks(settings: Settings) -> list[Check]:
    """Check every component; a failure in one never hides the others."""
    checks: list[tuple[str, Callable[[Settings], Awaitable[str]]]] = [
        ("database", _database),
        ("vector store", _vector_store),
        ("embedder", _embedder),
        ("token counter", _tokens),
        ("LLM", _llm),
        ("Slack", _slack),
    ]
    results = []
    secrets = settings.secret_values()
    for name, check in checks:
        try:
            results.append(Check(name, True, mask_text(await check(settings), secrets)))
        except Exception as exc:
            results.append(Check(name, False, mask_text(_reason(exc), secrets)))
    return results


async def _database(settings: Settings) -> str:
    db = await asyncio.to_thread(open_database, settings.effective_database_url)
    try:
        version = await asyncio.to_thread(db.ping)
        revision = await asyncio.to_thread(current_revision, db.engine)
        where = db.engine.url.render_as_string(hide_password=True)
        return f"{version} at {where}, schema {revision}"
    finally:
        db.dispose()


async def _vector_store(settings: Settings) -> str:
    """The store answers, and on a Chroma server this database's namespace is its own."""
    from storage.deployment import database_identity, deployment

    db = await asyncio.to_thread(open_database, settings.effective_database_url)
    try:
        found = await asyncio.to_thread(deployment, db)
        store = await asyncio.to_thread(build_vector_store, settings, found.id)
        await asyncio.to_thread(store.heartbeat)
        if settings.chroma_host:
            await asyncio.to_thread(store.claim_namespace, await asyncio.to_thread(database_identity, db))
        return f"{store.describe()}, deployment {found.id}"
    finally:
        db.dispose()


async def _embedder(settings: Settings) -> str:
    llm = build_llm_client(settings)
    try:
        embedder = build_embedder(settings, llm)
        started = time.perf_counter()
        vectors = await embedder.embed(["Lore checks its embedder."])
        elapsed = time.perf_counter() - started
        return f"{embedder.model_id}, {vectors.shape[1]} dimensions, first embedding in {elapsed:.2f} s"
    finally:
        if llm is not None:
            await llm.close()


async def _tokens(settings: Settings) -> str:
    count = await asyncio.to_thread(TiktokenCounter().count, "Lore counts tokens offline.")
    return f"tiktoken cl100k_base (offline), sample counted as {count} tokens"


async def _llm(settings: Settings) -> str:
    llm = build_llm_client(settings)
    if llm is None:
        return "not configured: answers quote the documents (set OPENAI_API_KEY or OPENAI_BASE_URL)"
    try:
        models = await llm.with_options(max_retries=0, timeout=10).models.list()
        names = [m.id for m in models.data]
        note = (
            ""
            if settings.llm_model in names or not names
            else f" (LLM_MODEL {settings.llm_model} not listed)"
        )
        return f"{mask_url(str(llm.base_url))} answers, {len(names)} models{note}"
    finally:
        await llm.close()


async def _slack(settings: Settings) -> str:
    from bot.slack.installs import oauth_problem

    problem = oauth_problem(settings)
    if problem is not None:
        raise RuntimeError(problem)
    if settings.slack_oauth:
        return await _installs(settings)
    if settings.slack_bot_token is None:
        return "not configured: `lore run` opens the local shell (see README: Connect Slack)"
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url
    )
    auth = await client.auth_test()
    mode = "Socket Mode" if settings.slack_app_token else "HTTP mode"
    if settings.slack_app_token is None and settings.slack_signing_secret is None:
        raise RuntimeError("HTTP mode needs SLACK_SIGNING_SECRET (or set SLACK_APP_TOKEN for Socket Mode)")
    found = f"bot @{auth.get('user')} in {auth.get('team')} ({mode})"
    return found + _scopes_note(auth.headers.get("x-oauth-scopes") or auth.headers.get("X-OAuth-Scopes"))


async def _installs(settings: Settings) -> str:
    """OAuth installs: how many workspaces and organisations Lore is installed in."""
    from bot.slack.installs import installed_count

    db = await asyncio.to_thread(open_database, settings.effective_database_url)
    try:
        workspaces, organisations = await asyncio.to_thread(installed_count, db)
    finally:
        db.dispose()
    return (
        f"installs into any workspace from /slack/install (OAuth, HTTP mode): installed in "
        f"{workspaces} workspace(s) and {organisations} organisation(s)"
    )


def _scopes_note(header: object) -> str:
    """The scopes check: a failure naming what the token lacks, else a note."""
    from bot.slack.scopes import missing, unused

    if not isinstance(header, str):
        return "; Slack did not say which scopes the token has"
    granted = [scope.strip() for scope in header.split(",") if scope.strip()]
    lacking = missing(granted)
    if lacking:
        raise MissingScopes(
            f"the bot token lacks {', '.join(lacking)}: update the app from manifest.yml "
            "(api.slack.com/apps → your app → App Manifest) and reinstall it"
        )
    extra = unused(granted)
    return "; all the scopes Lore needs" + (f" (granted but unused: {', '.join(extra)})" if extra else "")


class MissingScopes(Exception):
    """The Slack app was installed without scopes Lore uses."""


def _reason(exc: Exception) -> str:
    if isinstance(exc, KnowledgeError | MissingScopes):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def format_report(settings: Settings, checks: list[Check]) -> str:
    lines = ["Configuration:"]
    lines += [f"  {name} = {value}" for name, value in settings.masked().items()]
    lines.append("Components:")
    rows = [("OK" if check.ok else "FAIL", check.component, check.detail) for check in checks]
    lines.append(table(["", "", ""], rows, header=False, indent=2))
    return "\n".join(lines)
