"""Installing Lore into any workspace, and what happens when it is removed from one.

With `SLACK_CLIENT_ID` and `SLACK_CLIENT_SECRET`, Bolt runs Slack's OAuth v2 flow:
`/slack/install` issues a state (kept in SQL, so any replica can check it, and in a cookie)
and sends the installer to Slack; `/slack/oauth_redirect` checks the state against both,
exchanges the code (`oauth.v2.access`) and keeps the installation in SQL through slack_sdk's
SQLAlchemy installation store, on Lore's own database. Tokens are stored sealed with
`LORE_SECRET_KEY` (`SealedInstallations`): a dump of the database holds no usable token.
Each request is then authorized with its workspace's token; a rotating token (token
rotation on) is refreshed by Bolt before it expires and saved again.

An org-wide install (Enterprise Grid) has one token for the organisation; each event's own
workspace is the tenant (`bot.slack.context`), so its workspaces keep apart memories.

`app_uninstalled`, or `tokens_revoked` for the bot's token: the workspace's (or the
organisation's) tokens are deleted at once, and the removal of its data is scheduled
(`bot.app.removals`). Installing again before the grace period ends calls the removal off.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import text

from bot.app.removals import WorkspaceRemovals
from bot.app.settings import Settings
from bot.slack.scopes import BOT_SCOPES
from storage.db import Database
from storage.schema import SLACK_BOTS, SLACK_INSTALLATIONS, SLACK_OAUTH_STATES
from storage.secrets import MAKE_KEY, SecretBox

log = logging.getLogger(__name__)
TOKEN_FIELDS = ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token")
SEALED = "t"
AUTHORIZE_PATH = "/oauth/v2/authorize"
STATE_SECONDS = 600
ROTATE_MINUTES_BEFORE = 120
"""A rotating token is refreshed when it expires within this many minutes (Bolt's default)."""
RETRIES_ON_429 = 3
Stored = TypeVar("Stored", Installation, Bot)
Installed = Callable[[str | None, str | None, bool], Awaitable[None]]
"""Told of each installation saved: its team, its organisation, whether org-wide."""


class SealedInstallations(AsyncInstallationStore):
    """slack_sdk's SQLAlchemy installation store with its tokens sealed at rest, its
    blocking calls run in a thread, and `installed` told of every installation saved."""

    def __init__(self, store: SQLAlchemyInstallationStore, box: SecretBox, installed: Installed) -> None:
        self._store = store
        self._box = box
        self._installed = installed

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        await asyncio.to_thread(self._store.save, self._sealed(installation))
        await self._installed(
            installation.team_id, installation.enterprise_id, installation.is_enterprise_install
        )

    async def async_save_bot(self, bot: Bot) -> None:
        await asyncio.to_thread(self._store.save_bot, self._sealed(bot))

    async def async_find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        found = await asyncio.to_thread(
            self._store.find_bot,
            enterprise_id=enterprise_id,
            team_id=team_id,
            is_enterprise_install=is_enterprise_install,
        )
        return self._opened(found)

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        found = await asyncio.to_thread(
            self._store.find_installation,
            enterprise_id=enterprise_id,
            team_id=team_id,
            user_id=user_id,
            is_enterprise_install=is_enterprise_install,
        )
        return self._opened(found)

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await asyncio.to_thread(self._store.delete_bot, enterprise_id=enterprise_id, team_id=team_id)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        await asyncio.to_thread(
            self._store.delete_installation, enterprise_id=enterprise_id, team_id=team_id, user_id=user_id
        )

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await asyncio.to_thread(self._store.delete_all, enterprise_id=enterprise_id, team_id=team_id)

    def _sealed(self, found: Stored) -> Stored:
        sealed = copy.copy(found)
        for name in TOKEN_FIELDS:
            value = getattr(found, name, None)
            if value:
                setattr(sealed, name, self._box.seal({SEALED: value}))
        return sealed

    def _opened(self, found: Stored | None) -> Stored | None:
        if found is None:
            return None
        for name in TOKEN_FIELDS:
            value = getattr(found, name, None)
            if value:
                setattr(found, name, self._box.open(value)[SEALED])
        return found


class SqlStates(AsyncOAuthStateStore):
    """slack_sdk's SQLAlchemy OAuth state store (each state used once, for ten minutes),
    its blocking calls run in a thread."""

    def __init__(self, store: SQLAlchemyOAuthStateStore) -> None:
        self._store = store

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(self._store.issue)

    async def async_consume(self, state: str) -> bool:
        return await asyncio.to_thread(self._store.consume, state)


def oauth_settings(settings: Settings, db: Database, removals: WorkspaceRemovals) -> AsyncOAuthSettings:
    """Bolt's OAuth settings: Lore's scopes, installations and states in Lore's database,
    and Slack's authorize page beside `SLACK_API_URL` (slack.com's, or a test's)."""
    assert settings.slack_client_id is not None and settings.slack_client_secret is not None
    states = SqlStates(SQLAlchemyOAuthStateStore(STATE_SECONDS, db.engine, table_name=SLACK_OAUTH_STATES))
    return AsyncOAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret.get_secret_value(),
        scopes=sorted(BOT_SCOPES),
        user_scopes=[],
        redirect_uri=settings.slack_redirect_uri,
        installation_store=installations(settings, db, removals),
        installation_store_bot_only=True,
        state_store=states,
        state_expiration_seconds=STATE_SECONDS,
        authorization_url=authorize_url(settings.slack_api_url),
    )


def installations(settings: Settings, db: Database, removals: WorkspaceRemovals) -> SealedInstallations:
    """The installations Lore keeps, in its database, tokens sealed."""
    assert settings.slack_client_id is not None and settings.lore_secret_key is not None

    async def installed(team_id: str | None, enterprise_id: str | None, org_wide: bool) -> None:
        log.info("Lore was installed in %s", enterprise_id if org_wide else team_id)
        await removals.installed(team_id, enterprise_id, org_wide=org_wide)

    return SealedInstallations(
        SQLAlchemyInstallationStore(
            settings.slack_client_id,
            db.engine,
            bots_table_name=SLACK_BOTS,
            installations_table_name=SLACK_INSTALLATIONS,
        ),
        SecretBox(settings.lore_secret_key.get_secret_value()),
        installed,
    )


class InstalledTokens:
    """Bot tokens for work that no request carries (a learned channel's sync in a job
    worker): the workspace's installation, its token rotated first when it is about to
    expire (and saved, as Bolt does for requests)."""

    def __init__(self, settings: Settings, db: Database, removals: WorkspaceRemovals) -> None:
        assert settings.slack_client_id is not None and settings.slack_client_secret is not None
        self._settings = settings
        self._store = installations(settings, db, removals)
        self._removals = removals
        self._rotator = AsyncTokenRotator(
            client_id=settings.slack_client_id,
            client_secret=settings.slack_client_secret.get_secret_value(),
            client=AsyncWebClient(base_url=settings.slack_api_url),
        )

    async def client(self, tenant: str) -> AsyncWebClient:
        """A client with the workspace's bot token (`LookupError`: Lore is not installed there)."""
        enterprise = await self._removals.organisation_of(tenant)
        bot = await self._store.async_find_bot(enterprise_id=enterprise, team_id=tenant)
        if bot is None and enterprise is not None:
            bot = await self._store.async_find_bot(
                enterprise_id=enterprise, team_id=tenant, is_enterprise_install=True
            )
        if bot is None or not bot.bot_token:
            raise LookupError(f"Lore is not installed in workspace {tenant} any more")
        if bot.bot_refresh_token:
            rotated = await self._rotator.perform_bot_token_rotation(
                bot=bot, minutes_before_expiration=ROTATE_MINUTES_BEFORE
            )
            if rotated is not None:
                await self._store.async_save_bot(rotated)
                bot = rotated
        assert bot.bot_token is not None
        client = AsyncWebClient(
            token=bot.bot_token,
            base_url=self._settings.slack_api_url,
            team_id=tenant if bot.is_enterprise_install else None,
        )
        client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=RETRIES_ON_429))
        return client


def oauth_problem(settings: Settings) -> str | None:
    """What stops OAuth installs from working with these settings (None: nothing)."""
    if settings.slack_oauth and settings.slack_bot_token is not None:
        return (
            "set either SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET "
            "(installs into any workspace), not both"
        )
    if (settings.slack_client_id is None) != (settings.slack_client_secret is None):
        return "OAuth installs need both SLACK_CLIENT_ID and SLACK_CLIENT_SECRET"
    if not settings.slack_oauth:
        return None
    if settings.slack_app_token is not None:
        return "OAuth installs are served over HTTP: unset SLACK_APP_TOKEN and set SLACK_SIGNING_SECRET"
    if settings.slack_signing_secret is None:
        return "OAuth installs need SLACK_SIGNING_SECRET (Basic Information → Signing Secret)"
    if settings.lore_secret_key is None:
        return (
            "OAuth installs keep each workspace's token encrypted, and LORE_SECRET_KEY is not set; "
            f"make one with `{MAKE_KEY}`"
        )
    return None


def installed_count(db: Database) -> tuple[int, int]:
    """(workspaces, organisations) Lore holds a bot token for."""
    query = text(
        f"SELECT is_enterprise_install, COUNT(DISTINCT COALESCE(team_id, enterprise_id)) FROM {SLACK_BOTS} "  # noqa: S608
        "GROUP BY is_enterprise_install"
    )
    with db.engine.connect() as connection:
        counts = {bool(org): int(n) for org, n in connection.execute(query)}
    return counts.get(False, 0), counts.get(True, 0)


def authorize_url(api_url: str) -> str:
    """Slack's authorize page is on the Web API's host: https://slack.com/oauth/v2/authorize."""
    parts = urlsplit(api_url)
    return f"{parts.scheme}://{parts.netloc}{AUTHORIZE_PATH}"


def register_removals(
    app: AsyncApp, removals: WorkspaceRemovals, store: AsyncInstallationStore | None
) -> None:
    """`app_uninstalled`, and `tokens_revoked` for the bot: tokens deleted at once (with
    OAuth installs; a configured SLACK_BOT_TOKEN is the operator's to remove), the removal of
    the workspace's data scheduled."""

    async def gone(context: AsyncBoltContext, reason: str) -> None:
        org_wide = bool(context.is_enterprise_install)
        team, enterprise = context.team_id, context.enterprise_id
        if store is not None:
            await store.async_delete_all(enterprise_id=enterprise, team_id=None if org_wide else team)
        await removals.uninstalled(team, enterprise, org_wide=org_wide, reason=reason)

    @app.event("app_uninstalled")
    async def uninstalled(context: AsyncBoltContext) -> None:
        await gone(context, "app_uninstalled")

    @app.event("tokens_revoked")
    async def revoked(event: dict[str, Any], context: AsyncBoltContext) -> None:
        tokens = event.get("tokens") or {}
        if tokens.get("bot"):
            await gone(context, "tokens_revoked")
        elif store is not None:
            for user in tokens.get("oauth") or []:
                await store.async_delete_installation(
                    enterprise_id=context.enterprise_id, team_id=context.team_id, user_id=str(user)
                )
