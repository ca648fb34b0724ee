"""SSRF (held attempts, kept): every spelling of a loopback, private, link-local or
metadata address is refused before any connection, after DNS and after every redirect.

The fetcher here resolves names from a table (`Lookups`, recording what was asked) and its
connector records every connection attempt and fails the test instead of making one to
anything but 127.0.0.1; the Slack test uses only loopback spellings, aimed at a recording
server, through `add <url> to your memory`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from knowledge.sources.fetch import Fetcher
from knowledge.sources.web import AllowList, Refused
from tests.security.conftest import HostileHost, Lookups, Lore, running_lore
from tests.support.site import Connections

pytestmark = pytest.mark.asyncio(loop_scope="module")

SPELLINGS = [
    "http://127.0.0.1/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://0/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0251.0376.0251.0376/",
    "http://2852039166/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://１２７.０.０.１/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://rebind.test/",
    "http://metadata.test/",
    "http://loopback6.test/",
    "http://user@127.0.0.1/",
    "http://user:pass@example.test/",
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_INFO",
    "ftp://127.0.0.1/",
    "http:///path-only",
]
TABLE = {
    "localhost": "127.0.0.1",
    "localhost.": "127.0.0.1",
    "rebind.test": "10.0.0.1",
    "metadata.test": "169.254.169.254",
    "loopback6.test": "::1",
}


def guarded(connections: Connections, lookups: Lookups, allow: str = "") -> Fetcher:
    return Fetcher(AllowList.parse(allow), resolve=lookups, connector_factory=connections)


@pytest.mark.parametrize("url", SPELLINGS)
async def test_every_spelling_is_refused_without_a_connection(url: str) -> None:
    connections = Connections(allowed=())
    with pytest.raises(Refused):
        await guarded(connections, Lookups(TABLE)).get(url)
    assert connections.attempts == []


async def test_a_redirect_to_an_internal_address_is_refused_before_connecting() -> None:
    """The first hop is allowed (the admin allowed this one loopback port's host), the
    redirect to the metadata service or another loopback spelling is not followed."""
    targets = [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://rebind.test/",
        "file:///etc/passwd",
    ]
    redirects = {f"/go/{n}": target for n, target in enumerate(targets)}
    async with HostileHost({"/ok": (b"fine", "text/plain")}, redirects) as host:
        for path in redirects:
            connections = Connections(allowed=("127.0.0.1",))
            with pytest.raises(Refused):
                await guarded(connections, Lookups(TABLE), allow="127.0.0.1/32").get(host.url(path))
            assert set(connections.attempts) == {"127.0.0.1"}


async def test_dns_is_asked_once_per_session_so_it_cannot_rebind() -> None:
    lookups = Lookups({"flip.test": "127.0.0.1"})
    connections = Connections(allowed=())
    fetcher = guarded(connections, lookups)
    async with fetcher.session() as session:
        for _ in range(3):
            with pytest.raises(Refused):
                await session.get("http://flip.test/")
    assert lookups.asked == ["flip.test"]
    assert connections.attempts == []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def strict(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(
        tmp_path_factory.mktemp("lore-ssrf"), table={"localhost": "127.0.0.1"}
    ) as running:
        yield running


async def test_adding_an_internal_url_in_slack_is_refused_and_nothing_is_fetched(strict: Lore) -> None:
    async with HostileHost({"/secret": (b"internal only: the vault code is 0451", "text/plain")}) as host:
        port = host.port
        urls = [
            f"http://127.0.0.1:{port}/secret",
            f"http://2130706433:{port}/secret",
            f"http://0x7f.1:{port}/secret",
            f"http://[::ffff:127.0.0.1]:{port}/secret",
            f"http://localhost:{port}/secret",
        ]
        strict.slack.add_channel("CSSRF", "ssrf")
        strict.slack.add_user("USSRF", "ssrf")
        for url in urls:
            strict.begin()
            ts = await strict.mention("CSSRF", "USSRF", f"add <{url}> to your memory")
            said = strict.said("CSSRF", ts)
            assert "LORE_CRAWL_ALLOW" in said, said
            assert "0451" not in said
        assert host.hits.snapshot() == []
