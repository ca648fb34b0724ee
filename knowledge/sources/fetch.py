"""Fetching web pages safely: no requests to private, loopback or link-local addresses.

Which links and addresses may be fetched, and the errors and pages a fetch gives, are in
`knowledge.sources.web`. Here, names are resolved once per session, every address is checked
with its rule, and the connection goes to a checked address, so DNS rebinding cannot swap it.
Redirects are followed by hand, each one checked the same way.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from knowledge.sources.web import (
    Address,
    AllowList,
    FetchError,
    HttpStatus,
    OffSite,
    Page,
    PageTooLarge,
    Refused,
    TimedOut,
    TooManyRedirects,
    UnsupportedType,
    check_address,
    normalise_ip,
    parse_url,
    unmapped,
)

Resolve = Callable[[str], Awaitable[list[str]]]
ConnectorFactory = Callable[[AbstractResolver], aiohttp.BaseConnector]

ROBOT_NAME = "LoreBot"
CONTACT_URL = "https://github.com/lore-bot/lore"
REDIRECTS = frozenset({301, 302, 303, 307, 308})
ERROR_DETAIL_BYTES = 2048
"""Of an error's body, read for the message an API puts there (GitHub's secondary limits)."""


def user_agent(contact_url: str = CONTACT_URL) -> str:
    """The User-Agent header: the robot's name (what robots.txt matches) and where to reach us."""
    return f"{ROBOT_NAME}/0.1 (+{contact_url})"


USER_AGENT = user_agent()


async def system_resolve(host: str) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that resolves each host once, for as long as it lives, and returns
    only allowed addresses (`Refused` otherwise): later lookups cannot be rebound."""

    def __init__(self, resolve: Resolve, allow: AllowList) -> None:
        self._resolve = resolve
        self._allow = allow
        self._lookups: dict[str, asyncio.Future[list[Address]]] = {}

    async def addresses(self, host: str) -> list[Address]:
        """The host's checked addresses, looked up on first use."""
        host = host.lower()
        lookup = self._lookups.get(host)
        if lookup is None:
            lookup = self._lookups[host] = asyncio.ensure_future(self._lookup(host))
        return await asyncio.shield(lookup)

    async def _lookup(self, host: str) -> list[Address]:
        literal = normalise_ip(host)
        try:
            answers = (
                [literal]
                if literal
                else [unmapped(ipaddress.ip_address(a)) for a in await self._resolve(host)]
            )
        except OSError as exc:
            raise FetchError(f"I couldn't find the site {host} (DNS: {exc.strerror or exc})") from exc
        except ValueError as exc:  # an answer that is not an address
            raise FetchError(f"I couldn't find the site {host} (DNS answered {exc})") from exc
        if not answers:
            raise FetchError(f"I couldn't find the site {host}")
        for address in answers:
            check_address(host, address, self._allow)
        return answers

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        return [_result(host, port, a) for a in await self.addresses(host)]

    async def close(self) -> None:
        for lookup in self._lookups.values():
            lookup.cancel()
            with suppress(BaseException):
                await lookup


def _result(host: str, port: int, address: Address) -> ResolveResult:
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    return {
        "hostname": host,
        "host": str(address),
        "port": port,
        "family": family,
        "proto": 0,
        "flags": socket.AI_NUMERICHOST,
    }


@dataclass(frozen=True)
class Rules:
    """Per-session limits: bytes per body, seconds per request, redirects per get."""

    max_bytes: int = 10 * 1024 * 1024
    timeout: float = 20.0
    max_redirects: int = 5


class FetchSession:
    """Many gets over one connection pool and one resolution per host; from `Fetcher.session()`."""

    def __init__(
        self, http: aiohttp.ClientSession, resolver: GuardedResolver, allow: AllowList, rules: Rules
    ) -> None:
        self._http = http
        self._resolver = resolver
        self._allow = allow
        self.rules = rules

    async def check(self, url: str) -> None:
        """Raise `Refused` if `url`, or any address its host resolves to, is not allowed.
        A host that cannot be found is not a refusal: fetching it will fail with the reason."""
        host = parse_url(url, self._allow).raw_host or ""
        try:
            await self._resolver.addresses(host)
        except Refused:
            raise
        except FetchError:
            return

    async def get(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - aiohttp's, per request; named in the error
        within: Callable[[str], bool] | None = None,
        types: Collection[str] | None = None,
        head: int | None = None,
    ) -> Page:
        """The page at `url`, after at most `rules.max_redirects` redirects, each checked and,
        given `within`, kept inside it (`OffSite`). A 304 is a page, not an error. With
        `types`, a body of any other declared type is not downloaded (`UnsupportedType`).
        With `head`, only the body's first `head` bytes are read, and a longer body is cut
        there instead of refused (robots.txt: RFC 9309 reads the first 500 KiB)."""
        for _ in range(self.rules.max_redirects + 1):
            target = parse_url(url, self._allow)
            page = await self._request(target, headers, timeout or self.rules.timeout, types, head)
            location = page.headers.get("Location") if page.status in REDIRECTS else None
            if not location:
                return page
            url = _join(page.url, location)
            if within is not None and not within(url):
                raise OffSite(url)
        raise TooManyRedirects(f"it redirected more than {self.rules.max_redirects} times")

    async def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - aiohttp's, per request, as in `get`
    ) -> Page:
        """POST `body` to `url` (an API's query, a token exchange), address-checked like a
        get. A redirect is not followed: it is returned, for the caller to refuse."""
        target = parse_url(url, self._allow)
        return await self._request(target, headers, timeout or self.rules.timeout, None, body=body)

    async def _request(
        self,
        url: URL,
        headers: Mapping[str, str] | None,
        seconds: float,
        types: Collection[str] | None,
        head: int | None = None,
        *,
        body: bytes | None = None,
    ) -> Page:
        try:
            async with self._http.request(
                "GET" if body is None else "POST",
                url,
                data=body,
                allow_redirects=False,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=seconds),
            ) as response:
                return await self._page(response, types, head)
        except FetchError:
            raise
        except TimeoutError as exc:
            raise TimedOut(f"the site took longer than {seconds:g} s to answer") from exc
        except aiohttp.ClientConnectorError as exc:
            raise FetchError(f"I couldn't connect to {url.host}") from exc
        except aiohttp.InvalidURL as exc:
            raise Refused("that link is not a valid web address") from exc
        except aiohttp.ClientError as exc:
            raise FetchError(f"the connection failed ({type(exc).__name__})") from exc

    async def _page(
        self, response: aiohttp.ClientResponse, types: Collection[str] | None, head: int | None = None
    ) -> Page:
        headers = CIMultiDictProxy(CIMultiDict(response.headers))
        mime = response.content_type if "Content-Type" in headers else None
        page = Page(str(response.url), response.status, b"", mime, headers)
        if response.status in REDIRECTS or response.status == 304:
            return page
        if response.status >= 400:
            detail = await _read_head(response, ERROR_DETAIL_BYTES)
            raise HttpStatus(
                response.status,
                response.reason,
                headers.get("Retry-After"),
                headers,
                detail.decode("utf-8", "replace"),
            )
        if types is not None and mime is not None and mime not in types:
            raise UnsupportedType(mime)
        if head is not None:
            return replace(page, body=await _read_head(response, min(head, self.rules.max_bytes)))
        return replace(page, body=await _read_limited(response, self.rules.max_bytes))


class Fetcher:
    """GETs pages through a `GuardedResolver`, following redirects by hand.

    `get()` fetches one page in a session of its own; `session()` keeps one open for many.
    """

    def __init__(
        self,
        allow: AllowList | None = None,
        *,
        resolve: Resolve = system_resolve,
        max_bytes: int = 10 * 1024 * 1024,
        timeout: float = 20.0,
        max_redirects: int = 5,
        connector_factory: ConnectorFactory | None = None,
        user_agent: str = USER_AGENT,
    ) -> None:
        self._allow = allow or AllowList()
        self._resolve = resolve
        self._rules = Rules(max_bytes, timeout, max_redirects)
        self._connector_factory = connector_factory or _connector
        self._user_agent = user_agent

    @property
    def allow(self) -> AllowList:
        return self._allow

    async def get(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - per request, as in `FetchSession.get`
    ) -> Page:
        """The page at `url` after at most `max_redirects` checked redirects."""
        async with self.session() as session:
            return await session.get(url, headers, timeout=timeout)

    @asynccontextmanager
    async def session(
        self,
        *,
        max_bytes: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the default per request
        max_redirects: int | None = None,
    ) -> AsyncIterator[FetchSession]:
        """A `FetchSession`; the keywords override this fetcher's limits for it."""
        rules = Rules(
            self._rules.max_bytes if max_bytes is None else max_bytes,
            self._rules.timeout if timeout is None else timeout,
            self._rules.max_redirects if max_redirects is None else max_redirects,
        )
        resolver = GuardedResolver(self._resolve, self._allow)
        try:
            async with aiohttp.ClientSession(
                connector=self._connector_factory(resolver),
                headers={"User-Agent": self._user_agent},
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,  # a proxy from the environment would bypass the address checks
            ) as http:
                yield FetchSession(http, resolver, self._allow, rules)
        finally:
            await resolver.close()


def _connector(resolver: AbstractResolver) -> aiohttp.BaseConnector:
    # The resolver caches; aiohttp's own cache would only hold the same checked answers.
    return aiohttp.TCPConnector(resolver=resolver, limit=16, use_dns_cache=False)


def _join(base: str, location: str) -> str:
    try:
        return str(URL(base).join(URL(location)))
    except (ValueError, TypeError) as exc:
        raise FetchError(f"it redirects to an invalid address ({location[:80]})") from exc


def size_text(size: int) -> str:
    """A byte count for people: '512 bytes', '64 KB', '10 MB'."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


async def _read_head(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body's first `limit` bytes; the rest is never read."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(65536):
        chunks.append(chunk[: limit - size])
        size += len(chunks[-1])
        if size >= limit:
            break
    return b"".join(chunks)


async def _read_limited(response: aiohttp.ClientResponse, limit: int) -> bytes:
    declared = response.content_length
    if declared is not None and declared > limit:
        raise PageTooLarge(f"the page is {size_text(declared)}, over the {size_text(limit)} limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(65536):
        size += len(chunk)
        if size > limit:
            raise PageTooLarge(f"the page is over the {size_text(limit)} limit")
        chunks.append(chunk)
    return b"".join(chunks)
