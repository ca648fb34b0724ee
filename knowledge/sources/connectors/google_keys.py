"""Google credentials as Lore keeps them, checked before anything is sent: a service
account's key (the JSON file the Cloud console gives) with the Workspace user it acts as
(domain-wide delegation), or an OAuth client's id and secret with one user's refresh token,
kept as Google's own `authorized_user` JSON. Both travel sealed in a `Credentials` (the JSON
in `token`, the user acted as in `email`).

This module reads JSON only; signing and token requests are `google_auth.py`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from yarl import URL

from knowledge.sources.connectors.credentials import Credentials

SERVICE_ACCOUNT = "service_account"
AUTHORIZED_USER = "authorized_user"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"  # noqa: S105 - an address, not a secret
GOOGLE_TOKEN_ORIGINS = frozenset(
    {"https://oauth2.googleapis.com", "https://accounts.google.com", "https://www.googleapis.com"}
)
"""Where Google's keys send their token requests (older keys name accounts.google.com)."""
MAX_KEY_CHARS = 16 * 1024  # a service account key is about 2.3 KB: a larger file is not one
_KEY_FIELDS = ("client_email", "private_key", "token_uri")
_USER_FIELDS = ("client_id", "client_secret", "refresh_token")


@dataclass(frozen=True)
class GoogleKey:
    """A checked Google credential: its type, its fields as google-auth reads them, and the
    user a service account acts as."""

    type: str
    info: Mapping[str, str] = field(repr=False)
    subject: str | None = None

    @property
    def token_uri(self) -> str:
        return self.info.get("token_uri") or GOOGLE_TOKEN_URI

    @property
    def is_service_account(self) -> bool:
        return self.type == SERVICE_ACCOUNT


def service_account(key_json: str, subject: str | None) -> Credentials:
    """Credentials from a service account's JSON key and the user it acts as; ValueError
    with a sentence for a user when the key is not one."""
    info = _parse(key_json)
    if info.get("type") != SERVICE_ACCOUNT:
        raise ValueError(
            "this is not a service account key: in the Google Cloud console, open the service account, "
            "Keys › Add key › JSON, and give the file it downloads"
        )
    missing = [name for name in _KEY_FIELDS if not str(info.get(name) or "").strip()]
    if missing:
        raise ValueError(f"the service account key has no {', '.join(missing)}; give the whole JSON file")
    if "PRIVATE KEY-----" not in str(info["private_key"]):
        raise ValueError("the service account key's private_key is not a PEM key; give the whole JSON file")
    if subject is not None and "@" not in subject:
        raise ValueError("the user to act as is an email address (a Workspace user's)")
    check_token_uri(str(info["token_uri"]))
    return Credentials(json.dumps(info, sort_keys=True), (subject or "").strip() or None)


def oauth_client(
    client_id: str, client_secret: str, refresh_token: str, *, token_uri: str = GOOGLE_TOKEN_URI
) -> Credentials:
    """Credentials of an OAuth client with one user's refresh token (for a team without
    Workspace admin rights); ValueError when a part is missing."""
    values = {"client_id": client_id, "client_secret": client_secret, "refresh_token": refresh_token}
    missing = [name.replace("_", " ") for name, value in values.items() if not value.strip()]
    if missing:
        raise ValueError(f"an OAuth client needs its {', '.join(missing)}")
    check_token_uri(token_uri)
    info = {"type": AUTHORIZED_USER, "token_uri": token_uri, **{k: v.strip() for k, v in values.items()}}
    return Credentials(json.dumps(info, sort_keys=True))


def from_fields(fields: Mapping[str, str]) -> Credentials:
    """Credentials from what a user typed: a service account's `key` (its JSON) acting as
    `act_as`, or an OAuth client's `client_id`, `client_secret` and `refresh_token` (with a
    `token_uri` for a proxy); ValueError saying what is missing or wrong."""
    given = {name: (value or "").strip() for name, value in fields.items()}
    oauth = [given.get(name, "") for name in ("client_id", "client_secret", "refresh_token")]
    if given.get("key"):
        if any(oauth) or given.get("token_uri"):
            raise ValueError("give a service account's key or an OAuth client, not both")
        if not given.get("act_as"):
            raise ValueError("a service account acts as a Workspace user: give their email")
        return service_account(given["key"], given["act_as"])
    if given.get("act_as"):
        raise ValueError("the user to act as goes with a service account's key")
    if not any(oauth):
        raise ValueError(
            "Google Drive takes a service account's JSON key (and the user it acts as), or an OAuth "
            "client's id, secret and refresh token"
        )
    return oauth_client(*oauth, token_uri=given.get("token_uri") or GOOGLE_TOKEN_URI)


def read_key(credentials: Credentials) -> GoogleKey:
    """The Google credential sealed in `credentials`; ValueError when it holds none."""
    info = _parse(credentials.token)
    kind = info.get("type")
    needed = _KEY_FIELDS if kind == SERVICE_ACCOUNT else _USER_FIELDS if kind == AUTHORIZED_USER else None
    if needed is None or any(not isinstance(info.get(name), str) for name in needed):
        raise ValueError("these credentials are not a Google service account key or OAuth client")
    subject = credentials.email if kind == SERVICE_ACCOUNT else None
    return GoogleKey(str(kind), {k: v for k, v in info.items() if isinstance(v, str)}, subject)


def check_token_uri(token_uri: str) -> None:
    """The token endpoint must be an https address (or loopback, for tests and proxies on the
    same machine); `token_origin_allowed` decides, per connection, which origins."""
    try:
        url = URL(token_uri)
    except ValueError as exc:
        raise ValueError("the key's token_uri is not a web address") from exc
    if url.scheme not in ("https", "http") or not url.host:
        raise ValueError("the key's token_uri is not an http(s) address")


def token_origin_allowed(token_uri: str, api_origin: str) -> bool:
    """Whether a key's token requests may go to `token_uri`: Google's token endpoints, or
    the origin the API itself is called on (a fake in tests, a proxy that serves both)."""
    try:
        origin = str(URL(token_uri).origin())
    except ValueError:
        return False
    return origin in GOOGLE_TOKEN_ORIGINS or origin == api_origin


def _parse(text: str) -> dict[str, object]:
    if len(text) > MAX_KEY_CHARS:
        raise ValueError("that is too long to be a Google key")
    try:
        found = json.loads(text)
    except ValueError as exc:
        raise ValueError(
            "the key is not JSON: give the file the Google Cloud console downloaded, as it is"
        ) from exc
    if not isinstance(found, dict):
        raise ValueError("the key is not a JSON object: give the whole file")
    return found
