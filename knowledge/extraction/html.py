"""HTML pages: the main content as Markdown (trafilatura), metadata from the <head>.

The page is parsed once, by lxml with network access off, and the tree is handed to
trafilatura (which copies it). Trafilatura drops navigation, headers, footers and other
boilerplate; when it finds no main content in a page that has body text, a plain lxml walk
over the body is the fallback. MathML, which trafilatura drops, is first replaced by its
text: the TeX or text annotation when the formula carries one, else its characters.

The title loses its embedded line breaks and a trailing site name (" - Wikipedia",
" | BBC News"): a last segment after a separator that names the site (og:site_name,
application-name) or its host (from og:url or the canonical link), or what follows the
page's own <h1> when the title starts with it.
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse

import lxml.etree  # type: ignore[import-untyped, unused-ignore]
import lxml.html  # type: ignore[import-untyped, unused-ignore]

from knowledge.errors import EmptyContent
from knowledge.extraction.text import decode_text
from knowledge.extraction.types import Extracted, clean, parse_iso_date

_TITLE_META = ("og:title", "twitter:title", "dc.title")
_AUTHOR_META = ("author", "article:author", "dc.creator", "twitter:creator")
_DATE_META = (
    "article:modified_time", "og:updated_time", "dcterms.modified", "last-modified",
    "article:published_time", "dcterms.created", "date", "dc.date", "pubdate",
    "datepublished", "datemodified",
)  # fmt: skip
_SKIPPED_TAGS = ("script", "style", "noscript", "template", "svg")
_BLOCK_TAGS = frozenset((
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul",
))  # fmt: skip
_BLANK_RUNS = re.compile(r"[ \t\xa0]*\n[\s\xa0]*")
_SPACE_RUNS = re.compile(r"[ \t\xa0]+")
_TITLE_SEPARATOR = re.compile(r"\s+(?:[|\-–—·»]|::)\s+")
_SITE_META = ("og:site_name", "application-name", "twitter:site")
_MATHML = "{http://www.w3.org/1998/Math/MathML}"
_MATH_ANNOTATIONS = ("application/x-tex", "text/plain", "tex")


def extract_html(data: bytes, name: str, mime_type: str) -> Extracted:
    """The page's main content as Markdown, with title, author and date from its metadata."""
    tree = _parse(data, name)
    meta = _meta_values(tree)
    _math_as_text(tree)
    text = _main_content(tree) or _body_text(tree)
    metadata: dict[str, str] = {}
    if language := clean(tree.get("lang")):
        metadata["lang"] = language
    url = _first(meta, ("og:url",)) or _canonical_url(tree)
    if url:
        metadata["url"] = url
    return Extracted(
        text=text,
        mime_type=mime_type,
        title=page_title(tree, meta, url),
        author=next((value for value in _all(meta, _AUTHOR_META) if "://" not in value), None),
        doc_timestamp=next(filter(None, map(parse_iso_date, _all(meta, _DATE_META))), None),
        metadata=metadata,
    )


def page_title(
    tree: lxml.html.HtmlElement, meta: dict[str, list[str]] | None = None, url: str | None = None
) -> str | None:
    """The page's title (og:title, Dublin Core, else <title>) on one line, without a trailing
    segment naming the site."""
    meta = _meta_values(tree) if meta is None else meta
    title = _first(meta, _TITLE_META) or tree.findtext(".//title")
    title = " ".join(title.split()) if title else ""
    if not title:
        return None
    parts = _TITLE_SEPARATOR.split(title)
    if len(parts) < 2:
        return title
    names = {_plain(name.lstrip("@")) for name in _all(meta, _SITE_META)}
    url = url or _first(meta, ("og:url",)) or _canonical_url(tree)
    hosts = _host_labels(url)
    last = _plain(parts[-1])
    if last and (last in names or any(label in last for label in hosts)):
        separators = _TITLE_SEPARATOR.findall(title)
        return title[: title.rindex(separators[-1])].strip() or title
    for heading in tree.iter("h1"):  # the page's own heading, when the title is it plus more
        text = " ".join(heading.text_content().split())
        if text and _TITLE_SEPARATOR.match(title, len(text)) and title.startswith(text):
            return text
    return title


def _plain(text: str) -> str:
    """Lower-case letters and digits only, accents removed: how site names are compared."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if char.isalnum())


def _host_labels(url: str | None) -> set[str]:
    """The distinctive labels of a URL's host: 'en.wikipedia.org' gives {'wikipedia'}."""
    host = urllib.parse.urlsplit(url).hostname if url and "://" in url else None
    if not host:
        return set()
    common = {"www", "en", "m", "com", "org", "net", "co", "uk", "de", "fr", "io", "dev", "blog", "news"}
    return {_plain(label) for label in host.split(".") if len(label) > 2 and label not in common}


def _math_as_text(tree: lxml.html.HtmlElement) -> None:
    """Replace each <math> by a <span> of its text: its TeX or text annotation, else the
    characters of its elements separated by spaces."""
    for math in list(tree.iter("math", f"{_MATHML}math")):
        text = math.get("alttext")
        for annotation in math.iter("annotation", f"{_MATHML}annotation"):
            if (annotation.get("encoding") or "").lower() in _MATH_ANNOTATIONS and annotation.text:
                text = annotation.text
                break
        if not text:
            text = " ".join(t.strip() for t in math.itertext() if t.strip())
        span = lxml.html.Element("span")
        span.text = " ".join(text.split())
        span.tail = math.tail
        parent = math.getparent()
        if parent is not None:
            parent.replace(math, span)


def _parse(data: bytes, name: str) -> lxml.html.HtmlElement:
    # Our own decoding, re-encoded: libxml2 then trusts the given encoding over <meta charset>.
    utf8 = decode_text(data, name).encode("utf-8")
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True)
    try:
        return lxml.html.document_fromstring(utf8, parser=parser)
    except lxml.etree.ParserError as exc:  # "Document is empty"
        raise EmptyContent(name, "it has no text in it") from exc


def _main_content(tree: lxml.html.HtmlElement) -> str:
    import trafilatura  # on first use: a tenth of a second to import, and the crawler needs only `page_title`

    text = trafilatura.extract(
        tree,
        output_format="markdown",
        fast=True,
        include_comments=False,
        include_tables=True,
        include_links=False,
        include_images=False,
        favor_precision=False,
        deduplicate=False,
        with_metadata=False,
    )
    return text.strip() if text else ""


def _body_text(tree: lxml.html.HtmlElement) -> str:
    """Every text node of the body, a line break after each block element."""
    body = tree.find("body")
    if body is None:
        return ""
    parts: list[str] = []
    skipping = 0
    for event, element in lxml.etree.iterwalk(body, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in _SKIPPED_TAGS:
            skipping += 1 if event == "start" else -1
            if event == "end" and skipping == 0 and element.tail:
                parts.append(element.tail)
            continue
        if skipping:
            continue
        if event == "start":
            parts.append(element.text or "")
        else:
            if tag in _BLOCK_TAGS:
                parts.append("\n")
            parts.append(element.tail or "")
    text = _SPACE_RUNS.sub(" ", "".join(parts))
    return _BLANK_RUNS.sub("\n", text).strip()


def _meta_values(tree: lxml.html.HtmlElement) -> dict[str, list[str]]:
    """<meta> contents keyed by lower-cased name, property or itemprop, in page order."""
    values: dict[str, list[str]] = {}
    for meta in tree.iter("meta"):
        key = meta.get("property") or meta.get("name") or meta.get("itemprop")
        content = clean(meta.get("content"))
        if key and content:
            values.setdefault(key.strip().lower(), []).append(content)
    for element in tree.iterfind(".//time[@itemprop]"):
        if stamp := clean(element.get("datetime")):
            values.setdefault(element.get("itemprop", "").lower(), []).append(stamp)
    return values


def _first(meta: dict[str, list[str]], keys: tuple[str, ...]) -> str | None:
    return next(iter(_all(meta, keys)), None)


def _all(meta: dict[str, list[str]], keys: tuple[str, ...]) -> list[str]:
    return [value for key in keys for value in meta.get(key, ())]


def _canonical_url(tree: lxml.html.HtmlElement) -> str | None:
    for link in tree.iterfind(".//link[@rel='canonical']"):
        return clean(link.get("href"))
    return None
