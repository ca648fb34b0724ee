"""The workspaces Lore answers in, each with what Lore keeps for it: a Web API client with
its bot token, its people and channels (`People`), a reader of its threads, the threads Lore
takes part in, and the freshener of its learned channels.

With one bot token (`SLACK_BOT_TOKEN`) every request gets the one workspace built at start.
With OAuth installs a workspace is built on its first request, with the token Bolt's
authorization found for it; a rotated token replaces the old one in its client. An org-wide
install's workspaces share the organisation's token, and their clients name their own team
(`team_id`), as Slack asks of calls made with an organisation's token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.chat import commands
from bot.slack.followups import Threads
from bot.slack.history import Freshener
from bot.slack.people import People
from bot.slack.reader import ChannelReader

Spawn = Callable[[Coroutine[Any, Any, None]], None]


@dataclass(frozen=True)
class Workspace:
    tenant: str
    client: AsyncWebClient
    people: People
    reader: ChannelReader
    threads: Threads
    freshener: Freshener


class Workspaces:
    """Finds (or builds) the workspace of each request."""

    def __init__(
        self,
        services: Services,
        template: AsyncWebClient,
        *,
        per_workspace: bool,
        spawn: Spawn,
        ingest_gate: asyncio.Semaphore,
    ) -> None:
        self._services = services
        self._template = template
        """The app's client: the one token's (with one bot token), or a token-less one whose
        connection pool and retry handlers each workspace's client shares."""
        self._per_workspace = per_workspace
        self._spawn = spawn
        self._ingest_gate = ingest_gate
        self._built: dict[str, Workspace] = {}

    def of(self, tenant: str, token: str | None, *, org_wide: bool = False) -> Workspace | None:
        """The workspace `tenant`, reached with `token` (the request's, after Bolt's
        authorization); None for a request Lore holds no token for."""
        if not self._per_workspace:
            return self._built.get("") or self._build("", self._template)
        if not tenant or not token:
            return None
        found = self._built.get(tenant)
        if found is None:
            client = AsyncWebClient(
                token=token,
                base_url=self._template.base_url,
                session=self._template.session,
                retry_handlers=self._template.retry_handlers,
                team_id=tenant if org_wide else None,
            )
            return self._build(tenant, client)
        if found.client.token != token:  # rotated, or installed again
            found.client.token = token
        return found

    def known(self, tenant: str) -> Workspace | None:
        """The workspace a request of `tenant` already reached (None: none yet)."""
        return self._built.get("" if not self._per_workspace else tenant)

    def _build(self, key: str, client: AsyncWebClient) -> Workspace:
        reader = ChannelReader(client, commands.is_command)
        settings = self._services.settings
        workspace = Workspace(
            tenant=key,
            client=client,
            people=People(self._services, client),
            reader=reader,
            threads=Threads(reader),
            freshener=Freshener(
                reader,
                self._services.actions.threads,
                self._spawn,
                self._ingest_gate,
                delay=settings.lore_slack_freshen_seconds,
                max_messages=settings.lore_learn_max_messages,
            ),
        )
        self._built[key] = workspace
        return workspace
