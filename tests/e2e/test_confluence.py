"""The issue's "done when", through the real `lore` entry points: the CLI connects the fake
Confluence (the token read from an environment variable), a scripted shell session syncs the
ENG space into an index named "confluence", enables it in a channel, and answers a question
from a page with a citation linking to that page."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.lore_cli import LORE, lore_env
from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, Seeded, seed

SCRIPT = """\
connect confluence
list confluence spaces
add the ENG space to the confluence index
/in #eng
enable the confluence index
how do we deploy the payments API?
"""


@pytest.fixture
def confluence() -> Iterator[tuple[FakeConfluence, Seeded]]:
    with FakeConfluence() as fake:
        yield fake, seed(fake)


def run(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LORE, *args], env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300
    )


@pytest.mark.e2e
def test_connect_sync_enable_and_answer_with_a_citation(
    tmp_path: Path, confluence: tuple[FakeConfluence, Seeded]
) -> None:
    fake, pages = confluence
    env = {**lore_env(tmp_path), "CONFLUENCE_TOKEN": TOKEN}
    connected = run(
        [
            "source",
            "add",
            "confluence",
            "--url",
            fake.base_url,
            "--email",
            EMAIL,
            "--token-env",
            "CONFLUENCE_TOKEN",
        ],
        env,
        tmp_path,
    )
    assert connected.returncode == 0, connected.stderr
    assert (
        "Connected Confluence at 127.0.0.1 as Ada Lovelace (ada@example.com, API token …wxyz)"
        in connected.stdout
    )

    session = run(["shell"], env, tmp_path, stdin=SCRIPT)
    assert session.returncode == 0, session.stderr
    said = session.stdout
    assert (
        "The shell can't show a private form for credentials, so connect Confluence from the command line"
        in said
    )
    assert "• ENG — Engineering" in said and "• OPS — Operations" in said
    assert "Syncing the Confluence space ENG into the confluence index." in said
    assert "Indexing Confluence ENG… 6/6 pages" in said
    assert "Done indexing Confluence ENG in" in said
    assert (
        "(now in #eng)" in said and "Enabled the confluence index (a shared index you created) here." in said
    )
    answer = said.split("Enabled the confluence index (a shared index you created) here.", 1)[1]
    deploy_url = f"{fake.base_url}/spaces/ENG/pages/{pages.deploy}/Deploy"
    assert "blue-green pipeline" in answer
    assert f"] Deploy › Deploying the API <{deploy_url}>, Ada Lovelace" in answer, answer  # page › section
    assert "(confluence)" in answer
    assert TOKEN not in connected.stdout + connected.stderr + said + session.stderr
    print(connected.stdout + said)  # the session, for `pytest -s`
