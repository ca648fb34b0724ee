"""Sitemaps: the page URLs a site lists for crawlers (sitemaps.org: XML url sets, sitemap
index files, gzip-compressed files and plain lists of URLs).

XML is parsed by lxml with entities, DTDs and the network off, so a hostile file cannot
read local files or expand entities; gzip is unpacked only up to a size limit.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import lxml.etree  # type: ignore[import-untyped, unused-ignore]

from knowledge.sources.fetch import FetchError, size_text

MAX_FILES = 25  # sitemap files read per crawl
MAX_UNPACKED = 50 * 1024 * 1024  # the protocol's own limit for one sitemap file
_PARSER = lxml.etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=True
)


@dataclass(frozen=True)
class Sitemap:
    pages: tuple[str, ...] = ()  # <urlset><url><loc>, or the lines of a text sitemap
    sitemaps: tuple[str, ...] = ()  # <sitemapindex><sitemap><loc>


class SitemapError(FetchError):
    pass


def parse_sitemap(data: bytes) -> Sitemap:
    """The page and sitemap URLs in one sitemap file (gzip or not); empty if the XML is
    unreadable, `SitemapError` if the gzip is."""
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data)
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"<":  # not XML (a BOM may lead): a list of URLs
        lines = data.decode("utf-8", errors="replace").split()
        return Sitemap(pages=tuple(line for line in lines if line.startswith(("http://", "https://"))))
    try:
        root = lxml.etree.fromstring(data, _PARSER)
    except (lxml.etree.LxmlError, ValueError):
        return Sitemap()
    if root is None:
        return Sitemap()
    pages: list[str] = []
    sitemaps: list[str] = []
    for loc in root.iter("{*}loc"):
        parent = loc.getparent()
        text = (loc.text or "").strip()
        if text and parent is not None:
            (sitemaps if lxml.etree.QName(parent).localname == "sitemap" else pages).append(text)
    return Sitemap(tuple(pages), tuple(sitemaps))


def _gunzip(data: bytes) -> bytes:
    unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        unpacked = unpacker.decompress(data, MAX_UNPACKED)
    except zlib.error as exc:
        raise SitemapError(f"the sitemap is not valid gzip ({exc})") from exc
    if unpacker.unconsumed_tail:
        raise SitemapError(f"the sitemap unpacks to more than {size_text(MAX_UNPACKED)}")
    return unpacked


async def sitemap_pages(
    get: Callable[[str], Awaitable[bytes]],
    roots: Sequence[str],
    *,
    follow: Callable[[str], bool],
    log: Callable[[str], None],
    max_files: int = MAX_FILES,
) -> list[str]:
    """Every page URL listed in the sitemaps at `roots` and the sitemaps they index (those
    for which `follow` is true), reading at most `max_files` files. Files that cannot be
    read are logged and passed over."""
    queue, read, pages = list(roots), set[str](), list[str]()
    while queue and len(read) < max_files:
        url = queue.pop(0)
        if url in read:
            continue
        read.add(url)
        try:
            sitemap = parse_sitemap(await get(url))
        except FetchError as exc:
            log(f"Sitemap {url} skipped: {exc}")
            continue
        pages.extend(sitemap.pages)
        queue.extend(child for child in sitemap.sitemaps if follow(child))
        log(f"Sitemap {url}: {len(sitemap.pages)} pages, {len(sitemap.sitemaps)} more sitemaps")
    if queue:
        log(f"Sitemaps: read the first {max_files} files only")
    return pages
