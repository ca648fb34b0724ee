"""The servers the `servers` and `replicas` sections run on: PostgreSQL and a Chroma server,
the test suite's own (`tests.support`: PostgreSQL with fsync off, `chroma run` from this
environment's chromadb), started for the run unless given (the test suite gives its
session's). Each run gets a database of its own, dropped at the end."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Servers:
    postgres_admin_url: str
    chroma_host: str
    chroma_port: int


@dataclass(frozen=True)
class Stores:
    """A fresh database on `Servers`' PostgreSQL, and its Chroma server."""

    database_url: str
    chroma_host: str
    chroma_port: int

    def environment(self) -> dict[str, str]:
        """The variables a `lore` process reads them from."""
        return {
            "DATABASE_URL": self.database_url,
            "CHROMA_HOST": self.chroma_host,
            "CHROMA_PORT": str(self.chroma_port),
        }


@contextmanager
def shared_stores(given: Servers | None = None) -> Iterator[Stores]:
    """A fresh database on the given servers, or on servers started for the duration."""
    from tests.support.chroma_server import serve_chroma
    from tests.support.postgres import create_database, drop_database, serve_postgres

    if given is None:
        with (
            serve_postgres() as admin_url,
            serve_chroma() as (host, port),
            shared_stores(Servers(admin_url, host, port)) as stores,
        ):
            yield stores
        return
    url = create_database(given.postgres_admin_url)
    try:
        yield Stores(url, given.chroma_host, given.chroma_port)
    finally:
        drop_database(given.postgres_admin_url, url)
