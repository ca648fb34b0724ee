"""Fetching web pages safely: no requests to private, loopback or link-local addresses.

Only http and https, no credentials in links. Hosts are read the way aiohttp reads them
(yarl: IDNA and full-width digits folded), so the host that is checked is the host that is
connected to. Literal addresses are checked before any request, odd IPv4 spellings such as
`2130706433` or `0x7f.1` and IPv6 forms that embed an IPv4 address included. Names are
resolved once per session, every address is checked, and the connection goes to a checked
address, so DNS rebinding cannot swap it. Redirects are followed by hand, each one checked
the same way. `LORE_CRAWL_ALLOW` lets an admin allow given hosts or networks (an intranet).

FetchError                  a page could not be fetched; the message is fit for a user
├── Refused                 the link or an address it resolves to is not allowed
├── HttpStatus              the site answered 4xx or 5xx (`status`, `retry_after`)
├── PageTooLarge            the body is over the byte limit
├── TimedOut                no complete answer within the timeout
├── TooManyRedirects        more redirects than allowed
├── OffSite                 a redirect left the scope the caller gave (`url`)
└── UnsupportedType         the body was not read: not one of the asked-for types
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field, replace

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolve = Callable[[str], Awaitable[list[str]]]
ConnectorFactory = Callable[[AbstractResolver], aiohttp.BaseConnector]

ROBOT_NAME = "LoreBot"
CONTACT_URL = "https://github.com/lore-bot/lore"
ALLOW_HINT = "an admin can allow it with LORE_CRAWL_ALLOW"
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")


def user_agent(contact_url: str = CONTACT_URL) -> str:
    """The User-Agent header: the robot's name (what robots.txt matches) and where to reach us."""
    return f"{ROBOT_NAME}/0.1 (+{contact_url})"


USER_AGENT = user_agent()


class FetchError(Exception):
    """A page could not be fetched; the message says why, fit for a user."""


class Refused(FetchError):
    """The URL or address is not allowed."""


class HttpStatus(FetchError):
    """The site answered with an error status."""

    def __init__(self, status: int, reason: str | None, retry_after: str | None = None) -> None:
        super().__init__(f"the site answered {status} {reason or ''}".strip())
        self.status = status
        self.retry_after = retry_after


class PageTooLarge(FetchError):
    pass


class TimedOut(FetchError):
    pass


class TooManyRedirects(FetchError):
    pass


class OffSite(FetchError):
    """A redirect pointed outside the scope the caller allowed."""

    def __init__(self, url: str) -> None:
        super().__init__(f"it redirects outside the site, to {url}")
        self.url = url


class UnsupportedType(FetchError):
    """The response's type was not among those asked for; its body was not downloaded."""

    def __init__(self, mime_type: str) -> None:
        super().__init__(f"not a supported type ({mime_type})")
        self.mime_type = mime_type


@dataclass(frozen=True)
class Page:
    """A response: `url` is where it came from after redirects; `headers` ignore case."""

    url: str
    status: int
    body: bytes
    mime_type: str | None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AllowList:
    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> AllowList:
        """Comma-separated host names and CIDR networks (a bare address is a /32 or /128)."""
        hosts, networks = set(), []
        for item in (text or "").split(","):
            item = item.strip().lower()
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def allows(self, host: str, address: Address | None = None) -> bool:
        if host.lower().rstrip(".") in self.hosts:
            return True
        return address is not None and any(address in n for n in self.networks)


def normalise_ip(host: str) -> Address | None:
    """The address a host spells, including decimal, octal and hex IPv4 forms; None for names."""
    host = host.strip("[]").rstrip(".")
    try:
        return _unmap(ipaddress.ip_address(host))
    except ValueError:
        pass
    parts = host.split(".")
    if host.isascii() and all(p and (p.isdigit() or p.lower().startswith("0x")) for p in parts):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def refusal(address: Address) -> str | None:
    """Why an address may not be fetched, or None when it is public. IPv6 addresses that
    carry an IPv4 address (mapped, NAT64, 6to4, Teredo) are judged by that one too."""
    for form in _forms(address):
        if reason := _refusal(form):
            return f"{reason}; {ALLOW_HINT}"
    return None


def _refusal(address: Address) -> str | None:
    v6 = isinstance(address, ipaddress.IPv6Address)
    site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    checks = (
        (address.is_unspecified, "that address is unspecified (it means this machine)"),
        (address.is_loopback, "that address is this machine (loopback)"),
        (address.is_link_local, "that address is link-local (cloud metadata lives there)"),
        (v6 and address in _UNIQUE_LOCAL, "that address is inside a private network (unique-local)"),
        (site_local, "that address is inside a private network (site-local)"),
        (address.is_multicast, "that address is multicast"),
        (address.is_reserved, "that address is reserved"),
        (address.is_private, "that address is inside a private network"),
        (not address.is_global, "that address is not on the public internet"),
    )
    return next((reason for failed, reason in checks if failed), None)


def _forms(address: Address) -> list[Address]:
    if not isinstance(address, ipaddress.IPv6Address):
        return [address]
    embedded: list[Address] = []  # what the address carries speaks first: it says more
    if address.ipv4_mapped is not None:
        embedded.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        embedded.append(address.sixtofour)
    if address.teredo is not None:
        embedded.extend(address.teredo)
    if any(address in net for net in _NAT64):
        embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [*embedded, address]


def _unmap(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _checked(host: str, address: Address, allow: AllowList) -> None:
    if not allow.allows(host, address) and (reason := refusal(address)):
        raise Refused(reason)


def parse_url(url: str, allow: AllowList) -> URL:
    """The URL as aiohttp will read it, or `Refused` if its scheme, credentials or literal
    address are not allowed (names are checked again after resolution)."""
    try:
        parsed = URL(url)
        host = (parsed.raw_host or "").lower()
        port = parsed.port
    except (ValueError, TypeError) as exc:
        raise Refused("that link is not a valid web address") from exc
    if parsed.scheme not in ("http", "https"):
        raise Refused("only http and https links can be added")
    if parsed.raw_user or parsed.raw_password:
        raise Refused("links with a user name or password in them are not allowed")
    if not host or port is None:
        raise Refused("that link has no host")
    if (address := normalise_ip(host)) is not None:
        _checked(host, address, allow)
    return parsed


def check_url(url: str, allow: AllowList) -> tuple[str, int]:
    """The URL's host and port, or `Refused` (see `parse_url`)."""
    parsed = parse_url(url, allow)
    assert parsed.raw_host is not None and parsed.port is not None  # checked by parse_url
    return parsed.raw_host.lower(), parsed.port


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
                [literal] if literal else [_unmap(ipaddress.ip_address(a)) for a in await self._resolve(host)]
            )
        except OSError as exc:
            raise FetchError(f"I couldn't find the site {host} (DNS: {exc.strerror or exc})") from exc
        except ValueError as exc:  # an answer that is not an address
            raise FetchError(f"I couldn't find the site {host} (DNS answered {exc})") from exc
        if not answers:
            raise FetchError(f"I couldn't find the site {host}")
        for address in answers:
            _checked(host, address, self._allow)
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

    async def _request(
        self,
        url: URL,
        headers: Mapping[str, str] | None,
        seconds: float,
        types: Collection[str] | None,
        head: int | None = None,
    ) -> Page:
        try:
            async with self._http.get(
                url, allow_redirects=False, headers=headers, timeout=aiohttp.ClientTimeout(total=seconds)
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
            raise HttpStatus(response.status, response.reason, headers.get("Retry-After"))
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
