"""The CLI's site commands: `lore ingest URL --site` crawls with a progress bar and a summary,
`lore jobs` lists jobs, `lore jobs --follow ID` prints a job's log; `lore ingest URL` adds one page."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.site import Site

LORE = str(Path(sys.executable).with_name("lore"))


@pytest.fixture
def site() -> Iterator[Site]:
    with Site(pages=6) as running:
        yield running


def lore(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
    }
    env.update(LORE_HOME=str(home), LORE_CRAWL_ALLOW="127.0.0.1", LORE_CRAWL_DELAY_SECONDS="0")
    run = subprocess.run([LORE, *args], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run


@pytest.mark.e2e
def test_sites_and_pages_from_the_command_line(tmp_path: Path, site: Site) -> None:
    home = tmp_path / "home"
    crawled = lore(home, "ingest", site.url("/docs/"), "--site", "--index", "docs")
    assert "Done indexing 127.0.0.1/docs" in crawled.stdout and "8 pages indexed (8 new" in crawled.stdout
    listed = lore(home, "jobs")
    header, row = listed.stdout.splitlines()[:2]
    assert header.split()[:3] == ["job", "state", "pages"]
    job_id, state, progress = row.split()[:3]
    handled, found = progress.split("/")
    assert (job_id, state) == ("1", "succeeded") and int(handled) == int(found) >= 8
    followed = lore(home, "jobs", "--follow", "1")
    assert "queued: manual crawl of 127.0.0.1/docs" in followed.stdout
    assert "done in" in followed.stdout and followed.stdout.rstrip().endswith("job 1: succeeded")

    page = lore(home, "ingest", site.url("/edge/readme.md"), "--index", "docs")
    assert "1 added or updated" in page.stdout
    assert site.url("/edge/readme.md") in lore(home, "docs", "docs").stdout
