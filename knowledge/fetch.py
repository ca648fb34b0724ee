"""Fetching web pages safely: no requests to private, loopback or link-local addresses.

Hosts are resolved once; every address is checked (IPv4-mapped IPv6 and odd IPv4 spellings
such as `2130706433` or `0x7f.1` included), and the connection goes to a checked address,
so DNS rebinding cannot swap it. Redirects are followed by hand, each one checked the same
way. `LORE_CRAWL_ALLOW` lets an admin allow given hosts or networks (an intranet wiki).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolve = Callable[[str], Awaitable[list[str]]]
USER_AGENT = "LoreBot/0.1 (+https://github.com/lore-bot/lore)"
ALLOW_HINT = "an admin can allow it with LORE_CRAWL_ALLOW"


class FetchError(Exception):
    """A page could not be fetched; the message says why, fit for a user."""


class Refused(FetchError):
    """The URL or address is not allowed."""


@dataclass(frozen=True)
class Page:
    url: str
    status: int
    body: bytes
    mime_type: str | None
    headers: dict[str, str]


@dataclass(frozen=True)
class AllowList:
    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> AllowList:
        hosts, networks = set(), []
        for item in (text or "").split(","):
            item = item.strip().lower()
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item)
        return cls(frozenset(hosts), tuple(networks))

    def allows(self, host: str, address: Address | None = None) -> bool:
        if host.lower() in self.hosts:
            return True
        return address is not None and any(address in n for n in self.networks)


def normalise_ip(host: str) -> Address | None:
    """The address a host spells, including decimal, octal and hex IPv4 forms; None for names."""
    host = host.strip("[]")
    try:
        return _unmap(ipaddress.ip_address(host))
    except ValueError:
        pass
    if all(part and (part.isdigit() or part.lower().startswith("0x")) for part in host.split(".")):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def refusal(address: Address) -> str | None:
    """Why an address may not be fetched, or None when it is public."""
    address = _unmap(address)
    checks = [
        (address.is_loopback, "that address is this machine (loopback)"),
        (address.is_link_local, "that address is link-local (cloud metadata lives there)"),
        (address.is_private, "that address is inside a private network"),
        (address.is_multicast, "that address is multicast"),
        (address.is_unspecified, "that address is unspecified"),
        (address.is_reserved, "that address is reserved"),
        (
            isinstance(address, ipaddress.IPv6Address) and address in ipaddress.ip_network("fc00::/7"),
            "that address is inside a private network (unique-local)",
        ),
    ]
    for failed, reason in checks:
        if failed:
            return f"{reason}; {ALLOW_HINT}"
    return None


def check_url(url: str, allow: AllowList) -> tuple[str, int]:
    """The URL's host and port, or `Refused` if its scheme, credentials or literal address
    are not allowed (names are checked again after resolution)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise Refused("only http and https links can be added")
    if parts.username or parts.password:
        raise Refused("links with a user name or password in them are not allowed")
    host = (parts.hostname or "").lower()
    if not host:
        raise Refused("that link has no host")
    address = normalise_ip(host)
    if address is not None and not allow.allows(host, address) and (reason := refusal(address)):
        raise Refused(reason)
    return host, parts.port or (443 if parts.scheme == "https" else 80)


async def system_resolve(host: str) -> list[str]:
    import asyncio

    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that resolves once and returns only allowed addresses."""

    def __init__(self, resolve: Resolve, allow: AllowList) -> None:
        self._resolve = resolve
        self._allow = allow

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        literal = normalise_ip(host)
        try:
            addresses = (
                [literal] if literal else [_unmap(ipaddress.ip_address(a)) for a in await self._resolve(host)]
            )
        except OSError as exc:
            raise Refused(f"I couldn't find the site {host} (DNS: {exc.strerror or exc})") from exc
        if not addresses:
            raise Refused(f"I couldn't find the site {host}")
        for address in addresses:
            if not self._allow.allows(host, address) and (reason := refusal(address)):
                raise Refused(reason)
        return [_result(host, port, a) for a in addresses]

    async def close(self) -> None:
        return None


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


def _unmap(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class Fetcher:
    """GETs pages through a `GuardedResolver`, following redirects by hand."""

    def __init__(
        self,
        allow: AllowList | None = None,
        *,
        resolve: Resolve = system_resolve,
        max_bytes: int = 10 * 1024 * 1024,
        timeout: float = 20.0,
        max_redirects: int = 5,
        connector_factory: Callable[[AbstractResolver], aiohttp.BaseConnector] | None = None,
    ) -> None:
        self._allow = allow or AllowList()
        self._resolver = GuardedResolver(resolve, self._allow)
        self._max_bytes = max_bytes
        self._timeout = timeout
        self._max_redirects = max_redirects
        self._connector_factory = connector_factory or (lambda r: aiohttp.TCPConnector(resolver=r, limit=8))

    async def get(self, url: str, headers: dict[str, str] | None = None) -> Page:
        """The page at `url` after at most `max_redirects` checked redirects."""
        connector = self._connector_factory(self._resolver)
        timeout = aiohttp.ClientTimeout(total=self._timeout)
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, headers={"User-Agent": USER_AGENT}
        ) as session:
            for _ in range(self._max_redirects + 1):
                check_url(url, self._allow)
                response = await self._request(session, url, headers)
                if response is None:
                    raise FetchError("the site did not answer")
                _status, location, page = response
                if location is None:
                    return page
                url = urljoin(url, location)
            raise FetchError(f"it redirected more than {self._max_redirects} times")

    async def _request(
        self, session: aiohttp.ClientSession, url: str, headers: dict[str, str] | None
    ) -> tuple[int, str | None, Page] | None:
        try:
            async with session.get(url, allow_redirects=False, headers=headers) as response:
                if response.status in (301, 302, 303, 307, 308) and response.headers.get("Location"):
                    return response.status, response.headers["Location"], _empty(url, response)
                if response.status >= 400:
                    raise FetchError(f"the site answered {response.status} {response.reason or ''}".strip())
                body = await _read_limited(response, self._max_bytes)
                return (
                    response.status,
                    None,
                    Page(
                        str(response.url),
                        response.status,
                        body,
                        response.content_type,
                        dict(response.headers),
                    ),
                )
        except Refused:
            raise
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, Refused):
                raise exc.os_error from None
            raise FetchError(f"I couldn't connect to {urlsplit(url).hostname}") from exc
        except TimeoutError as exc:
            raise FetchError(f"the site took longer than {self._timeout:.0f} s to answer") from exc
        except aiohttp.ClientError as exc:
            raise FetchError(f"the connection failed ({type(exc).__name__})") from exc


async def _read_limited(response: aiohttp.ClientResponse, limit: int) -> bytes:
    declared = response.content_length
    if declared is not None and declared > limit:
        raise FetchError(
            f"the page is {declared // (1024 * 1024)} MB, over the {limit // (1024 * 1024)} MB limit"
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(65536):
        size += len(chunk)
        if size > limit:
            raise FetchError(f"the page is over the {limit // (1024 * 1024)} MB limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _empty(url: str, response: Any) -> Page:
    return Page(url, response.status, b"", None, dict(response.headers))
