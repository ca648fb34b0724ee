"""Sitemaps: the page URLs a site lists for crawlers (sitemaps.org: XML url sets, sitemap
index files, gzip-compressed files and plain lists of URLs).

A sitemap is data from a site that may be hostile, so reading one is bounded in every way:
gzip is unpacked in pieces and only up to `MAX_UNPACKED` bytes a file (and `MAX_TOTAL_UNPACKED`
a crawl); XML is parsed as it unpacks by lxml's pull parser with entities, DTDs and the
network off (no billion laughs, no local files), the elements already read dropped as it
goes; reading stops once `MAX_URLS` pages were kept; and all of it runs in a worker thread,
in small steps, so the event loop keeps answering Slack while a sitemap is read.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass

import lxml.etree  # type: ignore[import-untyped, unused-ignore]

from knowledge.sources.fetch import size_text
from knowledge.sources.web import FetchError

MAX_FILES = 25  # sitemap files read per crawl
MAX_UNPACKED = 50 * 1024 * 1024  # the protocol's own limit for one sitemap file
MAX_TOTAL_UNPACKED = 100 * 1024 * 1024  # all of a crawl's sitemap files together
MAX_URLS = 50_000  # pages kept per crawl: the protocol's limit for one file
PIECE = 64 * 1024  # a sitemap is parsed as it streams, this much at a time
_GZIP = b"\x1f\x8b"
_LEADING = b"\xef\xbb\xbf \t\r\n"  # a BOM and whitespace may come before the XML


@dataclass(frozen=True)
class Sitemap:
    pages: tuple[str, ...] = ()  # <urlset><url><loc>, or the lines of a text sitemap
    sitemaps: tuple[str, ...] = ()  # <sitemapindex><sitemap><loc>
    unpacked: int = 0
    """Bytes read after unpacking."""
    truncated: str | None = None
    """Why reading stopped before the end of the file, if it did."""


class SitemapError(FetchError):
    pass


def _as_is(url: str) -> str | None:
    return url


def parse_sitemap(
    data: bytes,
    *,
    keep: Callable[[str], str | None] = _as_is,
    max_pages: int = MAX_URLS,
    max_unpacked: int = MAX_UNPACKED,
) -> Sitemap:
    """The page and sitemap URLs in one sitemap file (gzip or not). `keep` maps each page
    URL to the one to keep, or None to pass it over; reading stops after `max_pages` kept
    pages or `max_unpacked` unpacked bytes (`truncated` says which). Unreadable XML gives
    what was read before the damage; unreadable gzip is a `SitemapError`. Blocking: call
    it from a worker thread."""
    reader = _Reader(keep, max_pages)
    pieces = _unpacked(data, max_unpacked)
    first = next(pieces, b"")
    try:
        if first.lstrip(_LEADING)[:1] == b"<":
            reader.xml(first, pieces)
        else:  # not XML: a list of URLs, one a line
            reader.text(first, pieces)
    except _TooLarge:
        reader.truncated = f"it unpacks to more than {size_text(max_unpacked)}"
    return Sitemap(tuple(reader.pages), tuple(reader.sitemaps), reader.size, reader.truncated)


class _TooLarge(Exception):
    pass


class _Reader:
    def __init__(self, keep: Callable[[str], str | None], max_pages: int) -> None:
        self.keep = keep
        self.max_pages = max_pages
        self.pages: list[str] = []
        self.sitemaps: list[str] = []
        self.truncated: str | None = None
        self.size = 0

    def _page(self, url: str) -> bool:
        """Keep `url` if `keep` says so; False once enough pages are kept."""
        if (kept := self.keep(url)) is not None:
            self.pages.append(kept)
        if len(self.pages) >= self.max_pages:
            self.truncated = f"it lists more than {self.max_pages} pages"
            return False
        return True

    def text(self, first: bytes, rest: Iterator[bytes]) -> None:
        tail = b""
        for piece in _chain(first, rest):
            self.size += len(piece)
            lines = (tail + piece).split(b"\n")
            tail = lines.pop()
            if not self._lines(lines):
                return
        self._lines([tail])

    def _lines(self, lines: list[bytes]) -> bool:
        for raw in lines:
            line = raw.decode("utf-8", errors="replace").strip()
            if line.startswith(("http://", "https://")) and not self._page(line):
                return False
        return True

    def xml(self, first: bytes, rest: Iterator[bytes]) -> None:
        parser = lxml.etree.XMLPullParser(
            events=("end",),
            tag="{*}loc",
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            recover=True,
        )
        for piece in _chain(first, rest):
            self.size += len(piece)
            try:
                parser.feed(piece)
            except (lxml.etree.LxmlError, ValueError):
                return
            if not self._locs(parser):
                return
        try:
            parser.close()
        except (lxml.etree.LxmlError, ValueError):
            return
        self._locs(parser)

    def _locs(self, parser: lxml.etree.XMLPullParser) -> bool:
        for _, loc in parser.read_events():
            parent = loc.getparent()
            text = (loc.text or "").strip()
            if text and parent is not None:
                if lxml.etree.QName(parent).localname == "sitemap":
                    self.sitemaps.append(text)
                elif not self._page(text):
                    return False
            _forget(loc, parent)
        return True


def _forget(loc: lxml.etree._Element, parent: lxml.etree._Element | None) -> None:
    """Drop what was read, so a long file never lives in memory as a tree."""
    loc.clear()
    if parent is None:
        return
    root = parent.getparent()
    while parent.getprevious() is not None and root is not None:
        del root[0]


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _unpacked(data: bytes, limit: int) -> Iterator[bytes]:
    """The file's bytes in pieces, unpacked if gzip; `_TooLarge` past `limit` bytes."""
    if data[:2] != _GZIP:
        for at in range(0, len(data), PIECE):
            if at >= limit:
                raise _TooLarge
            yield data[at : at + PIECE]
        return
    unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending, total = data, 0
    while pending and not unpacker.eof:
        try:
            piece = unpacker.decompress(pending, PIECE)
        except zlib.error as exc:
            raise SitemapError(f"the sitemap is not valid gzip ({exc})") from exc
        pending = unpacker.unconsumed_tail
        total += len(piece)
        if total > limit:
            raise _TooLarge
        if not piece and not pending:
            break
        yield piece


async def sitemap_pages(
    get: Callable[[str], Awaitable[bytes]],
    roots: Sequence[str],
    *,
    follow: Callable[[str], bool],
    log: Callable[[str], None],
    keep: Callable[[str], str | None] = _as_is,
    max_files: int = MAX_FILES,
    max_urls: int = MAX_URLS,
    max_unpacked: int = MAX_TOTAL_UNPACKED,
) -> list[str]:
    """The page URLs listed in the sitemaps at `roots` and the sitemaps they index (those
    for which `follow` is true), as `keep` maps them (None: passed over); at most
    `max_files` files, `max_urls` pages and `max_unpacked` unpacked bytes in all. Each file
    is parsed in a worker thread. Files that cannot be read are logged and passed over."""
    queue, read, pages = list(roots), set[str](), list[str]()
    unpacked = 0
    while queue and len(read) < max_files and len(pages) < max_urls and unpacked < max_unpacked:
        url = queue.pop(0)
        if url in read:
            continue
        read.add(url)
        try:
            data = await get(url)
            sitemap = await asyncio.to_thread(
                parse_sitemap,
                data,
                keep=keep,
                max_pages=max_urls - len(pages),
                max_unpacked=min(MAX_UNPACKED, max_unpacked - unpacked),
            )
        except FetchError as exc:
            log(f"Sitemap {url} skipped: {exc}")
            continue
        unpacked += sitemap.unpacked
        pages.extend(sitemap.pages)
        queue.extend(child for child in sitemap.sitemaps if follow(child))
        cut = f" (read in part: {sitemap.truncated})" if sitemap.truncated else ""
        log(f"Sitemap {url}: {len(sitemap.pages)} pages, {len(sitemap.sitemaps)} more sitemaps{cut}")
    if queue:
        log(
            f"Sitemaps: stopped after {len(read)} files, {len(pages)} pages and "
            f"{size_text(unpacked)} (limits: {max_files} files, {max_urls} pages, {size_text(max_unpacked)})"
        )
    return pages
