"""Slack's markup, made safe for what others wrote: names, authors, links and model replies.

Slack reads `&`, `<` and `>` as control characters: `<!channel>`, `<@U123>`, `<#C123>` and
`<!subteam^S1>` notify people, and `<url|text>` is a link. Whatever Lore posts that a user,
a document, a site or a model supplied goes through here first:

- `escape` for mrkdwn text (`section` blocks, `context` blocks, a message's `text`);
- `link` for a `<url|text>` link whose URL cannot end the link or start another one;
- `source` for a source's name (a document, a page, a thread), linked when it has a web
  address: every surface (answers, shared answers, listings, the Home tab, feedback)
  shows sources through it;
- `bold` to turn standard markdown's `**bold**` into Slack's `*bold*` in mrkdwn text (quotes
  of saved threads, notification text);
- `defuse` for standard markdown (`markdown` blocks, streamed `markdown_text`), where the
  model's formatting is kept and only Slack's `<!…>`, `<@…>` and `<#…>` tokens are broken;
- `unescape` for terminals, which show the text as written.
"""

from __future__ import annotations

import re

from yarl import URL

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_TOKEN = re.compile(r"<(?=[!@#])")
_UNSAFE_IN_URL = {"<": "%3C", ">": "%3E", "|": "%7C", " ": "%20", '"': "%22", "`": "%60"}


def escape(text: str) -> str:
    """`text` as mrkdwn that shows exactly `text`: no mention, link or entity in it works."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """What Slack would show for escaped mrkdwn (for the shell and the command line)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def safe_url(url: str | None) -> str | None:
    """`url` fit to be a link target, or None: an http(s) or mailto address without control
    characters, with `<`, `>`, `|`, spaces and quotes percent-encoded (so it cannot close the
    link or open a mention) and `&` written as Slack writes it in links (`&amp;`)."""
    if not url or any(ord(c) < 32 or ord(c) == 127 for c in url):
        return None
    try:
        scheme = URL(url.strip()).scheme.lower()
    except (ValueError, TypeError):
        return None
    if scheme not in LINK_SCHEMES:
        return None
    cleaned = "".join(_UNSAFE_IN_URL.get(c, c) for c in url.strip())
    return cleaned.replace("&", "&amp;")


def link(url: str | None, text: str) -> str:
    """`<url|text>` with both made safe; just the escaped text when the URL is not a web link."""
    target = safe_url(url)
    label = escape(text) or (target or "")
    return f"<{target}|{label}>" if target else label


def source(name: str, url: str | None) -> str:
    """A source as mrkdwn: its name linked to its web address, or in bold without one (or
    with an address that is not `http(s)`/`mailto`); neither can mention anyone."""
    return link(url, name) if safe_url(url) else f"*{escape(name)}*"


_DOUBLE_STARS = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")


def bold(text: str) -> str:
    """Markdown's `**bold**` as Slack's mrkdwn `*bold*` (which shows `**x**` with stars)."""
    return _DOUBLE_STARS.sub(r"*\1*", text)


def defuse(markdown: str) -> str:
    """A model's markdown with every `<!…>`, `<@…>` and `<#…>` token broken (its `<` as an
    entity), so a reply can neither mention nor notify anyone; the rest is left as written."""
    return _TOKEN.sub("&lt;", markdown)


class StreamDefuser:
    """`defuse` over a reply that arrives in pieces: a `<` at the end of one piece is held
    back until the next shows whether it starts a token."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        self._held = "<" if text.endswith("<") else ""
        return defuse(text[: len(text) - len(self._held)])

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held
