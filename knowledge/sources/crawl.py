"""Crawling a site: from start URLs, every page under the same scheme, host and path prefix,
found through links, the site's sitemaps and, on resume, the pages a job already handled.

Requests go through the SSRF-safe `Fetcher`, one session per crawl, paced per host; robots.txt
decides what LoreBot may fetch. Every page ends in one outcome, handed to `on_page` as a
`CrawledPage`; the `CrawlReport` counts them and names each limit that was hit (the log
callback hears of it too). What a page says (its links, canonical URL, robots directives) is
read by `knowledge.sources.pages`.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from yarl import URL

from knowledge.sources.fetch import CONTACT_URL, Fetcher, FetchSession, size_text, user_agent
from knowledge.sources.pages import SUPPORTED_TYPES, Scope, canonical, read_page, sniff
from knowledge.sources.retry import RetryPolicy, retried
from knowledge.sources.robots import MAX_ROBOTS_BYTES, Pacer, Robots, read_robots
from knowledge.sources.sitemaps import sitemap_pages
from knowledge.sources.web import (
    FetchError,
    HttpStatus,
    OffSite,
    Page,
    PageTooLarge,
    Refused,
    TimedOut,
    TooManyRedirects,
    UnsupportedType,
    parse_url,
)

if TYPE_CHECKING:
    from knowledge.settings import KnowledgeSettings

MB = 1024 * 1024
Outcome = Literal["fetched", "unchanged", "gone", "skipped", "failed"]
Limit = Literal["pages", "depth", "bytes", "time", "timeout", "redirects"]
ACCEPT = (
    "text/html,application/xhtml+xml,application/pdf;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.1"
)
OUTSIDE = "redirects outside the site"
DUPLICATE = "the same page as another link"
NOINDEX = "the page asks not to be indexed"
RETRIED = frozenset({429, 503})
"""What a site answers when it is busy: tried again after its Retry-After."""


@dataclass(frozen=True)
class CrawlLimits:
    """How far and how fast one crawl goes. Each limit, when hit, is named in the report."""

    max_pages: int = 200
    max_depth: int = 5
    max_page_bytes: int = 10 * MB
    max_seconds: float = 30 * 60
    request_timeout: float = 20.0
    concurrency: int = 4
    delay_seconds: float = 0.5  # between two requests to one host
    max_redirects: int = 5
    retries: int = 2  # after a 429 or 503
    max_retry_after: float = 120.0  # seconds; a site asking for a longer wait fails the page
    contact_url: str = CONTACT_URL  # sent in the User-Agent header

    @classmethod
    def from_settings(cls, settings: KnowledgeSettings) -> CrawlLimits:
        return cls(
            max_pages=settings.lore_crawl_max_pages,
            max_depth=settings.lore_crawl_max_depth,
            max_page_bytes=settings.lore_crawl_max_page_mb * MB,
            max_seconds=settings.lore_crawl_max_minutes * 60,
            request_timeout=settings.lore_crawl_timeout_seconds,
            concurrency=settings.lore_crawl_concurrency,
            delay_seconds=settings.lore_crawl_delay_seconds,
            max_redirects=settings.lore_crawl_max_redirects,
            contact_url=settings.lore_crawl_contact_url,
        )

    def describe(self, limit: Limit) -> str:
        """The limit as a report names it: 'pages per job (200)'."""
        minutes = self.max_seconds / 60
        return {
            "pages": f"pages per job ({self.max_pages})",
            "depth": f"depth ({self.max_depth})",
            "bytes": f"bytes per page ({size_text(self.max_page_bytes)})",
            "time": f"total time ({minutes:g} min)"
            if minutes >= 1
            else f"total time ({self.max_seconds:g} s)",
            "timeout": f"per-request timeout ({self.request_timeout:g} s)",
            "redirects": f"redirects ({self.max_redirects})",
        }[limit]


@dataclass(frozen=True)
class Validators:
    """What a refresh sends back to ask for a page only if it changed."""

    etag: str | None = None
    last_modified: str | None = None

    def headers(self) -> dict[str, str]:
        headers = {"If-None-Match": self.etag} if self.etag else {}
        return headers | ({"If-Modified-Since": self.last_modified} if self.last_modified else {})

    @classmethod
    def of(cls, headers: Mapping[str, str], previous: Validators | None = None) -> Validators:
        previous = previous or cls()
        return cls(
            headers.get("ETag") or previous.etag, headers.get("Last-Modified") or previous.last_modified
        )


@dataclass(frozen=True)
class CrawledPage:
    url: str  # canonical URL
    outcome: Outcome
    body: bytes = b""  # for "fetched"
    mime_type: str | None = None
    title: str | None = None
    validators: Validators = Validators()
    links: tuple[str, ...] = ()  # canonical in-scope links found on the page (for resume)
    depth: int = 0
    reason: str | None = None  # why skipped, failed or gone, fit for a user


@dataclass
class CrawlReport:
    """What a crawl did. `found` counts the distinct in-scope URLs it discovered, leaving out
    those in `done`; `skipped` counts pages by reason."""

    found: int = 0
    fetched: int = 0
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    gone: int = 0
    limits_hit: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cancelled: bool = False


OnPage = Callable[[CrawledPage], Awaitable[None]]


class Crawler:
    """Crawls sites through a `Fetcher` within `limits`; `sleep` and `clock` are injectable
    so tests need not wait for politeness delays or Retry-After."""

    def __init__(
        self,
        fetcher: Fetcher,
        limits: CrawlLimits = CrawlLimits(),
        *,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetcher = fetcher
        self.limits = limits
        self.sleep = sleep
        self.clock = clock

    async def crawl(
        self,
        start_urls: Sequence[str],
        on_page: OnPage,
        *,
        known: Mapping[str, Validators] = {},
        known_links: Mapping[str, Sequence[str]] = {},
        done: Mapping[str, Sequence[str]] = {},
        log: Callable[[str], None] = lambda line: None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> CrawlReport:
        """Crawl from `start_urls`, awaiting `on_page` for every page's outcome (its errors
        propagate). `Refused` before any request if a start URL may not be fetched.

        `known`: validators of pages indexed before; a page that is in `known_links` too
        (its links, from the last crawl) is asked for conditionally, and a 304 makes it
        "unchanged". Without its links a page is fetched in full, since the crawl needs
        them to go on. `done`: pages this job already handled, with their links (resume):
        not fetched again, their links followed. `cancelled` is asked between pages.
        """
        started = self.clock()
        starts = _starts(start_urls, self.fetcher)
        limits = self.limits
        async with self.fetcher.session(
            max_bytes=limits.max_page_bytes,
            timeout=limits.request_timeout,
            max_redirects=limits.max_redirects,
        ) as session:
            for url in starts:
                await session.check(url)
            job = _Job(self, session, Scope.around(starts), on_page, log, cancelled, started)
            await job.run(starts, _Memory.of(known, known_links, done))
        return job.report()


def _starts(start_urls: Sequence[str], fetcher: Fetcher) -> list[str]:
    starts = []
    for url in start_urls:
        parse_url(url, fetcher.allow)
        if (start := canonical(url)) is None:
            raise Refused("that link is not a valid web address")
        starts.append(start)
    return list(dict.fromkeys(starts))


@dataclass(frozen=True)
class _Memory:
    """What the caller knows from before, keyed by canonical URL."""

    known: Mapping[str, Validators]
    known_links: Mapping[str, tuple[str, ...]]
    done: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(
        cls,
        known: Mapping[str, Validators],
        known_links: Mapping[str, Sequence[str]],
        done: Mapping[str, Sequence[str]],
    ) -> _Memory:
        def keyed(urls: Iterable[str]) -> dict[str, str]:
            return {key: url for url in urls if (key := canonical(url))}

        return cls(
            {key: known[url] for key, url in keyed(known).items()},
            {key: tuple(known_links[url]) for key, url in keyed(known_links).items()},
            {key: tuple(done[url]) for key, url in keyed(done).items()},
        )


class _Job:
    """One crawl's state: the queue, what was found and settled, the counts."""

    def __init__(
        self,
        crawler: Crawler,
        session: FetchSession,
        scope: Scope,
        on_page: OnPage,
        log: Callable[[str], None],
        cancelled: Callable[[], bool],
        started: float,
    ) -> None:
        self.limits = crawler.limits
        self.clock = crawler.clock
        self.session = session
        self.scope = scope
        self.on_page = on_page
        self.log = log
        self.cancelled = cancelled
        self.started = started
        self.pacer = Pacer(self.limits.delay_seconds, sleep=crawler.sleep, clock=crawler.clock)
        self.headers = {"User-Agent": user_agent(self.limits.contact_url), "Accept": ACCEPT}
        self.memory = _Memory({}, {}, {})
        self.robots: dict[str, Robots] = {}
        self.queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self.seen: set[str] = set()  # in scope and queued (or settled)
        self.beyond: set[str] = set()  # in scope but deeper than max_depth
        self.claimed: set[str] = set()  # settled, or being fetched
        self.pages = 0  # requests for pages, `done` ones included
        self.counts: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.hit: dict[Limit, None] = {}
        self.stopped = False
        self.was_cancelled = False

    async def run(self, starts: list[str], memory: _Memory) -> None:
        self.memory = memory
        done = {url: links for url, links in memory.done.items() if url in self.scope}
        self.pages = len(done)
        for origin in self.scope.origins():
            await self._read_robots(origin)
        self._enqueue(starts, 0)
        for url, depth in _resume_depths(starts, done).items():
            self._enqueue([url], depth)
        if not self._should_stop():
            self._enqueue(await self._sitemap_pages(), 1)
        await self._drain()
        if self.beyond - self.seen:
            self._limit("depth")

    def report(self) -> CrawlReport:
        found = self.seen | self.beyond
        return CrawlReport(
            found=len(found - self.memory.done.keys()),
            fetched=self.counts["fetched"],
            unchanged=self.counts["unchanged"],
            skipped=dict(self.skipped),
            failed=self.counts["failed"],
            gone=self.counts["gone"],
            limits_hit=[self.limits.describe(limit) for limit in self.hit],
            seconds=self.clock() - self.started,
            cancelled=self.was_cancelled,
        )

    # -- the queue -------------------------------------------------------------------

    def _enqueue(self, urls: Iterable[str], depth: int) -> None:
        """Queue the unseen in-scope URLs among `urls`, found at `depth`."""
        for url in urls:
            if url in self.seen or url not in self.scope:
                continue
            if depth > self.limits.max_depth:
                self.beyond.add(url)
                continue
            self.seen.add(url)
            self.queue.put_nowait((url, depth))

    async def _drain(self) -> None:
        """Run the workers until the queue is empty; the first error a worker meets (one
        from `on_page`) stops them all and propagates as it is."""
        workers = [asyncio.create_task(self._work()) for _ in range(max(1, self.limits.concurrency))]
        emptied = asyncio.create_task(self.queue.join())
        try:
            await asyncio.wait([emptied, *workers], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (emptied, *workers):
                task.cancel()
            results = await asyncio.gather(emptied, *workers, return_exceptions=True)
        for result in results:
            if isinstance(result, Exception):
                raise result

    async def _work(self) -> None:
        while True:
            url, depth = await self.queue.get()
            try:
                if not self._should_stop():
                    await self._visit(url, depth)
            finally:
                self.queue.task_done()

    def _should_stop(self) -> bool:
        if not self.stopped and self.cancelled():
            self.stopped = self.was_cancelled = True
            self.log("Stopped: the crawl was cancelled")
        elif not self.stopped and self.clock() - self.started >= self.limits.max_seconds:
            self._limit("time")
            self.stopped = True
        return self.stopped

    def _limit(self, limit: Limit) -> None:
        if limit not in self.hit:
            self.hit[limit] = None
            self.log(f"Limit reached: {self.limits.describe(limit)}")

    # -- one page --------------------------------------------------------------------

    async def _visit(self, url: str, depth: int) -> None:
        if not self._claim(url):
            return
        if (links := self.memory.done.get(url)) is not None:
            self._enqueue(links, depth + 1)
            return
        robots = self._robots_for(url)
        if not robots.allows(url):
            await self._emit(CrawledPage(url, "skipped", depth=depth, reason=robots.refusal))
            return
        if self.pages >= self.limits.max_pages:
            self._limit("pages")
            self.stopped = True
            return
        self.pages += 1
        await self._emit(await self._fetch(url, depth))

    def _claim(self, url: str) -> bool:
        """True for the first caller: that one settles the URL's outcome."""
        if url in self.claimed:
            return False
        self.claimed.add(url)
        if url in self.scope:
            self.seen.add(url)
        return True

    async def _emit(self, page: CrawledPage) -> None:
        self.counts[page.outcome] += 1
        if page.outcome == "skipped":
            self.skipped[page.reason or "skipped"] += 1
        await self.on_page(page)

    async def _fetch(self, url: str, depth: int) -> CrawledPage:
        validators = self.memory.known.get(url)
        conditional = validators is not None and url in self.memory.known_links
        headers = self.headers | (validators.headers() if validators and conditional else {})
        try:
            page = await self._get(url, headers, within=self._within, types=SUPPORTED_TYPES)
        except FetchError as exc:
            return self._failure(url, depth, exc)
        if page.status == 304:
            links = tuple(link for link in self.memory.known_links.get(url, ()) if link in self.scope)
            self._enqueue(links, depth + 1)
            return CrawledPage(
                url, "unchanged", validators=Validators.of(page.headers, validators), links=links, depth=depth
            )
        return await self._read(url, depth, page)

    def _within(self, url: str) -> bool:
        target = canonical(url)
        return target is not None and target in self.scope and self._robots_for(target).allows(target)

    def _robots_for(self, url: str) -> Robots:
        return self.robots[str(URL(url).origin())]

    def _failure(self, url: str, depth: int, exc: FetchError) -> CrawledPage:
        def page(outcome: Outcome, reason: str) -> CrawledPage:
            return CrawledPage(url, outcome, depth=depth, reason=reason)

        if isinstance(exc, OffSite):  # outside the scope, or inside but kept out by robots.txt
            target = canonical(exc.url)
            inside = target is not None and target in self.scope
            return page("skipped", self._robots_for(target).refusal if inside and target else OUTSIDE)
        if isinstance(exc, UnsupportedType):
            return page("skipped", str(exc))
        if isinstance(exc, PageTooLarge):
            self._limit("bytes")
            return page("skipped", f"larger than {size_text(self.limits.max_page_bytes)}")
        if isinstance(exc, HttpStatus):
            return page("gone" if exc.status in (404, 410) else "failed", f"the site answered {exc.status}")
        if isinstance(exc, TimedOut):
            self._limit("timeout")
        elif isinstance(exc, TooManyRedirects):
            self._limit("redirects")
        return page("failed", str(exc))

    async def _read(self, url: str, depth: int, page: Page) -> CrawledPage:
        final = canonical(page.url) or url
        if final != url and (final in self.memory.done or not self._claim(final)):
            return CrawledPage(url, "skipped", depth=depth, reason=DUPLICATE)
        mime = page.mime_type or sniff(page.body)
        if mime not in SUPPORTED_TYPES:
            return CrawledPage(
                final, "skipped", depth=depth, reason=f"not a supported type ({mime or 'unknown'})"
            )
        reading = await read_page(page.body, mime, final)
        if reading.canonical and reading.canonical != final and reading.canonical in self.scope:
            if not self._claim(reading.canonical):
                return CrawledPage(final, "skipped", depth=depth, reason=DUPLICATE)
            final = reading.canonical
        links = (
            ()
            if reading.nofollow
            else tuple(link for link in reading.links if link in self.scope and link != final)
        )
        self._enqueue(links, depth + 1)
        validators = Validators.of(page.headers)
        if reading.noindex:
            return CrawledPage(
                final, "skipped", validators=validators, links=links, depth=depth, reason=NOINDEX
            )
        return CrawledPage(final, "fetched", page.body, mime, reading.title, validators, links, depth)

    # -- requests --------------------------------------------------------------------

    async def _get(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        within: Callable[[str], bool] | None = None,
        types: Collection[str] | None = None,
        head: int | None = None,
    ) -> Page:
        """A paced GET; a 429 or 503 is retried after its Retry-After, up to `retries` times."""
        host = URL(url).host_port_subcomponent or ""

        async def paced() -> Page:
            await self.pacer.wait(host)
            return await self.session.get(url, headers, within=within, types=types, head=head)

        async def hold(wait: float) -> None:  # the pacer waits it out before the next request to the host
            self.pacer.hold(host, wait)

        async def waiting(exc: HttpStatus, wait: float) -> None:
            self.log(f"{url}: the site answered {exc.status}; trying again in {wait:g} s")

        policy = RetryPolicy(RETRIED, self.limits.retries, self.limits.max_retry_after)
        return await retried(paced, policy, sleep=hold, before_wait=waiting)

    async def _read_robots(self, origin: str) -> None:
        robots = await read_robots(lambda url: self._get(url, self.headers, head=MAX_ROBOTS_BYTES), origin)
        self.robots[origin] = robots
        if robots.unreadable:
            self.log(f"{origin}/robots.txt could not be read ({robots.unreadable}): nothing will be fetched")
        if (delay := robots.crawl_delay) is not None:
            self.pacer.slow_down(URL(origin).host_port_subcomponent or "", delay)

    async def _sitemap_pages(self) -> list[str]:
        pages = [url for origin in self.scope.origins() for url in await self._sitemaps_of(origin)]
        if pages:
            self.log(f"Sitemaps list {len(set(pages))} pages in scope")
        return pages

    async def _sitemaps_of(self, origin: str) -> list[str]:
        """In-scope pages from the sitemaps robots.txt names on this origin, else from
        /sitemap.xml and sitemap.xml under each prefix."""

        def here(url: str) -> bool:
            return url.startswith(origin + "/")

        async def body(url: str) -> bytes:
            return (await self._get(url, self.headers)).body

        roots = [url for url in self.robots[origin].sitemaps if here(url)]
        if not roots:
            prefixes = [prefix for prefix in self.scope.prefixes if here(prefix)]
            roots = list(dict.fromkeys([f"{origin}/sitemap.xml", *(f"{p}sitemap.xml" for p in prefixes)]))
        return await sitemap_pages(body, roots, follow=here, keep=self._in_scope, log=self.log)

    def _in_scope(self, url: str) -> str | None:
        """The URL as the crawl knows it, if it is in scope (called from a worker thread)."""
        found = canonical(url)
        return found if found is not None and found in self.scope else None


def _resume_depths(starts: list[str], done: Mapping[str, tuple[str, ...]]) -> dict[str, int]:
    """Depths of the pages a job already handled: through their links from the start
    pages, or 1 for those reached another way (a sitemap)."""
    depths = {url: 0 for url in starts}
    frontier = list(starts)
    while frontier:
        url = frontier.pop(0)
        for link in done.get(url, ()):
            if link not in depths:
                depths[link] = depths[url] + 1
                frontier.append(link)
    return {url: depths.get(url, 1) for url in done}
