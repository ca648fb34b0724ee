"""A small web site on 127.0.0.1 for fetcher and crawler tests; every request is recorded.

    async with Site() as site:
        report = await crawler.crawl([site.url("/docs/")], on_page)
        assert site.hits("/docs/page-1") == 1

`/docs/` is a well-behaved documentation site: an index, `pages` generated pages linked as a
tree (page-i links to page-(i+10), so page-i sits at depth ceil(i/10)), links written
with fragments, `./`, `../`, absolute and upper-case forms, links outside `/docs/`, a page
found only through the sitemap (`/docs/hidden`) and one that robots.txt keeps from LoreBot
(`/docs/private/secret`). Pages carry an ETag and a Last-Modified date and answer 304 to
matching conditional requests.

`/edge/` links to every awkward case: redirects inside and outside the prefix, a redirect
loop, a chain of `chain_length` redirects, a slow page, a huge page (declared and streamed),
a PNG, a PDF, Markdown, plain text, 404, 410, 500, a 429 and a 503 that answer once with
Retry-After, a duplicate page naming its canonical URL, a page marked noindex (linking to
one found nowhere else), and redirects to the cloud metadata address and to `internal.example`.
"""

from __future__ import annotations

import gzip
import html
import io
import re
import socket
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.abc import AbstractResolver
from multidict import CIMultiDict, CIMultiDictProxy

from tests.fakes import LoopbackServer

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
LAST_MODIFIED = "Wed, 01 Jan 2025 00:00:00 GMT"
EDGE_LINKS = (
    "moved", "away", "loop-a", "chain/0", "image.png", "missing", "gone", "broken", "slow",
    "huge", "stream-huge", "manual.pdf", "readme.md", "notes.txt", "busy", "unavailable",
    "copy?ref=feed", "to-metadata", "to-internal", "quiet",
)  # fmt: skip
_PAGE = re.compile(r"/docs/page-(\d+)")
_CHAIN = re.compile(r"/edge/chain/(\d+)")


@dataclass(frozen=True)
class Hit:
    """One request as the site saw it, and the status it answered."""

    path: str  # with the query string
    headers: Mapping[str, str]
    status: int


class Site(LoopbackServer):
    def __init__(
        self,
        pages: int = 40,
        *,
        slow_seconds: float = 3.0,
        huge_bytes: int = 256 * 1024,
        retry_after: str = "0",
        chain_length: int = 7,
        sitemap_in_robots: bool = True,
        padding: int = 0,
    ) -> None:
        super().__init__()
        self.pages = pages
        self.slow_seconds = slow_seconds
        self.huge_bytes = huge_bytes
        self.retry_after = retry_after
        self.chain_length = chain_length
        self.sitemap_in_robots = sitemap_in_robots
        self.padding = padding  # bytes of filler text and links per docs page, for benchmarks
        self.log: list[Hit] = []
        self._answered: Counter[str] = Counter()

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def hits(self, path: str) -> int:
        """How many requests asked for `path` (query string included)."""
        return sum(1 for hit in self.log if hit.path == path)

    def paths(self, status: int | None = None) -> list[str]:
        return [hit.path for hit in self.log if status is None or hit.status == status]

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        app.router.add_get("/{tail:.*}", self._route)
        return app

    @web.middleware
    async def _record(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await handler(request)
        headers = CIMultiDictProxy(CIMultiDict(request.headers))
        self.log.append(Hit(request.path_qs, headers, response.status))
        return response

    async def _route(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if match := _PAGE.fullmatch(path):
            return self._docs_page(request, int(match[1]))
        if match := _CHAIN.fullmatch(path):
            return _redirect(self._chain_target(int(match[1])))
        handler = self._routes().get(path)
        if handler is None:
            return web.Response(status=404, text="not here")
        return await handler(request)

    def _routes(self) -> dict[str, Handler]:
        return {
            "/robots.txt": self._robots,
            "/sitemap_index.xml": self._sitemap_index,
            "/sitemap.xml": self._sitemap_docs,
            "/sitemaps/docs.xml": self._sitemap_docs,
            "/sitemaps/blog.xml.gz": self._sitemap_blog,
            "/docs/": self._docs_index,
            "/docs/hidden": self._static("Hidden", ["./"]),
            "/docs/private/secret": self._static("Secret", []),
            "/edge/": self._static("Edge cases", list(EDGE_LINKS)),
            "/edge/target": self._static("Target", []),
            "/edge/copy": self._copy,
            "/edge/quiet": _always(
                web.Response(
                    text=_html("Quiet", ["behind-quiet"], robots="noindex"), content_type="text/html"
                )
            ),
            "/edge/behind-quiet": self._static("Behind a noindex page", []),
            "/edge/moved": _always(_redirect("/edge/target", 301)),
            "/edge/away": _always(_redirect("/docs/")),
            "/edge/loop-a": _always(_redirect("/edge/loop-b")),
            "/edge/loop-b": _always(_redirect("/edge/loop-a")),
            "/edge/to-metadata": _always(_redirect("http://169.254.169.254/latest/meta-data/")),
            "/edge/to-internal": _always(_redirect("http://internal.example/")),
            "/edge/image.png": _always(web.Response(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")),
            "/edge/missing": _always(web.Response(status=404)),
            "/edge/gone": _always(web.Response(status=410)),
            "/edge/broken": _always(web.Response(status=500)),
            "/edge/slow": self._slow,
            "/edge/huge": self._huge,
            "/edge/stream-huge": self._stream_huge,
            "/edge/manual.pdf": _always(web.Response(body=_pdf(), content_type="application/pdf")),
            "/edge/readme.md": _always(
                web.Response(text="# Readme\n\nSee [notes](notes.txt).\n", content_type="text/markdown")
            ),
            "/edge/notes.txt": _always(web.Response(text="Plain notes.\n", content_type="text/plain")),
            "/edge/busy": self._once(429),
            "/edge/unavailable": self._once(503),
        }

    async def _robots(self, request: web.Request) -> web.Response:
        lines = [
            "User-agent: *",
            "Disallow: /docs/",
            "",
            "User-agent: LoreBot",
            "Disallow: /docs/private/",
            "",
        ]
        if self.sitemap_in_robots:
            lines.append(f"Sitemap: {self.url('/sitemap_index.xml')}")
        return web.Response(text="\n".join(lines) + "\n")

    async def _sitemap_index(self, request: web.Request) -> web.Response:
        entries = "".join(
            f"<sitemap><loc>{self.url(p)}</loc></sitemap>"
            for p in ("/sitemaps/docs.xml", "/sitemaps/blog.xml.gz")
        )
        body = f'<?xml version="1.0"?><sitemapindex xmlns="{_SITEMAP_NS}">{entries}</sitemapindex>'
        return web.Response(text=body, content_type="application/xml")

    async def _sitemap_docs(self, request: web.Request) -> web.Response:
        paths = ("/docs/", "/docs/page-1", "/docs/hidden", "/docs/private/secret", "/blog/")
        return web.Response(text=_urlset(self.url(p) for p in paths), content_type="application/xml")

    async def _sitemap_blog(self, request: web.Request) -> web.Response:
        body = gzip.compress(_urlset([self.url("/blog/1"), self.url("/blog/2")]).encode())
        return web.Response(body=body, content_type="application/gzip")

    async def _docs_index(self, request: web.Request) -> web.Response:
        links = [
            "page-1", "./page-2", "page-3#intro", "/docs/page-4", "../docs/page-5",
            self.url("/docs/page-6"), self.url("/docs/page-7").replace("http://", "HTTP://"),
            "page-8", "page-9", "page-10", "page-1#again", "./page-1", "#top", "/blog/", "/",
            "mailto:team@example.com", "javascript:void(0)", "private/secret",
        ]  # fmt: skip
        return _conditional(request, _html("Docs", links))

    def _docs_page(self, request: web.Request, number: int) -> web.Response:
        if not 1 <= number <= self.pages:
            return web.Response(status=404)
        links = ["./", f"page-{number}#self", f"/blog/post-{number}", "private/secret"]
        if number > 1:
            links.append(f"page-{number - 1}")
        if number + 10 <= self.pages:
            links.append(f"page-{number + 10}")
        filler = [f"/blog/{number}/{n}" for n in range(self.padding // 400)]
        return _conditional(request, _html(f"Page {number}", links + filler, text=self.padding))

    def _static(self, title: str, links: list[str]) -> Handler:
        async def handler(request: web.Request) -> web.Response:
            return _conditional(request, _html(title, links))

        return handler

    async def _copy(self, request: web.Request) -> web.Response:
        return web.Response(text=_html("Target", [], canonical="/edge/target"), content_type="text/html")

    def _chain_target(self, step: int) -> str:
        return "/edge/target" if step + 1 >= self.chain_length else f"/edge/chain/{step + 1}"

    async def _slow(self, request: web.Request) -> web.Response:
        await self.pause(self.slow_seconds)
        return web.Response(text=_html("Slow", []), content_type="text/html")

    async def _huge(self, request: web.Request) -> web.Response:
        return web.Response(body=b"x" * self.huge_bytes, content_type="text/plain")

    async def _stream_huge(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for _ in range(self.huge_bytes // 16384 + 1):
            await response.write(b"y" * 16384)
        await response.write_eof()
        return response

    def _once(self, status: int) -> Handler:
        """Answers `status` with Retry-After to the first request, then the page."""

        async def handler(request: web.Request) -> web.Response:
            self._answered[request.path] += 1
            if self._answered[request.path] == 1:
                return web.Response(status=status, headers={"Retry-After": self.retry_after})
            return web.Response(text=_html("Back again", []), content_type="text/html")

        return handler


_SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def _urlset(urls: Iterable[str]) -> str:
    entries = "".join(f"<url><loc>{html.escape(u)}</loc></url>" for u in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{_SITEMAP_NS}">{entries}</urlset>'


def _html(
    title: str, links: list[str], canonical: str | None = None, robots: str | None = None, text: int = 0
) -> str:
    anchors = "".join(f'<li><a href="{html.escape(link)}">{html.escape(link)}</a></li>' for link in links)
    head = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    head += f'<meta name="robots" content="{robots}">' if robots else ""
    return (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title>{head}</head>"
        f"<body><h1>{html.escape(title)}</h1><p>Some text about {html.escape(title)}.</p>"
        f"<ul>{anchors}</ul>{'<p>All work and no play.</p>' * (text // 60)}</body></html>"
    )


def _conditional(request: web.Request, text: str) -> web.Response:
    etag = f'"{zlib.crc32(request.path.encode()):x}"'
    headers = {"ETag": etag, "Last-Modified": LAST_MODIFIED}
    if (
        request.headers.get("If-None-Match") == etag
        or request.headers.get("If-Modified-Since") == LAST_MODIFIED
    ):
        return web.Response(status=304, headers=headers)
    return web.Response(text=text, content_type="text/html", headers=headers)


def _redirect(location: str, status: int = 302) -> web.Response:
    return web.Response(status=status, headers={"Location": location})


def _always(response: web.Response) -> Handler:
    """A handler answering a fresh copy of `response` each time."""
    status, headers, body = response.status, dict(response.headers), response.body

    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, headers=headers, body=body if isinstance(body, bytes) else None)

    return handler


def _pdf() -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=72, height=72)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


class Connections:
    """A connector factory that records every address a connection is attempted to, and
    raises AssertionError instead of connecting to any address not in `allowed`."""

    def __init__(self, allowed: Sequence[str] = ("127.0.0.1",)) -> None:
        self.allowed = frozenset(allowed)
        self.attempts: list[str] = []

    def __call__(self, resolver: AbstractResolver) -> aiohttp.BaseConnector:
        return _GuardedConnector(self, resolver)


class _GuardedConnector(aiohttp.TCPConnector):
    def __init__(self, owner: Connections, resolver: AbstractResolver) -> None:
        super().__init__(resolver=resolver, use_dns_cache=False, limit=16)
        self._owner = owner

    async def _wrap_create_connection(self, *args: Any, addr_infos: list[Any], **kwargs: Any) -> Any:
        addresses = [str(info[4][0]) for info in addr_infos]
        self._owner.attempts.extend(addresses)
        if not self._owner.allowed.issuperset(addresses):
            raise AssertionError(f"the test tried to connect to {addresses}")
        return await super()._wrap_create_connection(*args, addr_infos=addr_infos, **kwargs)


class FakeDNS:
    """Scripted name resolution: each name maps to a list of answers, one per lookup (the
    last repeats). Unknown names fail as getaddrinfo does. `calls` counts lookups per name."""

    def __init__(self, names: Mapping[str, Sequence[Sequence[str]]] | None = None) -> None:
        self.names = dict(names or {})
        self.calls: Counter[str] = Counter()

    async def __call__(self, host: str) -> list[str]:
        self.calls[host] += 1
        answers = self.names.get(host)
        if answers is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(answers[min(self.calls[host], len(answers)) - 1])
