"""The bot token goes only to Slack's file hosts (finding 1).

A file object in an event names its download URL, and remote or external files (and a
crafted event) name another host. The token may go to `files.slack.com` and to the host of
`SLACK_API_URL` (the fake Slack here) only; any other URL is fetched without credentials
through the SSRF-safe fetcher (so an internal address is refused, and said so) — for files
on the message, on a thread's parent and dropped in a DM alike. The "other host" is a
second loopback server on its own port: another origin, which records every header.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.security.conftest import HostileHost, Lore, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")

LEAK = b"# Internal\n\nThe internal launch code word is periwinkle-47.\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host() -> AsyncIterator[HostileHost]:
    async with HostileHost({"/files/leak.md": (LEAK, "text/markdown")}) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def strict(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    """Lore with the default fetch policy: loopback and private addresses refused."""
    async with running_lore(tmp_path_factory.mktemp("lore-files-strict")) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def trusting(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    """Lore whose admin allowed loopback fetching (LORE_CRAWL_ALLOW): the foreign host is
    reachable, so what is checked is only which credentials travel."""
    home = tmp_path_factory.mktemp("lore-files-trusting")
    async with running_lore(home, lore_crawl_allow="127.0.0.1") as running:
        yield running


def foreign_file(host: HostileHost, file_id: str, name: str = "leak.md") -> dict[str, Any]:
    """A file object as Slack shows a remote file: its URLs on another host."""
    url = host.url("/files/leak.md")
    return {
        "id": file_id, "name": name, "title": name, "mimetype": "text/markdown",
        "filetype": "markdown", "size": len(LEAK), "is_external": True,
        "url_private": url, "url_private_download": url,
    }  # fmt: skip


async def test_slack_files_still_download_with_the_token(strict: Lore) -> None:
    strict.begin()
    strict.slack.add_user("UOWN", "own")
    strict.slack.add_file("FOWN", "notes.md", b"# Notes\n\nOur own notes.\n", "text/markdown")
    await strict.dm("UOWN", files=["FOWN"])
    [download] = strict.downloads()
    assert download.authorized
    assert "notes.md" in strict.said("DUOWN", strict.calls("chat.postMessage")[0].params["thread_ts"])


async def test_a_foreign_file_url_never_gets_the_token(trusting: Lore, host: HostileHost) -> None:
    trusting.begin()
    before = len(host.hits.snapshot())
    trusting.slack.add_user("UREM", "rem")
    event = trusting.dm_event("UREM", files=[])
    event.update(subtype="file_share", files=[foreign_file(host, "FREM1")])
    assert await trusting.deliver(event) == 200
    hits = host.hits.snapshot()[before:]
    assert hits, "fetched without credentials through the SSRF-safe fetcher"
    assert host.authorizations == []
    assert trusting.downloads() == []


async def test_a_foreign_file_on_an_internal_address_is_refused_and_said_so(
    strict: Lore, host: HostileHost
) -> None:
    strict.begin()
    before = len(host.hits.snapshot())
    strict.slack.add_user("UINT", "int")
    strict.slack.add_channel("CINT", "int")
    event = strict.mention_event("CINT", "UINT", "add this doc to your memory")
    event["files"] = [foreign_file(host, "FINT1")]
    assert await strict.deliver(event) == 200
    assert host.hits.snapshot()[before:] == [], "an internal address is never contacted"
    said = strict.said("CINT", event["ts"])
    assert "leak.md" in said and "LORE_CRAWL_ALLOW" in said, said
    assert "periwinkle" not in said


async def test_a_thread_parents_foreign_file_never_gets_the_token(trusting: Lore, host: HostileHost) -> None:
    trusting.begin()
    trusting.slack.add_user("UPAR", "par")
    trusting.slack.add_channel("CPAR", "par")
    parent = trusting.next_ts()
    trusting.slack.add_message("CPAR", parent, "the launch doc", "UPAR", files=[foreign_file(host, "FPAR1")])
    before = len(host.hits.snapshot())
    await trusting.mention("CPAR", "UPAR", "remember this", thread_ts=parent)
    assert host.hits.snapshot()[before:], "the parent's file was fetched"
    assert host.authorizations == []


async def test_a_thread_parents_internal_file_is_refused(strict: Lore, host: HostileHost) -> None:
    strict.begin()
    strict.slack.add_user("UPAR2", "par2")
    strict.slack.add_channel("CPAR2", "par2")
    parent = strict.next_ts()
    strict.slack.add_message("CPAR2", parent, "the launch doc", "UPAR2", files=[foreign_file(host, "FPAR2")])
    before = len(host.hits.snapshot())
    ts = await strict.mention("CPAR2", "UPAR2", "remember this", thread_ts=parent)
    assert host.hits.snapshot()[before:] == []
    assert "LORE_CRAWL_ALLOW" in strict.said("CPAR2", parent) or "LORE_CRAWL_ALLOW" in strict.said(
        "CPAR2", ts
    )


async def test_look_alike_hosts_are_not_slack(strict: Lore, host: HostileHost) -> None:
    """`files.slack.com.<other>` and `files.slack.com@<other>` are other hosts: no token,
    and a name that is not in the resolver's table is never connected to."""
    strict.begin()
    strict.slack.add_user("ULOOK", "look")
    before = len(host.hits.snapshot())
    spellings = [
        f"http://files.slack.com@127.0.0.1:{host.port}/files/leak.md",
        "https://files.slack.com.attacker.test/files/leak.md",
        f"http://{strict.slack.base_url.removeprefix('http://')}.attacker.test/files/leak.md",
    ]
    for n, url in enumerate(spellings):
        event = strict.dm_event("ULOOK", files=[])
        file = {**foreign_file(host, f"FLOOK{n}"), "url_private": url, "url_private_download": url}
        event.update(subtype="file_share", files=[file])
        assert await strict.deliver(event) == 200
    assert host.hits.snapshot()[before:] == []
    assert strict.downloads() == []
    assert "periwinkle" not in strict.posted()
