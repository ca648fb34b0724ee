"""`lore api-key create | list | revoke`, and `lore serve` as a real process on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli.main import app
from storage.db import open_database
from storage.repositories.api_keys import ApiKeyRepository
from tests.support.ports import free_port

LORE = str(Path(sys.executable).with_name("lore"))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no .env from the developer's checkout
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def lore(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_create_list_and_revoke_keys(home: Path) -> None:
    created = lore("api-key", "create", "--name", "ci", "--tenant", "T1")
    assert created.exit_code == 0, created.output
    secret = created.stdout.splitlines()[1]
    assert secret.startswith("lore_") and len(secret) > 40
    assert "only time" in created.stderr

    listed = lore("api-key", "list")
    assert listed.exit_code == 0
    assert "ci" in listed.stdout and secret[:12] in listed.stdout
    assert secret not in listed.stdout and "active" in listed.stdout

    again = lore("api-key", "create", "--name", "ci", "--tenant", "T1")
    assert again.exit_code == 1
    assert "already has an active API key named 'ci'" in again.stderr

    revoked = lore("api-key", "revoke", "ci")
    assert revoked.exit_code == 0, revoked.output
    assert "Revoked API key 1 (ci) of tenant T1" in revoked.stdout
    assert "revoked" in lore("api-key", "list", "--tenant", "T1").stdout
    assert lore("api-key", "revoke", "nope").exit_code == 1

    db = open_database(f"sqlite:///{home / 'lore.db'}")
    try:
        assert ApiKeyRepository(db).authenticate(secret) is None
    finally:
        db.dispose()


def test_a_key_for_a_user(home: Path) -> None:
    created = lore("api-key", "create", "--name", "laptop", "--user", "UADA")
    assert created.exit_code == 0, created.output
    assert "for tenant local as UADA" in created.stdout
    db = open_database(f"sqlite:///{home / 'lore.db'}")
    try:
        key = ApiKeyRepository(db).authenticate(created.stdout.splitlines()[1])
    finally:
        db.dispose()
    assert key is not None and key.tenant_id == "local" and key.user_id is not None


def request(
    port: int, method: str, path: str, secret: str | None = None, body: Any = None
) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    sent = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    sent.add_header("Content-Type", "application/json")
    if secret:
        sent.add_header("Authorization", f"Bearer {secret}")
    try:
        with urllib.request.urlopen(sent, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def wait_until_up(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            if request(port, "GET", "/healthz")[0] == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("lore serve did not start within a minute")


@pytest.mark.e2e
def test_lore_serve_answers_over_http_and_stops_on_sigterm(home: Path) -> None:
    secret = lore("api-key", "create", "--name", "e2e").stdout.splitlines()[1]
    port = free_port()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
    }
    process = subprocess.Popen(
        [LORE, "serve", "--host", "127.0.0.1"],
        env={**env, "LORE_HOME": str(home), "PORT": str(port)},
        cwd=home.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_up(port, process)
        assert request(port, "GET", "/v1/indexes")[0] == 401
        assert request(port, "POST", "/v1/indexes", secret, {"name": "served"})[0] == 201
        text = {
            "name": "ports.md",
            "text": "# Ports\n\nThe HTTP API listens on the port in $PORT when it is set.",
            "context_type": "technical",
            "content_domain": "operations",
            "document_category": "reference",
        }
        assert request(port, "POST", "/v1/indexes/served/documents/text", secret, text)[0] == 201
        question = {
            "messages": [{"role": "user", "content": "Which port does the HTTP API use?"}],
            "index_name": "served",
        }
        status, answer = request(port, "POST", "/v1/chat/completions", secret, question)
        assert status == 200, answer
        assert "$PORT" in answer["choices"][0]["message"]["content"]
        # The admin console is served beside the API: `lore admin link` signs in once.
        linked = lore("admin", "link", "--port", str(port))
        assert linked.exit_code == 0, linked.output
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        with browser.open(linked.stdout.strip(), timeout=60) as page:  # to the overview, signed in
            assert page.url.endswith("/console/overview") and 'id="questions"' in page.read().decode()
        with pytest.raises(urllib.error.HTTPError) as used:
            urllib.request.urlopen(linked.stdout.strip(), timeout=60)
        used.value.close()
        assert used.value.code in (400, 403, 404, 410)
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert f"http://127.0.0.1:{port}" in out
