"""Downloading files people share with Lore, with the bot token, checked before and after."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp

from bot.chat import messages
from bot.chat.surface import DownloadError, IncomingFile

UNREADABLE_PREFIXES = ("image/", "video/", "audio/")


def incoming_files(
    files: list[Mapping[str, Any]] | None,
    session: aiohttp.ClientSession,
    token: str,
    max_bytes: int,
) -> list[IncomingFile]:
    """`IncomingFile`s for a message's `files`, each downloading lazily."""
    return [_incoming(f, session, token, max_bytes) for f in files or [] if f.get("mode") != "tombstone"]


def _incoming(
    file: Mapping[str, Any], session: aiohttp.ClientSession, token: str, max_bytes: int
) -> IncomingFile:
    name = str(file.get("name") or file.get("title") or file.get("id") or "file")
    mime = file.get("mimetype")
    size = file.get("size")
    url = file.get("url_private_download") or file.get("url_private")

    async def fetch() -> bytes:
        if isinstance(mime, str) and mime.startswith(UNREADABLE_PREFIXES):
            kind = mime.split("/")[0]
            raise DownloadError(
                f"I couldn't read {name}: I can't read {kind} files yet, only documents and text."
            )
        if not url:
            raise DownloadError(messages.download_failed(name, "Slack gave no download link for it"))
        return await download(session, str(url), token, name, max_bytes)

    return IncomingFile(id=str(file.get("id", name)), name=name, mime_type=mime, size=size, fetch=fetch)


async def download(session: aiohttp.ClientSession, url: str, token: str, name: str, max_bytes: int) -> bytes:
    """The file's bytes; `DownloadError` for a sign-in page, an error status or an oversize file."""
    try:
        async with session.get(
            url, headers={"Authorization": f"Bearer {token}"}, allow_redirects=True
        ) as response:
            if response.status != 200:
                raise DownloadError(messages.download_failed(name, f"Slack answered {response.status}"))
            if response.content_type == "text/html" and not name.lower().endswith((".html", ".htm")):
                raise DownloadError(messages.login_page(name))
            body = await _read_at_most(response, max_bytes + 1)
    except aiohttp.ClientError as exc:
        raise DownloadError(
            messages.download_failed(name, f"the connection failed ({type(exc).__name__})")
        ) from exc
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
