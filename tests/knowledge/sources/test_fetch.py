"""The fetcher's SSRF guard, limits and conditional requests.

No test sends traffic anywhere but 127.0.0.1: names resolve through `FakeDNS`, and every
connector is a `Connections` guard that fails the test before connecting anywhere else
(`Connections(allowed=())`: anywhere at all).
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator

import pytest

from knowledge.sources.fetch import Fetcher
from knowledge.sources.web import (
    AllowList,
    FetchError,
    HttpStatus,
    OffSite,
    PageTooLarge,
    Refused,
    TimedOut,
    TooManyRedirects,
    UnsupportedType,
    check_url,
    normalise_ip,
    refusal,
)
from tests.support.site import Connections, FakeDNS, Site

LOOPBACK = AllowList.parse("127.0.0.1")
KB = 1024

# (address as written in a URL, what the refusal says)
ADDRESSES = [
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("10.0.0.1", "private network"),
    ("172.16.5.4", "private network"),
    ("192.168.1.1", "private network"),
    ("169.254.169.254", "link-local"),
    ("100.100.100.200", "not on the public internet"),
    ("0.0.0.0", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("[::1]", "loopback"),
    ("[::]", "unspecified"),
    ("[fe80::1]", "link-local"),
    ("[fe80::1%25eth0]", "link-local"),
    ("[fc00::1]", "unique-local"),
    ("[fd12:3456::1]", "unique-local"),
    ("[fec0::1]", "site-local"),
    ("[ff02::1]", "multicast"),
    ("[::ffff:127.0.0.1]", "loopback"),
    ("[::ffff:10.0.0.1]", "private network"),
    ("[::ffff:169.254.169.254]", "link-local"),
    ("[64:ff9b::a00:1]", "private network"),
    ("[2002:a00:1::1]", "private network"),
]
SPELLINGS = [
    "2130706433",
    "0x7f.1",
    "0x7f000001",
    "017700000001",
    "0177.0.0.1",
    "127.1",
    "127.0.0.1.",
    "１２７.０.０.１",  # full-width digits: IDNA folds them to 127.0.0.1
    "127。0。0。1",  # ideographic full stops, likewise
]


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async with Site(slow_seconds=3.0) as running:
        yield running


def fetcher(allow: AllowList = LOOPBACK, dns: FakeDNS | None = None, **options: object) -> Fetcher:
    return Fetcher(allow, resolve=dns or FakeDNS(), connector_factory=Connections(), **options)  # type: ignore[arg-type]


async def refused(url: str, dns: FakeDNS | None = None, allow: AllowList | None = None) -> str:
    """The refusal for `url`, asserting that no connection was even attempted."""
    connections = Connections(allowed=())
    guarded = Fetcher(allow, resolve=dns or FakeDNS(), connector_factory=connections)
    with pytest.raises(Refused) as caught:
        await guarded.get(url)
    assert connections.attempts == []
    return str(caught.value)


@pytest.mark.parametrize(("host", "reason"), ADDRESSES)
@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_literal_addresses_are_refused_before_connecting(scheme: str, host: str, reason: str) -> None:
    dns = FakeDNS()
    message = await refused(f"{scheme}://{host}:8080/page", dns)
    assert reason in message
    assert "an admin can allow it with LORE_CRAWL_ALLOW" in message
    assert not dns.calls


@pytest.mark.parametrize(("host", "reason"), ADDRESSES)
async def test_names_resolving_to_refused_addresses_are_refused(host: str, reason: str) -> None:
    dns = FakeDNS({"evil.example": [[host.strip("[]").replace("%25", "%")]]})
    assert reason in await refused("https://evil.example/", dns)
    assert dns.calls["evil.example"] == 1


@pytest.mark.parametrize("host", SPELLINGS)
async def test_odd_ipv4_spellings_are_read_as_the_address_they_mean(host: str) -> None:
    assert "loopback" in await refused(f"http://{host}/")


def test_normalise_ip_reads_every_spelling() -> None:
    loopback = ipaddress.ip_address("127.0.0.1")
    assert [normalise_ip(host) for host in SPELLINGS[:7]] == [loopback] * 7
    assert normalise_ip("[::ffff:7f00:1]") == loopback
    assert normalise_ip("docs.example.com") is None
    assert normalise_ip("0xzz.1") is None


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "2a00:1450::1"])
def test_public_addresses_pass(address: str) -> None:
    assert refusal(ipaddress.ip_address(address)) is None


async def test_one_private_address_among_public_ones_refuses_the_name() -> None:
    dns = FakeDNS({"mixed.example": [["93.184.216.34", "10.0.0.7"]]})
    assert "private network" in await refused("http://mixed.example/", dns)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "gopher://example.com/",
        "javascript:alert(1)",
        "data:,hi",
    ],
)
async def test_only_http_and_https(url: str) -> None:
    assert await refused(url) == "only http and https links can be added"


@pytest.mark.parametrize(
    "url", ["http://user:secret@example.com/", "http://user@example.com/", "https://:pw@example.com/"]
)
async def test_no_credentials_in_links(url: str) -> None:
    assert "user name or password" in await refused(url)


async def test_unknown_names_fail_with_the_reason() -> None:
    with pytest.raises(FetchError, match=r"couldn't find the site nowhere\.example"):
        await fetcher(dns=FakeDNS()).get("http://nowhere.example/")


async def test_allow_list_by_host_name(site: Site) -> None:
    dns = FakeDNS({"wiki.internal": [["127.0.0.1"]]})
    page = await fetcher(AllowList.parse("wiki.internal"), dns).get(f"http://wiki.internal:{site.port}/docs/")
    assert page.status == 200
    assert b"<title>Docs</title>" in page.body
    assert "private network" in await refused(
        "http://other.internal/", FakeDNS({"other.internal": [["10.1.1.1"]]})
    )


async def test_allow_list_by_network(site: Site) -> None:
    dns = FakeDNS({"docs.internal": [["127.0.0.1"]]})
    page = await fetcher(AllowList.parse(" 10.0.0.0/8, 127.0.0.0/8 "), dns).get(
        f"http://docs.internal:{site.port}/docs/page-1"
    )
    assert page.status == 200
    assert "loopback" in await refused(site.url("/docs/"), allow=AllowList.parse("10.0.0.0/8"))


async def test_redirect_to_the_metadata_address_is_refused(site: Site) -> None:
    connections = Connections()
    guarded = Fetcher(LOOPBACK, resolve=FakeDNS(), connector_factory=connections)
    with pytest.raises(Refused, match="link-local"):
        await guarded.get(site.url("/edge/to-metadata"))
    assert site.paths() == ["/edge/to-metadata"]
    assert set(connections.attempts) == {"127.0.0.1"}


async def test_redirect_to_a_name_resolving_privately_is_refused(site: Site) -> None:
    dns = FakeDNS({"internal.example": [["10.0.0.5"]]})
    connections = Connections()
    guarded = Fetcher(LOOPBACK, resolve=dns, connector_factory=connections)
    with pytest.raises(Refused, match="private network"):
        await guarded.get(site.url("/edge/to-internal"))
    assert dns.calls["internal.example"] == 1
    assert "10.0.0.5" not in connections.attempts


async def test_dns_rebinding_cannot_swap_the_checked_address(site: Site) -> None:
    """The first answer is checked and used for every connection to that host; a second
    lookup, which would answer differently, never happens."""
    rebinding = {"docs.example": [["127.0.0.1"], ["10.0.0.9"]]}
    dns, connections = FakeDNS(rebinding), Connections()
    guarded = Fetcher(LOOPBACK, resolve=dns, connector_factory=connections)
    page = await guarded.get(f"http://docs.example:{site.port}/edge/moved")  # two requests, one host
    assert page.url == f"http://docs.example:{site.port}/edge/target"
    assert dns.calls["docs.example"] == 1

    dns = FakeDNS(rebinding)
    guarded = Fetcher(LOOPBACK, resolve=dns, connector_factory=connections)
    async with guarded.session() as session:
        await session.check(f"http://docs.example:{site.port}/")
        for number in range(1, 6):
            await session.get(f"http://docs.example:{site.port}/docs/page-{number}")
    assert dns.calls["docs.example"] == 1  # once per session, however many requests
    assert set(connections.attempts) == {"127.0.0.1"}


async def test_check_refuses_before_any_request(site: Site) -> None:
    dns = FakeDNS({"intranet.example": [["192.168.0.10"]]})
    async with Fetcher(LOOPBACK, resolve=dns, connector_factory=Connections(allowed=())).session() as session:
        with pytest.raises(Refused, match="private network"):
            await session.check("http://intranet.example/wiki/")
        await session.check("http://unknown.example/")  # not found is not a refusal
    assert site.log == []


async def test_declared_size_over_the_limit(site: Site) -> None:
    with pytest.raises(PageTooLarge, match="the page is 256 KB, over the 64 KB limit"):
        await fetcher(max_bytes=64 * KB).get(site.url("/edge/huge"))


async def test_streamed_size_over_the_limit(site: Site) -> None:
    with pytest.raises(PageTooLarge, match="the page is over the 64 KB limit"):
        await fetcher(max_bytes=64 * KB).get(site.url("/edge/stream-huge"))


async def test_timeouts(site: Site) -> None:
    with pytest.raises(TimedOut, match=r"longer than 0\.2 s"):
        await fetcher(timeout=0.2).get(site.url("/edge/slow"))
    with pytest.raises(TimedOut, match=r"longer than 0\.3 s"):
        await fetcher().get(site.url("/edge/slow"), timeout=0.3)


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/edge/missing", 404, "the site answered 404 Not Found"),
        ("/edge/gone", 410, "the site answered 410 Gone"),
        ("/edge/broken", 500, "the site answered 500 Internal Server Error"),
        ("/edge/busy", 429, "the site answered 429 Too Many Requests"),
    ],
)
async def test_error_statuses(site: Site, path: str, status: int, message: str) -> None:
    with pytest.raises(HttpStatus) as caught:
        await fetcher().get(site.url(path))
    assert (caught.value.status, str(caught.value)) == (status, message)


async def test_retry_after_is_passed_on(site: Site) -> None:
    site.retry_after = "7"
    with pytest.raises(HttpStatus) as caught:
        await fetcher().get(site.url("/edge/unavailable"))
    assert (caught.value.status, caught.value.retry_after) == (503, "7")


async def test_redirects_are_followed_up_to_the_limit(site: Site) -> None:
    page = await fetcher(max_redirects=7).get(site.url("/edge/chain/0"))
    assert page.url == site.url("/edge/target")
    with pytest.raises(TooManyRedirects, match="redirected more than 5 times"):
        await fetcher().get(site.url("/edge/chain/0"))
    with pytest.raises(TooManyRedirects):
        await fetcher().get(site.url("/edge/loop-a"))
    assert site.hits("/edge/loop-a") == 3


async def test_redirects_can_be_kept_within_a_scope(site: Site) -> None:
    async with fetcher().session() as session:
        with pytest.raises(OffSite) as caught:
            await session.get(site.url("/edge/away"), within=lambda url: url.startswith(site.url("/edge/")))
    assert caught.value.url == site.url("/docs/")
    assert site.hits("/docs/") == 0


async def test_conditional_requests_answer_304(site: Site) -> None:
    first = await fetcher().get(site.url("/docs/page-1"))
    etag, modified = first.headers["etag"], first.headers["LAST-MODIFIED"]
    again = await fetcher().get(site.url("/docs/page-1"), headers={"If-None-Match": etag})
    assert (again.status, again.body, again.headers["ETag"]) == (304, b"", etag)
    since = await fetcher().get(site.url("/docs/page-1"), headers={"If-Modified-Since": modified})
    assert since.status == 304


async def test_types_not_asked_for_are_not_downloaded(site: Site) -> None:
    async with fetcher().session() as session:
        with pytest.raises(UnsupportedType, match=r"not a supported type \(image/png\)"):
            await session.get(site.url("/edge/image.png"), types={"text/html"})
        page = await session.get(site.url("/edge/manual.pdf"), types={"application/pdf"})
    assert page.mime_type == "application/pdf"
    assert page.body.startswith(b"%PDF-")


async def test_one_session_serves_many_gets(site: Site) -> None:
    connections = Connections()
    guarded = Fetcher(LOOPBACK, resolve=FakeDNS(), connector_factory=connections)
    async with guarded.session() as session:
        pages = [await session.get(site.url(f"/docs/page-{n}")) for n in range(1, 21)]
    assert [p.status for p in pages] == [200] * 20
    assert len(connections.attempts) == 1  # keep-alive: one connection for all


def test_check_url_reads_the_host_as_aiohttp_does() -> None:
    assert check_url("https://Docs.Example.com/a", AllowList()) == ("docs.example.com", 443)
    assert check_url("http://xn--bcher-kva.example:8080/", AllowList()) == ("xn--bcher-kva.example", 8080)
    assert check_url("http://bücher.example/", AllowList()) == ("xn--bcher-kva.example", 80)
    with pytest.raises(Refused, match="loopback"):
        check_url("http://１２７.０.０.１/", AllowList())
