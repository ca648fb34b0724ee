"""Web addresses Lore may fetch, and what fetching one returns or fails with: the values
and the address rules of `knowledge.sources.fetch`, without its HTTP client, so that what
only checks a link or catches a fetch's error does not import aiohttp.

Only http and https, no credentials in links. Hosts are read the way aiohttp reads them
(yarl: IDNA and full-width digits folded), so the host that is checked is the host that is
connected to. Literal addresses are checked before any request, odd IPv4 spellings such as
`2130706433` or `0x7f.1` and IPv6 forms that embed an IPv4 address included; the fetcher
checks every address a name resolves to with the same rule (`check_address`).
`LORE_CRAWL_ALLOW` lets an admin allow given hosts or networks (an intranet).

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

import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from yarl import URL

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOW_HINT = "an admin can allow it with LORE_CRAWL_ALLOW"
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")


class FetchError(Exception):
    """A page could not be fetched; the message says why, fit for a user."""


class Refused(FetchError):
    """The URL or address is not allowed."""


class HttpStatus(FetchError):
    """The site answered with an error status."""

    def __init__(
        self,
        status: int,
        reason: str | None,
        retry_after: str | None = None,
        headers: Mapping[str, str] | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(f"the site answered {status} {reason or ''}".strip())
        self.status = status
        self.retry_after = retry_after
        self.headers: Mapping[str, str] = headers or {}
        """The response's headers (APIs say why they refuse there: rate-limit counters)."""
        self.detail = detail
        """The start of the error's body (an API's message), for the code, never shown as is."""


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
        return unmapped(ipaddress.ip_address(host))
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


def unmapped(address: Address) -> Address:
    """The IPv4 address an IPv4-mapped IPv6 address carries; any other as it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def check_address(host: str, address: Address, allow: AllowList) -> None:
    """`Refused` unless `address`, which `host` names or resolves to, may be fetched."""
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
        check_address(host, address, allow)
    return parsed


def check_url(url: str, allow: AllowList) -> tuple[str, int]:
    """The URL's host and port, or `Refused` (see `parse_url`)."""
    parsed = parse_url(url, allow)
    assert parsed.raw_host is not None and parsed.port is not None  # checked by parse_url
    return parsed.raw_host.lower(), parsed.port
