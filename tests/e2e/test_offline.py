"""Offline by default: the whole ingest-and-ask path needs no network at all.

Once in a network namespace with no network (`unshare -n`, as CI runs as root), once in
process with every socket connection recorded, asserting none left this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

LORE = str(Path(sys.executable).with_name("lore"))
DOCS = {
    "deploy.md": "# Deploying\n\nWe deploy the billing service every Tuesday with the blue-green pipeline.\n",
    "oncall.md": "# On-call\n\nThe on-call engineer carries the pager for one week, Monday to Monday.\n",
}


def write_docs(folder: Path) -> Path:
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


def clean_env(home: Path) -> dict[str, str]:
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SLACK_", "CHROMA_", "DATABASE_"))
    }
    return {**keep, "LORE_HOME": str(home), "HOME": str(home)}


def can_unshare() -> bool:
    return (
        shutil.which("unshare") is not None
        and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    )


@pytest.mark.e2e
def test_ingest_and_ask_in_a_namespace_without_network(tmp_path: Path) -> None:
    if not can_unshare():
        if os.environ.get("CI"):
            pytest.fail("CI must prove offline operation: `unshare -n` is not available")
        pytest.skip("`unshare -n` needs root; CI runs this test")
    docs = write_docs(tmp_path / "docs")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = clean_env(tmp_path / "home") | {"TMPDIR": str(temp)}
    ingest = subprocess.run(
        ["unshare", "-n", LORE, "ingest", str(docs), "--index", "team"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ingest.returncode == 0, ingest.stderr
    assert "2 added or updated" in ingest.stdout
    ask = subprocess.run(
        ["unshare", "-n", LORE, "ask", "When do we deploy billing?", "--index", "team", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ask.returncode == 0, ask.stderr
    answer = json.loads(ask.stdout)
    assert answer["citations"][0]["name"] == "deploy.md" and not answer["abstained"]
    assert list(temp.iterdir()) == []  # nothing left in the temp folder (tiktoken copied its encoding there)


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every address a socket tries to connect to; non-loopback ones are refused."""
    seen: list[object] = []
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> None:
        seen.append(address)
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError(f"test forbids network access to {address!r}")
        real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield seen


@pytest.mark.e2e
async def test_the_in_process_path_opens_no_connection(
    tmp_path: Path, connections: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.app.local import files_under, index_for_cli, local_dm
    from bot.app.services import build_services
    from bot.app.settings import Settings
    from bot.cli.knowledge import file_sources
    from knowledge.engine import Request

    docs = write_docs(tmp_path / "docs")
    settings = Settings(_env_file=None, lore_home=tmp_path / "home")
    services = build_services(settings)
    try:
        actor = await local_dm(services)
        index = await index_for_cli(services, actor, "team", create=True)
        await services.ingestor.add_many(index, file_sources(list(files_under([docs]))))
        fresh = services.indexes.get(index.id)
        answer = await services.knowledge.ask(
            Request([fresh], [{"role": "user", "content": "Who carries the pager?"}])
        )
    finally:
        await services.aclose()
    assert answer.citations[0].name == "oncall.md"
    assert connections == [], f"network connections attempted: {connections}"
