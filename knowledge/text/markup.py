"""Inline markup as a reader of the rendered page sees it, in Markdown.

Quotes of a Sphinx page (`knowledge.text.quotes`) would otherwise show ":func:`~flask.url_for`"
where the page shows `url_for()`, and quotes of a MkDocs page its HTML (`<a href=…>`,
`<br/>`, `&mdash;`). Only inline markup: blocks (directives, literal blocks) are read by
`knowledge.text.quotes`. Text without such markup is left as it is, so Markdown passes through
unchanged; code spans are never touched.
"""

from __future__ import annotations

import html
import re

_ROLE = re.compile(r"(?<![\w`]):(?:[a-z][\w-]*:)?(?P<role>[a-z][\w-]*):`(?P<body>[^`\n]+)`")
_EXPLICIT = re.compile(r"(?P<title>.*?)\s*<(?P<target>[^<>]+)>")
_CODE_ROLES = frozenset((
    "func", "meth", "class", "data", "attr", "mod", "exc", "obj", "const", "envvar", "option",
    "program", "file", "command", "samp", "kbd", "code",
))  # fmt: skip
"""Roles Sphinx renders as code; any other (`doc`, `ref`, `term` …) as words."""
_CALLED = frozenset(("func", "meth"))
_NUMBERED = {"pep": "PEP", "rfc": "RFC"}
_LITERAL = re.compile(r"``(?P<body>[^`\n]+?)``")
_LINK = re.compile(r"`(?P<text>[^`<\n]+?)\s*<(?P<target>[^`>\n]+)>`__?(?!\w)")
_NAMED = re.compile(r"(?<![\w`])`(?P<text>[^`<\n]+?)`__?(?!\w)")
_ANCHOR = re.compile(r'<a\s[^<>]*?\bhref="(?P<target>[^"<>]+)"[^<>]*>(?P<text>[^<>]*)</a>', re.IGNORECASE)
"""An HTML link in Markdown prose (MkDocs pages have them)."""
_TAG = re.compile(r"</?(?:a|p|div|center|h[1-6]|img|br|hr)(?:\s[^<>]*)?/?>", re.IGNORECASE)
"""The HTML that lays out Markdown prose, which a reader of the page does not see (a space)."""
_INLINE_TAG = re.compile(
    r"</?(?:i|b|em|strong|u|small|span|sup|sub|dfn|abbr|mark|kbd|q|cite|s|del|ins|time)(?:\s[^<>]*)?>",
    re.IGNORECASE,
)
"""The HTML that formats words in prose (FastAPI's `<dfn title="…">parsing</dfn>`): nothing."""
_CODE_TAG = re.compile(r"<code>(?P<code>[^<>`\n]+)</code>", re.IGNORECASE)
"""`<code>kwargs</code>`, which Markdown writes `kwargs`."""
_ENTITY = re.compile(r"&(?:[a-zA-Z][a-zA-Z0-9]{1,30}|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});")
"""An HTML character reference, with its semicolon (a URL's `&copy=2` is not one)."""
_SUBSTITUTION = re.compile(r"(?<![\w|`])\|(?P<name>[^|\s`][^|`\n]*?)\|(?:__?)?(?![\w|])")
"""A reST substitution, `|fetch|_`: its name (its definition is elsewhere on the page)."""
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")


def readable(text: str) -> str:
    """reST inline markup as Sphinx shows it, in Markdown: ":func:`~flask.url_for`" is
    `url_for()`, ``x`` is `x`, a link `text <url>`_ is [text](url), a reference `Name`_ is
    Name, :pep:`8` is PEP 8, :ref:`address-already-in-use` is "Address already in use"; and
    an HTML link <a href="url">text</a> is [text](url), `&mdash;` is "—", a substitution
    `|fetch|_` is "fetch". Text without such markup is returned as it is."""
    if "<" in text or "&" in text:
        text = _without_html(text)
    if "|" in text:
        text = _SUBSTITUTION.sub(r"\g<name>", text)
    if "`" not in text:
        return text
    text = _ROLE.sub(_role, text)
    text = _LITERAL.sub(r"`\g<body>`", text)
    text = _LINK.sub(_link, text)
    return _NAMED.sub(r"\g<text>", text)


def _role(found: re.Match[str]) -> str:
    role, body = found["role"], found["body"].strip()
    explicit = _EXPLICIT.fullmatch(body)
    if explicit and explicit["title"]:
        shown = explicit["title"]
    else:
        target = (explicit["target"] if explicit else body).strip().lstrip("!")
        shown = target[1:].rsplit(".", 1)[-1] if target.startswith("~") else target
    if role in _NUMBERED:
        return f"{_NUMBERED[role]} {shown}"
    if role == "ref" and not (explicit and explicit["title"]):  # the section's title, near enough
        words = re.sub(r"[-_]+", " ", shown).strip()
        return words[:1].upper() + words[1:]
    if role not in _CODE_ROLES:
        return shown
    if role in _CALLED and not shown.endswith(")"):
        shown += "()"
    return f"`{shown}`"


def _without_html(text: str) -> str:
    """Prose's HTML as the page shows it: links as Markdown links, the tags that format it
    left out; code spans as written."""
    pieces, end = [], 0
    for span in _CODE_SPAN.finditer(text):
        pieces += [_prose_html(text[end : span.start()]), span.group()]
        end = span.end()
    shown = "".join([*pieces, _prose_html(text[end:])])
    return shown.strip() if shown != text else text


def _prose_html(prose: str) -> str:
    prose = _ENTITY.sub(lambda found: html.unescape(found.group()), _ANCHOR.sub(_anchor, prose))
    prose = _INLINE_TAG.sub("", _CODE_TAG.sub(r"`\g<code>`", prose))
    return re.sub(r"\s{2,}", " ", _TAG.sub(" ", prose)) if _TAG.search(prose) else prose


def _anchor(found: re.Match[str]) -> str:
    target, text = found["target"].strip(), found["text"].strip()
    if not target.startswith(("https://", "http://")):
        return text
    return target if text in ("", target, target.removesuffix("/")) else f"[{text}]({target})"


def _link(found: re.Match[str]) -> str:
    target = found["target"].strip()
    return f"[{found['text']}]({target})" if target.startswith(("https://", "http://")) else found["text"]
