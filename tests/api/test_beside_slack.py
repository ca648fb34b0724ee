"""`lore run` in HTTP mode: one aiohttp application serves Slack's events and the HTTP API."""

from __future__ import annotations

import io
import json
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from bot.chat.runtime import open_runtime
from bot.cli.run import http_app
from bot.slack.app import build_app
from storage.repositories.api_keys import ApiKeyRepository
from tests.bot.conftest import BOT, BOT_TOKEN, SIGNING_SECRET, TEAM, lore_settings
from tests.fakes.slack_server import FakeSlack, signed_headers


@pytest.mark.asyncio
async def test_slack_events_and_the_api_share_one_server(tmp_path: Path) -> None:
    async with FakeSlack(BOT_TOKEN, TEAM, BOT) as slack:
        settings = lore_settings(tmp_path, slack, lore_jobs_in_process=False)
        async with open_runtime(settings) as runtime:
            runtime.services.directory.ensure_tenant(TEAM)
            secret = ApiKeyRepository(runtime.services.db).create(TEAM, "beside-slack").secret
            app, events = build_app(runtime, settings)
            server = TestServer(http_app(app, SIGNING_SECRET, runtime.services), host="127.0.0.1")
            try:
                await server.start_server()
                async with aiohttp.ClientSession(base_url=str(server.make_url("/"))) as http:
                    await _check(http, secret)
            finally:
                await server.close()
                await events.close()


async def _check(http: aiohttp.ClientSession, secret: str) -> None:
    async with http.get("/healthz") as response:
        assert response.status == 200
    async with http.get("/v1/indexes") as response:
        assert response.status == 401
        assert (await response.json())["error"]["type"] == "authentication_error"
    async with http.get("/v1/models", headers={"Authorization": f"Bearer {secret}"}) as response:
        assert response.status == 200
        assert (await response.json())["data"][0]["id"] == "lore-extractive"

    challenge = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "t"})
    headers = {**signed_headers(challenge, SIGNING_SECRET), "Content-Type": "application/json"}
    async with http.post("/slack/events", data=challenge, headers=headers) as response:
        assert response.status == 200
        assert "c-123" in await response.text()
    async with http.post(
        "/slack/events", data=challenge, headers={"Content-Type": "application/json"}
    ) as response:
        assert response.status == 401  # Bolt's refusal of an unsigned request, untouched by the API
        assert json.loads(await response.text()) == {"error": "invalid request"}  # Bolt's, not ours
    big = io.BytesIO(b"{" + b" " * (3 * 1024 * 1024) + b"}")
    async with http.post("/slack/events", data=big, headers={"Content-Type": "application/json"}) as response:
        assert response.status == 413
