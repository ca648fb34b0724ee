"""Secrets in output (finding 11): `lore doctor` and settings errors never print the password
in DATABASE_URL or the credentials inside OPENAI_BASE_URL (user info or a key in the query);
the unauthenticated `/readyz` says which component failed and nothing more (no data path, no
exception text).

Every address is a closed port on 127.0.0.1, so nothing is resolved and nothing answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli.main import app
from tests.api.conftest import running_api
from tests.fakes.openai_server import HttpError

DB_PASSWORD = "hunter2-DBPASS-0192"
URL_PASSWORD = "sk-URLPASS-8765"
QUERY_KEY = "sk-QUERYKEY-4321"
API_KEY = "sk-APIKEY-1357-abcdefghijklmnopqrstuvwxyz"
SECRETS = (DB_PASSWORD, URL_PASSWORD, QUERY_KEY, API_KEY)


def closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_lore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str, **env: str) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)  # no developer .env
    runner = CliRunner()
    result = runner.invoke(app, list(args), env={"LORE_HOME": str(tmp_path / "home"), **env})
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes is not None else "")


def leaked(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_doctor_masks_the_database_password_and_llm_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = closed_port()
    code, output = run_lore(
        tmp_path,
        monkeypatch,
        "doctor",
        DATABASE_URL=f"postgresql+psycopg://lore:{DB_PASSWORD}@127.0.0.1:{port}/lore?connect_timeout=2",
        OPENAI_BASE_URL=f"http://ada:{URL_PASSWORD}@127.0.0.1:{port}/v1?api_key={QUERY_KEY}",
        OPENAI_API_KEY=API_KEY,
        LLM_MAX_RETRIES="0",
    )
    assert code == 1, output  # the database and the LLM cannot be reached
    assert "DATABASE_URL" in output and "OPENAI_BASE_URL" in output
    assert f"127.0.0.1:{port}" in output, "the address is still shown, only the secrets are not"
    assert leaked(output) == []


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DATABASE_URL", f"mysql://root:{DB_PASSWORD}@127.0.0.1/lore"),
        ("OPENAI_BASE_URL", f"http://ada:{URL_PASSWORD}@127.0.0.1:1/v1?api_key={QUERY_KEY}"),
    ],
)
def test_settings_errors_mask_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    env = {variable: value}
    if variable == "OPENAI_BASE_URL":
        env["LORE_CRAWL_MAX_PAGES"] = "not-a-number"  # an error elsewhere: the URL is still shown
    code, output = run_lore(tmp_path, monkeypatch, "doctor", **env)
    assert code == 2, output
    assert "invalid setting" in output
    assert leaked(output) == []


@pytest.mark.asyncio
async def test_readyz_says_which_component_failed_and_nothing_more(tmp_path: Path) -> None:
    remote: dict[str, Any] = {"embedding_model": "openai:text-embedding-3-small"}
    async with running_api(tmp_path, llm=True, seed=False, **remote) as api:
        assert api.llm is not None
        api.llm.enqueue_embeddings(HttpError(500, message=f"upstream said {QUERY_KEY}"))
        status, body = await api.call("GET", "/readyz", key=None)
    assert status == 503
    assert body["ready"] is False
    assert body["checks"]["embedder"]["ok"] is False
    text = str(body)
    assert str(tmp_path) not in text, "no data path"
    assert "Error" not in text and QUERY_KEY not in text, "no exception text"
    assert all(set(check) == {"ok", "detail"} for check in body["checks"].values())


@pytest.mark.asyncio
async def test_readyz_shows_no_data_path_when_ready(tmp_path: Path) -> None:
    async with running_api(tmp_path, seed=False) as api:
        status, body = await api.call("GET", "/readyz", key=None)
    assert status == 200
    assert str(tmp_path) not in str(body)
    assert "lore.db" not in str(body) and "chroma" not in str(body).lower()


def test_a_url_without_secrets_is_shown_as_written() -> None:
    from bot.app.masking import mask_url

    assert mask_url("sqlite:////srv/lore/lore.db") == "sqlite:////srv/lore/lore.db"
    assert mask_url("sqlite:////srv/lore/x.db?key=k1234") == "sqlite:////srv/lore/x.db?key=***"
