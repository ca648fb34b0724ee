"""The crawler against a loopback site: scope, robots.txt, sitemaps, de-duplication, every
limit, Retry-After, conditional refresh, resume, cancellation and refusals.

Loopback is allowed through `AllowList.parse("127.0.0.1")`; every connector is a
`Connections` guard, so a request meant for anywhere else fails the test instead of leaving
the machine.
"""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from protego import Protego

from knowledge.settings import KnowledgeSettings
from knowledge.sources.crawl import (
    DUPLICATE,
    NOINDEX,
    OUTSIDE,
    CrawledPage,
    Crawler,
    CrawlLimits,
    Validators,
)
from knowledge.sources.fetch import Fetcher
from knowledge.sources.pages import Scope, canonical, read_html
from knowledge.sources.robots import DISALLOWED, Pacer, Robots, read_robots, retry_after
from knowledge.sources.sitemaps import parse_sitemap
from knowledge.sources.web import AllowList, HttpStatus, Page, Refused
from tests.support.site import Connections, FakeDNS, Site

KB = 1024
DOCS_PAGES = 40
# the index, page-1..40 and /docs/hidden (listed only in the sitemap)
DOCS_FETCHED = DOCS_PAGES + 2


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async with Site(pages=DOCS_PAGES) as running:
        yield running


class Pages:
    """An `on_page` callback that keeps every outcome."""

    def __init__(self) -> None:
        self.pages: list[CrawledPage] = []

    async def __call__(self, page: CrawledPage) -> None:
        self.pages.append(page)

    def paths(self, outcome: str) -> list[str]:
        return sorted(
            page.url.split(":", 2)[2].partition("/")[2] for page in self.pages if page.outcome == outcome
        )

    def get(self, url: str) -> CrawledPage:
        [page] = [page for page in self.pages if page.url == url]
        return page


class FakeTime:
    """A clock that moves only when slept on (or told to)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def crawler(
    *,
    dns: FakeDNS | None = None,
    time: FakeTime | None = None,
    connections: Connections | None = None,
    **limits: object,
) -> Crawler:
    fetcher = Fetcher(
        AllowList.parse("127.0.0.1"), resolve=dns or FakeDNS(), connector_factory=connections or Connections()
    )
    settings = CrawlLimits(**{"delay_seconds": 0.0, **limits})  # type: ignore[arg-type]
    if time is None:
        return Crawler(fetcher, settings)
    return Crawler(fetcher, settings, sleep=time.sleep, clock=time.clock)


def docs_paths(site: Site, status: int | None = None) -> Counter[str]:
    return Counter(path for path in site.paths(status) if path.startswith("/docs/"))


async def test_crawls_every_page_under_the_prefix_once(site: Site) -> None:
    pages, lines = Pages(), list[str]()
    report = await crawler().crawl([site.url("/docs/")], pages, log=lines.append)

    assert report.fetched == DOCS_FETCHED
    assert report.found == DOCS_FETCHED + 1  # and the page robots.txt keeps LoreBot from
    assert report.skipped == {DISALLOWED: 1}
    assert (report.failed, report.gone, report.unchanged, report.limits_hit) == (0, 0, 0, [])
    requested = docs_paths(site)
    assert set(requested.values()) == {1}, "each page fetched once"
    assert len(requested) == DOCS_FETCHED
    outside = {path for path in site.paths() if not path.startswith("/docs/")}
    assert outside == {"/robots.txt", "/sitemap_index.xml", "/sitemaps/docs.xml", "/sitemaps/blog.xml.gz"}
    assert pages.paths("skipped") == ["docs/private/secret"]
    assert any("Sitemaps list" in line for line in lines)


async def test_pages_carry_canonical_links_title_depth_and_validators(site: Site) -> None:
    pages = Pages()
    await crawler().crawl([site.url("/docs/")], pages)

    index = pages.get(site.url("/docs/"))
    assert index.links == (
        *(site.url(f"/docs/page-{n}") for n in range(1, 11)),
        site.url("/docs/private/secret"),
    )
    assert (index.title, index.depth, index.mime_type) == ("Docs", 0, "text/html")
    assert index.validators.etag and index.validators.last_modified
    assert index.body.startswith(b"<!DOCTYPE html>")
    assert pages.get(site.url("/docs/page-15")).depth == 2
    assert pages.get(site.url("/docs/page-35")).depth == 4
    hidden = pages.get(site.url("/docs/hidden"))
    assert (hidden.outcome, hidden.depth) == ("fetched", 1)


async def test_sitemap_at_the_default_place(site: Site) -> None:
    site.sitemap_in_robots = False
    pages = Pages()
    await crawler().crawl([site.url("/docs/")], pages)
    assert site.hits("/sitemap.xml") == 1
    assert site.hits("/docs/sitemap.xml") == 1  # a docs site often keeps its own (404 here)
    assert "docs/hidden" in pages.paths("fetched")


async def test_user_agent_names_the_robot_and_the_contact(site: Site) -> None:
    await crawler(contact_url="https://example.org/about-lore", max_pages=1).crawl(
        [site.url("/docs/")], Pages()
    )
    agents = {hit.headers["User-Agent"] for hit in site.log}
    assert agents == {"LoreBot/0.1 (+https://example.org/about-lore)"}


async def test_depth_limit(site: Site) -> None:
    pages, lines = Pages(), list[str]()
    report = await crawler(max_depth=2).crawl([site.url("/docs/")], pages, log=lines.append)
    assert report.limits_hit == ["depth (2)"]
    assert "Limit reached: depth (2)" in lines
    assert site.hits("/docs/page-20") == 1
    assert site.hits("/docs/page-21") == 0
    assert report.fetched == 20 + 2
    assert report.found == report.fetched + 1 + 10  # the private page; page-21..30 found, not fetched


async def test_page_limit(site: Site) -> None:
    report = await crawler(max_pages=10).crawl([site.url("/docs/")], Pages())
    assert report.limits_hit == ["pages per job (10)"]
    assert report.fetched == 10
    assert sum(docs_paths(site).values()) == 10


async def test_time_limit() -> None:
    time = FakeTime()

    async def on_page(page: CrawledPage) -> None:
        time.now += 10

    async with Site() as site:
        report = await crawler(time=time, max_seconds=35, concurrency=1).crawl([site.url("/docs/")], on_page)
    assert report.limits_hit == ["total time (35 s)"]
    assert report.fetched + sum(report.skipped.values()) == 4
    assert report.seconds == 40


async def test_awkward_pages(site: Site) -> None:
    dns, connections, pages, lines = FakeDNS(), Connections(), Pages(), list[str]()
    edge = crawler(dns=dns, connections=connections, request_timeout=0.3, max_page_bytes=64 * KB)
    report = await edge.crawl([site.url("/edge/")], pages, log=lines.append)

    def reasons(outcome: str) -> dict[str, str | None]:
        return {
            page.url.rpartition("/edge/")[2]: page.reason for page in pages.pages if page.outcome == outcome
        }

    assert sorted(reasons("fetched")) == [
        *("", "behind-quiet", "busy", "manual.pdf", "notes.txt", "readme.md", "target", "unavailable")
    ]
    assert reasons("gone") == {"missing": "the site answered 404", "gone": "the site answered 410"}
    assert reasons("failed") == {
        "broken": "the site answered 500",
        "slow": "the site took longer than 0.3 s to answer",
        "loop-a": "it redirected more than 5 times",
        "chain/0": "it redirected more than 5 times",
    }
    skipped = reasons("skipped")
    duplicate = {name for name, reason in skipped.items() if reason == DUPLICATE}
    assert duplicate in ({"moved"}, {"copy?ref=feed"})  # whichever reached /edge/target second
    assert {name: reason for name, reason in skipped.items() if name not in duplicate} == {
        "away": OUTSIDE,
        "to-metadata": OUTSIDE,
        "to-internal": OUTSIDE,
        "image.png": "not a supported type (image/png)",
        "huge": "larger than 64 KB",
        "stream-huge": "larger than 64 KB",
        "quiet": NOINDEX,  # and its link followed
    }
    limits = ["bytes per page (64 KB)", "per-request timeout (0.3 s)", "redirects (5)"]
    assert sorted(report.limits_hit) == limits
    assert sorted(line for line in lines if line.startswith("Limit reached")) == [
        f"Limit reached: {limit}" for limit in limits
    ]
    assert pages.get(site.url("/edge/manual.pdf")).mime_type == "application/pdf"
    assert pages.get(site.url("/edge/readme.md")).links == (site.url("/edge/notes.txt"),)
    assert (site.hits("/edge/busy"), site.hits("/edge/unavailable")) == (2, 2)
    assert site.hits("/edge/image.png") == 1
    assert site.hits("/docs/") == 0
    assert not dns.calls
    assert set(connections.attempts) == {"127.0.0.1"}


async def test_retry_after_is_honoured() -> None:
    time = FakeTime()
    async with Site(retry_after="3") as site:
        pages = Pages()
        report = await crawler(time=time).crawl([site.url("/edge/busy")], pages)
        assert site.hits("/edge/busy") == 2
    assert report.fetched == 1
    assert time.sleeps == [3.0]


async def test_a_wait_too_long_fails_the_page() -> None:
    time = FakeTime()
    async with Site(retry_after="600") as site:
        pages = Pages()
        report = await crawler(time=time).crawl([site.url("/edge/unavailable")], pages)
    assert report.failed == 1
    assert pages.pages[0].reason == "the site answered 503"
    assert time.sleeps == []


async def test_politeness_delay_spaces_requests_to_a_host(site: Site) -> None:
    time = FakeTime()
    await crawler(time=time, delay_seconds=0.5, max_pages=6).crawl([site.url("/docs/")], Pages())
    requests = len(site.log)
    assert len(time.sleeps) == requests - 1
    assert time.now == pytest.approx(0.5 * (requests - 1))


async def test_conditional_refresh_transfers_no_bodies(site: Site) -> None:
    first = Pages()
    await crawler().crawl([site.url("/docs/")], first)
    fetched = [page for page in first.pages if page.outcome == "fetched"]
    site.log.clear()

    second = Pages()
    report = await crawler().crawl(
        [site.url("/docs/")],
        second,
        known={page.url: page.validators for page in fetched},
        known_links={page.url: page.links for page in fetched},
    )
    assert (report.unchanged, report.fetched) == (DOCS_FETCHED, 0)
    assert docs_paths(site, 200) == Counter()
    assert len(docs_paths(site, 304)) == DOCS_FETCHED
    assert all("If-None-Match" in hit.headers for hit in site.log if hit.path.startswith("/docs/"))
    page = second.get(site.url("/docs/page-3"))
    assert page.validators == first.get(site.url("/docs/page-3")).validators
    assert page.links == first.get(site.url("/docs/page-3")).links


async def test_without_known_links_pages_are_fetched_in_full(site: Site) -> None:
    """A 304 would hide the links the crawl needs to go on, so no validators are sent."""
    first = Pages()
    await crawler().crawl([site.url("/docs/")], first)
    site.log.clear()
    report = await crawler().crawl(
        [site.url("/docs/")], Pages(), known={p.url: p.validators for p in first.pages}
    )
    assert report.fetched == DOCS_FETCHED
    assert not any("If-None-Match" in hit.headers for hit in site.log)


async def test_resume_fetches_nothing_twice(site: Site) -> None:
    first = Pages()
    await crawler(max_pages=10).crawl([site.url("/docs/")], first)
    done = {page.url: page.links for page in first.pages}
    before = docs_paths(site)
    site.log.clear()

    second = Pages()
    report = await crawler().crawl([site.url("/docs/")], second, done=done)
    after = docs_paths(site)
    assert not set(before) & set(after)
    assert len(before) + len(after) == DOCS_FETCHED
    assert report.found == DOCS_FETCHED + 1 - len(done)
    assert not {page.url for page in second.pages} & set(done)


async def test_cancellation_stops_between_pages(site: Site) -> None:
    pages, lines = Pages(), list[str]()
    report = await crawler(concurrency=1).crawl(
        [site.url("/docs/")], pages, log=lines.append, cancelled=lambda: len(pages.pages) >= 3
    )
    assert report.cancelled
    assert report.fetched == 3
    assert report.limits_hit == []
    assert "Stopped: the crawl was cancelled" in lines


async def test_refused_start_urls_make_no_request(site: Site) -> None:
    dns = FakeDNS({"intranet.example": [["10.0.0.2"]]})
    connections = Connections(allowed=())
    pages = Pages()
    closed = Crawler(Fetcher(AllowList(), resolve=dns, connector_factory=connections), CrawlLimits())
    with pytest.raises(Refused, match="private network"):
        await closed.crawl(["http://intranet.example/docs/"], pages)
    with pytest.raises(Refused, match="loopback"):
        await closed.crawl([site.url("/docs/")], pages)
    with pytest.raises(Refused, match="only http and https"):
        await closed.crawl(["ftp://example.com/docs/"], pages)
    assert (connections.attempts, site.log, pages.pages) == ([], [], [])


async def test_errors_from_on_page_propagate(site: Site) -> None:
    async def on_page(page: CrawledPage) -> None:
        raise LookupError("the caller's bug")

    with pytest.raises(LookupError, match="the caller's bug"):
        await crawler().crawl([site.url("/docs/")], on_page)


def test_limits_from_settings() -> None:
    limits = CrawlLimits.from_settings(KnowledgeSettings(lore_crawl_max_page_mb=3, lore_crawl_max_minutes=2))
    assert (limits.max_page_bytes, limits.max_seconds, limits.max_pages) == (3 * 1024 * 1024, 120, 200)
    assert limits.describe("bytes") == "bytes per page (3 MB)"
    assert CrawlLimits().describe("time") == "total time (30 min)"


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("HTTP://Docs.Example.COM:80/a/./b/../c#frag", "http://docs.example.com/a/c"),
        ("https://docs.example.com:443", "https://docs.example.com/"),
        ("https://docs.example.com:8443/x/", "https://docs.example.com:8443/x/"),
        ("../up?b=2&a=1", "http://h.example/docs/up?b=2&a=1"),
        ("./guide/", "http://h.example/docs/v1/guide/"),
        ("#top", "http://h.example/docs/v1/page"),
        ("//cdn.example/x", "http://cdn.example/x"),
        ("mailto:a@b.example", None),
        ("javascript:void(0)", None),
        ("http://user:pw@h.example/", None),
        ("http://h.example:99999/", None),
    ],
)
def test_canonical(link: str, expected: str | None) -> None:
    assert canonical(link, "http://h.example/docs/v1/page") == expected


def test_scope_is_the_start_urls_path_up_to_its_last_slash() -> None:
    scope = Scope.around(["https://h.example/docs/guide/intro?x=1", "https://h.example/api/"])
    assert scope.prefixes == ("https://h.example/api/", "https://h.example/docs/guide/")
    assert "https://h.example/docs/guide/setup" in scope
    assert "https://h.example/docs/guides" not in scope
    assert "http://h.example/docs/guide/setup" not in scope
    assert "https://h.example:8443/api/" not in scope


def test_read_html() -> None:
    html = b"""<html><head><title> The
        Guide </title><base href="/docs/"><link rel="Canonical" href="guide">
        <meta name="ROBOTS" content="noindex, follow"></head>
        <body><a href="a#x">a</a><a href="a">again</a><area href="b"><a>no href</a></body></html>"""
    reading = read_html(html, "https://h.example/start")
    assert reading.title == "The Guide"
    assert reading.canonical == "https://h.example/docs/guide"
    assert reading.links == ("https://h.example/docs/a", "https://h.example/docs/b")
    assert (reading.noindex, reading.nofollow) == (True, False)
    assert read_html(b"", "https://h.example/").links == ()


def test_sitemaps_parse_safely() -> None:
    index = b'<?xml version="1.0"?><sitemapindex xmlns="x"><sitemap><loc> https://h/a.xml </loc></sitemap></sitemapindex>'
    assert parse_sitemap(index).sitemaps == ("https://h/a.xml",)
    urlset = (
        b"<urlset><url><loc>https://h/1?a=1&amp;b=2</loc></url><url><loc>https://h/2</loc></url></urlset>"
    )
    assert parse_sitemap(gzip.compress(urlset)).pages == ("https://h/1?a=1&b=2", "https://h/2")
    assert parse_sitemap(b"https://h/1\nhttps://h/2\n").pages == ("https://h/1", "https://h/2")
    hostile = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY secret SYSTEM "file:///etc/hostname">'
        b'<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b"<urlset><url><loc>https://h/&secret;&b;</loc></url></urlset>"
    )
    assert all("aaaa" not in page and len(page) < 20 for page in parse_sitemap(hostile).pages)
    assert parse_sitemap(b"<urlset><url><loc>broken").pages in ((), ("broken",))


async def test_robots_txt_that_cannot_be_read_allows_nothing() -> None:
    async def server_error(url: str) -> Page:
        raise HttpStatus(500, "Internal Server Error")

    async def missing(url: str) -> Page:
        raise HttpStatus(404, "Not Found")

    closed = await read_robots(server_error, "https://h.example/docs/")
    assert not closed.allows("https://h.example/docs/")
    assert closed.refusal == "robots.txt could not be read"
    assert (await read_robots(missing, "https://h.example/docs/")).allows("https://h.example/docs/")


async def test_pacer_keeps_each_hosts_delay() -> None:
    time = FakeTime()
    pacer = Pacer(0.5, sleep=time.sleep, clock=time.clock)
    crawl_delay = Robots(Protego.parse("User-agent: LoreBot\nCrawl-delay: 2\n")).crawl_delay
    pacer.slow_down("slow.example", crawl_delay or 0)
    starts: dict[str, list[float]] = {"fast.example": [], "slow.example": []}
    for _ in range(3):
        for host, times in starts.items():
            await pacer.wait(host)
            times.append(time.now)
    assert starts == {"fast.example": [0, 0.5, 2], "slow.example": [0, 2, 4]}
    pacer.hold("fast.example", 10)  # a Retry-After
    await pacer.wait("fast.example")
    assert time.now == 14


def test_retry_after_reads_seconds_and_dates() -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert retry_after("120", now) == 120
    assert retry_after("Wed, 01 Jan 2025 00:00:30 GMT", now) == 30
    assert retry_after("Tue, 31 Dec 2024 00:00:00 GMT", now) == 0
    assert retry_after("soon", now) is None
    assert retry_after(None, now) is None


def test_validators_make_conditional_headers() -> None:
    assert Validators('"v1"', "Wed, 01 Jan 2025 00:00:00 GMT").headers() == {
        "If-None-Match": '"v1"',
        "If-Modified-Since": "Wed, 01 Jan 2025 00:00:00 GMT",
    }
    assert Validators().headers() == {}
