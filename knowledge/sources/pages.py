"""What a fetched page tells a crawl: the links in it (HTML through lxml, Markdown by its
link syntax), its canonical URL, title and robots directives, and which links are in a crawl's
scope. Every URL is spelt one way (`canonical`), so a page reached by two spellings is one page.
Reading a typical page's links takes well under a millisecond; pages over 512 KB are parsed in
a worker thread so the event loop never waits on a huge one.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass

import lxml.etree  # type: ignore[import-untyped, unused-ignore]
import lxml.html  # type: ignore[import-untyped, unused-ignore]
from yarl import URL

from knowledge.extraction.html import page_title

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
SUPPORTED_TYPES = HTML_TYPES | MARKDOWN_TYPES | {"application/pdf", "text/plain"}
_PARSE_IN_THREAD = 512 * 1024  # bytes; smaller pages parse faster than a thread hop
_NOT_WEB = ("mailto:", "javascript:", "tel:", "data:", "ftp:")
_MARKDOWN_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)")


def canonical(link: str, base: str | URL | None = None) -> str | None:
    """The link as the crawler knows it, resolved against `base`: lower-case scheme and
    host, no default port, no dot segments, no fragment, '/' for an empty path; query and
    trailing slash as they are. None for anything but an http(s) link without credentials."""
    link = link.strip().partition("#")[0]
    if link.startswith(_NOT_WEB):
        return None
    try:
        url = (URL(base) if isinstance(base, str) else base).join(URL(link)) if base else URL(link)
        if url.scheme not in ("http", "https") or not url.raw_host or url.raw_user or url.raw_password:
            return None
        # yarl writes an empty path as nothing at all ('http://h'): spell it '/'
        return str(url if url.raw_path != "/" else url.with_path("/", keep_query=True))
    except (ValueError, TypeError):
        return None


def _canonical_links(hrefs: Iterable[str], base: str) -> tuple[str, ...]:
    """Distinct canonical links, in order; each distinct href is resolved once."""
    resolve_against = URL(base)
    distinct = dict.fromkeys(href.strip().partition("#")[0] for href in hrefs)
    links = (canonical(href, resolve_against) for href in distinct)
    return tuple(dict.fromkeys(link for link in links if link))


@dataclass(frozen=True)
class Scope:
    """The URLs a crawl may visit: those under one of its prefixes (a start URL's scheme,
    host and port, and its path up to and including the last '/')."""

    prefixes: tuple[str, ...]

    @classmethod
    def around(cls, starts: Iterable[str]) -> Scope:
        prefixes = {
            str(URL(url).with_query(None).with_fragment(None)).rpartition("/")[0] + "/" for url in starts
        }
        return cls(tuple(sorted(prefixes)))

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and url.startswith(self.prefixes)

    def origins(self) -> list[str]:
        return sorted({str(URL(prefix).origin()) for prefix in self.prefixes})


@dataclass(frozen=True)
class Reading:
    """What a page says about itself."""

    links: tuple[str, ...] = ()  # canonical, in document order, not yet scoped
    canonical: str | None = None
    title: str | None = None
    noindex: bool = False
    nofollow: bool = False


_HREFS = lxml.etree.XPath("//a/@href | //area/@href")
_BASE = lxml.etree.XPath("string(//base/@href)")
_LOWER = "translate({}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
_CANONICAL = lxml.etree.XPath(
    f"string(//link[contains(concat(' ', normalize-space({_LOWER.format('@rel')}), ' '), ' canonical ')]/@href)"
)
_ROBOTS_META = lxml.etree.XPath(
    f"//meta[{_LOWER.format('@name')} = 'robots' or {_LOWER.format('@name')} = 'lorebot']/@content"
)


def read_html(body: bytes, url: str) -> Reading:
    """Links, canonical URL, title and robots directives of an HTML page."""
    try:
        tree = lxml.html.document_fromstring(body)
    except (lxml.etree.LxmlError, ValueError):
        return Reading()
    base = canonical(_BASE(tree), url) or url
    directives = {d.strip().lower() for content in _ROBOTS_META(tree) for d in str(content).split(",")}
    title = page_title(tree, url=url)  # one line, without " - Site name"
    return Reading(
        links=_canonical_links(map(str, _HREFS(tree)), base),
        canonical=canonical(href, base) if (href := _CANONICAL(tree)) else None,
        title=title,
        noindex=bool(directives & {"noindex", "none"}),
        nofollow=bool(directives & {"nofollow", "none"}),
    )


def read_markdown(body: bytes, url: str) -> Reading:
    text = body.decode("utf-8", errors="replace")
    return Reading(links=_canonical_links(_MARKDOWN_LINK.findall(text), url))


def sniff(body: bytes) -> str | None:
    """The type of a page that declared none, when it is plainly HTML or PDF."""
    head = body[:512].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    return None


async def read_page(body: bytes, mime: str, url: str) -> Reading:
    """What a page of type `mime` says; nothing for types without links (PDF, plain text)."""
    if mime in MARKDOWN_TYPES:
        return read_markdown(body, url)
    if mime not in HTML_TYPES:
        return Reading()
    if len(body) > _PARSE_IN_THREAD:
        return await asyncio.to_thread(read_html, body, url)
    return read_html(body, url)
