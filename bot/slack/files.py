"""Downloading files people share with Lore: the bot token goes to Slack's file hosts only.

A file object names its own download URL, and remote or external files (Google Drive,
Dropbox …) or a crafted event name another host. `FileHosts` says which origins may receive
the bot token: `https://files.slack.com` and the origin of `SLACK_API_URL` (another
Slack-compatible server, or a test's fake). Any other URL is fetched without credentials
through the SSRF-safe `Fetcher` (private and internal addresses refused unless
`LORE_CRAWL_ALLOW` says otherwise, and the refusal said in the reply); a redirect from a
Slack host to another host is followed the same way. Bodies are checked after download:
a sign-in page instead of the file, or a file over the limit, is an error fit for the user.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from yarl import URL

from bot.chat import messages
from bot.chat.surface import DownloadError, IncomingFile
from knowledge import REDIRECTS, Fetcher, FetchError, Refused

log = logging.getLogger(__name__)

UNREADABLE_PREFIXES = ("image/", "video/", "audio/")
SLACK_FILE_ORIGIN = ("https", "files.slack.com", 443)
MAX_REDIRECTS = 5
Origin = tuple[str, str, int]


@dataclass(frozen=True)
class FileHosts:
    """The origins (scheme, host, port) that may receive the bot token."""

    origins: frozenset[Origin]

    @classmethod
    def for_api(cls, api_url: str) -> FileHosts:
        """Slack's file host and the Web API's own origin."""
        api = _origin(api_url)
        return cls(frozenset({SLACK_FILE_ORIGIN, *([api] if api else [])}))

    def trusts(self, url: str) -> bool:
        return _origin(url) in self.origins


def _origin(url: str) -> Origin | None:
    """The URL's origin; None for anything odd (credentials in it, no host, not http(s))."""
    try:
        parsed = URL(url)
        host, port = (parsed.raw_host or "").lower().rstrip("."), parsed.port
    except (ValueError, TypeError):
        return None
    if parsed.scheme not in ("http", "https") or parsed.raw_user or parsed.raw_password:
        return None
    return (parsed.scheme, host, port) if host and port is not None else None


class SlackFiles:
    """Turns a message's `files` into `IncomingFile`s that download lazily, the token sent
    only where `FileHosts` trusts; owns the HTTP session for Slack's hosts."""

    def __init__(self, hosts: FileHosts, fetcher: Fetcher, max_bytes: int) -> None:
        self._hosts = hosts
        self._fetcher = fetcher
        self._max_bytes = max_bytes
        self._session: aiohttp.ClientSession | None = None

    async def incoming(
        self, files: list[Mapping[str, Any]] | None, client: AsyncWebClient
    ) -> list[IncomingFile]:
        """The message's files, downloaded with `client`'s token (its workspace's); stubs (a
        Slack Connect share says only `"file_access": "check_file_info"`, and some files
        come without a URL) are completed by files.info."""
        found = []
        for file in files or []:
            if file.get("mode") == "tombstone":
                continue
            if _stub(file):
                file = await self._file_info(file, client)
            found.append(self._incoming(file, client))
        return found

    async def _file_info(self, stub: Mapping[str, Any], client: AsyncWebClient) -> Mapping[str, Any]:
        try:
            info = (await client.files_info(file=str(stub["id"]))).get("file") or {}
        except SlackApiError as exc:  # the fetch then says why (no link)
            log.warning("files.info %s failed: %s", stub.get("id"), exc.response.get("error"))
            return stub
        return {**stub, **info}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _incoming(self, file: Mapping[str, Any], client: AsyncWebClient) -> IncomingFile:
        name = str(file.get("name") or file.get("title") or file.get("id") or "file")
        mime = file.get("mimetype")
        url = file.get("url_private_download") or file.get("url_private")

        async def fetch() -> bytes:
            if isinstance(mime, str) and mime.startswith(UNREADABLE_PREFIXES):
                kind = mime.split("/")[0]
                raise DownloadError(
                    f"I couldn't read {name}: I can't read {kind} files yet, only documents and text."
                )
            if not url:
                raise DownloadError(messages.download_failed(name, "Slack gave no download link for it"))
            return _checked(
                name, await self.download(str(url), name, str(client.token or "")), self._max_bytes
            )

        return IncomingFile(
            id=str(file.get("id", name)), name=name, mime_type=mime, size=file.get("size"), fetch=fetch
        )

    async def download(self, url: str, name: str, token: str) -> bytes:
        """The bytes at `url`: with the token from a trusted host (following redirects by
        hand, the token only to trusted hosts), without it from anywhere else."""
        for _ in range(MAX_REDIRECTS + 1):
            if not self._hosts.trusts(url):
                return await self._foreign(url, name)
            status, location, body = await self._from_slack(url, name, token)
            if location is None:
                if status != 200:
                    raise DownloadError(messages.download_failed(name, f"Slack answered {status}"))
                return body
            url = location
        raise DownloadError(messages.download_failed(name, "Slack redirected it too many times"))

    async def _from_slack(self, url: str, name: str, token: str) -> tuple[int, str | None, bytes]:
        """(status, redirect target or None, body) of one GET with the token."""
        try:
            async with (await self._http()).get(
                url, headers={"Authorization": f"Bearer {token}"}, allow_redirects=False
            ) as response:
                if response.status in REDIRECTS and "Location" in response.headers:
                    return response.status, str(response.url.join(URL(response.headers["Location"]))), b""
                if response.status == 200 and _is_html(response.content_type, name):
                    raise DownloadError(messages.login_page(name))
                return response.status, None, await _read_at_most(response, self._max_bytes + 1)
        except aiohttp.ClientError as exc:
            raise DownloadError(
                messages.download_failed(name, f"the connection failed ({type(exc).__name__})")
            ) from exc

    async def _foreign(self, url: str, name: str) -> bytes:
        """A file that is not on Slack: fetched like a web page, never with the token."""
        where = _host(url)
        try:
            page = await self._fetcher.get(url)
        except Refused as exc:
            raise DownloadError(messages.foreign_file_refused(name, where, str(exc))) from exc
        except FetchError as exc:
            raise DownloadError(
                messages.download_failed(name, f"it is stored at {where}, and {exc}")
            ) from exc
        if _is_html(page.mime_type or "", name):
            raise DownloadError(
                messages.foreign_file_refused(
                    name, where, "it answered with a web page (a sign-in page?), not the file"
                )
            )
        return page.body

    async def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        return self._session


def _stub(file: Mapping[str, Any]) -> bool:
    if file.get("file_access") == "check_file_info":
        return True
    return bool(file.get("id")) and not (file.get("url_private_download") or file.get("url_private"))


def _host(url: str) -> str:
    try:
        return URL(url).host or "another site"
    except (ValueError, TypeError):
        return "another site"


def _is_html(content_type: str, name: str) -> bool:
    return content_type == "text/html" and not name.lower().endswith((".html", ".htm"))


def _checked(name: str, body: bytes, max_bytes: int) -> bytes:
    """`body`, or `DownloadError` for an oversize file or a sign-in page."""
    if len(body) > max_bytes:
        raise DownloadError(messages.too_big(name, len(body) / 1024 / 1024, max_bytes // (1024 * 1024)))
    if body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")) and not name.lower().endswith(
        (".html", ".htm")
    ):
        raise DownloadError(messages.login_page(name))
    return body


async def _read_at_most(response: aiohttp.ClientResponse, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(1 << 16):
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)
