"""Keeping secrets out of what Lore prints: configuration listings (`lore doctor`), settings
errors and the reasons a check failed.

- `mask_url`: a URL with its password and secret-looking query values replaced by `***`
  (`postgresql+psycopg://lore:***@db/lore`, `http://h/v1?api_key=***`); the rest, which
  says where things are, is kept;
- `mask_text`: every URL inside a text masked so, and every known secret value replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

HIDDEN = "***"
SECRET_QUERY = re.compile(r"key|token|secret|pass|pwd|sig|auth|credential|session", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_USERINFO = re.compile(r"(?<=://)([^\s/@:]*):[^\s/@]*@")
MIN_SECRET = 4
"""Shorter values are not searched for: replacing every "abc" would hide too much."""


def mask_url(url: str) -> str:
    """`url` without its password or secret query values; as it is if it has neither. The
    rest is kept as written (rebuilding a URL can change it: `sqlite:////abs/path`)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL urllib can split: at least no user info
        return _USERINFO.sub(rf"\1:{HIDDEN}@", url)
    masked = url
    if parts.password is not None:
        masked = _USERINFO.sub(rf"\1:{HIDDEN}@", masked, count=1)
    if parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if any(SECRET_QUERY.search(name) for name, _ in pairs):
            hidden = [(name, HIDDEN if SECRET_QUERY.search(name) else value) for name, value in pairs]
            masked = masked.replace("?" + parts.query, "?" + urlencode(hidden, safe="*"), 1)
    return masked


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every URL in it masked (`mask_url`) and each of `secrets` replaced."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    return _URL.sub(lambda found: mask_url(found.group(0)), text)


def url_secrets(url: str | None) -> list[str]:
    """The secret parts of a URL (its password, secret query values), to search for in text."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password, unquote(parts.password)] if parts.password else []
        found += [value for name, value in parse_qsl(parts.query) if SECRET_QUERY.search(name) and value]
    except ValueError:
        return []
    return found
