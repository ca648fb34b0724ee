"""Sitemap and robots.txt bombs (finding 5), and XML bombs (held).

A hostile site on loopback serves gzip sitemaps that unpack to hundreds of thousands of
URLs, a gzip bomb, a multi-megabyte robots.txt and entity bombs. The crawl must keep the
event loop responsive (parsing happens off it, in pieces), list a bounded number of URLs,
and read robots.txt only as far as RFC 9309 asks (500 KiB).
"""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from knowledge.sources.crawl import CrawledPage, Crawler, CrawlLimits
from knowledge.sources.fetch import Fetcher
from knowledge.sources.sitemaps import MAX_URLS, parse_sitemap
from knowledge.sources.web import AllowList
from tests.security.conftest import HostileHost, Lookups, LoopWatch

pytestmark = pytest.mark.asyncio(loop_scope="module")

URLS_PER_BOMB = 100_000
STALL = 1.0
"""Seconds the event loop may be kept from running at most (the old code: 3 to 7)."""
PAGE = (
    b"<!DOCTYPE html><html><head><title>Docs</title></head><body><p>Hello.</p></body></html>",
    "text/html",
)


def sitemap_bomb(port: int, tag: int) -> bytes:
    """A gzip sitemap of `URLS_PER_BOMB` long in-scope URLs (~0.3 MB packed, ~26 MB unpacked)."""
    pad = "a" * 200
    head = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    urls = "".join(
        f"<url><loc>http://127.0.0.1:{port}/docs/{pad}/{tag}-{n}</loc></url>" for n in range(URLS_PER_BOMB)
    )
    return gzip.compress((head + urls + "</urlset>").encode(), 1)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bombs() -> AsyncIterator[HostileHost]:
    async with HostileHost({"/docs/": PAGE}) as host:
        roots = [f"/sitemaps/{n}.xml.gz" for n in range(3)]
        for n, path in enumerate(roots):
            host.pages[path] = (sitemap_bomb(host.port, n), "application/gzip")
        host.pages["/sitemaps/zeros.xml.gz"] = (
            gzip.compress(b"<" + b"\0" * (200 * 1024 * 1024), 9),
            "application/gzip",
        )
        listed = "".join(f"Sitemap: {host.url(p)}\n" for p in [*roots, "/sitemaps/zeros.xml.gz"])
        host.pages["/robots.txt"] = (listed.encode(), "text/plain")
        yield host


def crawler(max_pages: int = 5) -> Crawler:
    fetcher = Fetcher(AllowList.parse("127.0.0.1"), resolve=Lookups())
    return Crawler(fetcher, CrawlLimits(delay_seconds=0.0, max_pages=max_pages))


class Pages:
    def __init__(self) -> None:
        self.pages: list[CrawledPage] = []

    async def __call__(self, page: CrawledPage) -> None:
        self.pages.append(page)


async def test_sitemap_bombs_neither_stall_the_loop_nor_flood_the_queue(bombs: HostileHost) -> None:
    pages, lines = Pages(), list[str]()
    async with LoopWatch() as watch:
        report = await crawler().crawl([bombs.url("/docs/")], pages, log=lines.append)
    assert watch.longest < STALL, f"the event loop stalled {watch.longest:.1f} s"
    assert report.found <= MAX_URLS + 10
    assert report.fetched + report.gone == 5  # the page limit holds; listed pages are 404 here
    assert any("Sitemaps" in line and "stopped" in line for line in lines), lines


async def test_a_gzip_bomb_is_unpacked_only_so_far(bombs: HostileHost) -> None:
    async with LoopWatch() as watch:
        sitemap = await asyncio.to_thread(parse_sitemap, bombs.pages["/sitemaps/zeros.xml.gz"][0])
    assert sitemap.pages == ()
    assert sitemap.truncated
    assert watch.longest < STALL


async def test_a_huge_robots_txt_is_read_to_500_kib_off_the_loop() -> None:
    rules = "User-agent: *\n" + "".join(f"Disallow: /nothing-here-{n}/\n" for n in range(300_000))
    rules += "User-agent: LoreBot\nDisallow: /docs/\n"  # past 500 KiB: never read, so not obeyed
    async with HostileHost({"/docs/": PAGE, "/robots.txt": (rules.encode(), "text/plain")}) as host:
        assert len(rules) > 7 * 1024 * 1024
        pages = Pages()
        async with LoopWatch() as watch:
            report = await crawler().crawl([host.url("/docs/")], pages)
    assert watch.longest < STALL, f"the event loop stalled {watch.longest:.1f} s"
    assert report.fetched == 1


async def test_entity_bombs_in_sitemaps_are_not_expanded() -> None:
    """Held: billion laughs and external entities stay unexpanded, gzipped or not."""
    laughs = b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    for n in range(1, 10):
        laughs += f'<!ENTITY lol{n} "{("&lol" + (str(n - 1) if n > 1 else "") + ";") * 10}">'.encode()
    laughs += b"]><urlset><url><loc>https://h/&lol9;</loc></url><url><loc>https://h/ok</loc></url></urlset>"
    external = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>https://h/&x;</loc></url></urlset>"
    )
    for data in (laughs, gzip.compress(laughs), external, zlib.compress(external)):
        found = parse_sitemap(data).pages
        assert all(len(page) < 40 and "root:" not in page for page in found), found
