"""Leases on half-written documents: which process is writing a row, and until when it
vouches for it.

A document is `pending` while its chunks and vectors are written and `deleting` while they
are removed; a process killed half-way leaves it so, and some other process must finish the
job (`DocumentRepository.take_over_abandoned`). With many processes on one database, "some
other process" must never be one that is still writing it: so every such row carries its
writer's name and a lease expiry, and the writer renews the leases of the rows it holds
(`LeaseKeeper`, a thread, so a busy event loop cannot starve it) until it is done with
them. Only a row whose lease has expired is taken over, and taking over is a conditional
update, so a writer that comes back late (a paused process) finds its row gone and fails
that document instead of reporting it stored.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from storage.values import utcnow

log = logging.getLogger(__name__)

LEASE_SECONDS = 60.0
"""How long a writer vouches for a row it holds without renewing: longer than any pause of a
healthy process (a full garbage collection, a slow disk), short enough that a killed
writer's rows are repaired within a minute or two."""


@dataclass(frozen=True)
class Writer:
    """A process writing documents: its name is on every row it holds."""

    name: str
    lease_seconds: float = LEASE_SECONDS

    @classmethod
    def of_this_process(cls, lease_seconds: float = LEASE_SECONDS) -> Writer:
        """`host:pid:random`: unique even when a pid is reused, or in a container whose pid is
        always 1."""
        return cls(f"{socket.gethostname()[:80]}:{os.getpid()}:{secrets.token_hex(4)}", lease_seconds)

    def expiry(self) -> datetime:
        """When a lease taken or renewed now runs out."""
        return utcnow() + timedelta(seconds=self.lease_seconds)

    def abandoned_before(self) -> datetime:
        """Rows written before leases existed (no expiry) count as abandoned once older than
        one lease."""
        return utcnow() - timedelta(seconds=self.lease_seconds)


JOIN_SECONDS = 10.0
"""How long closing waits for a renewal under way (one short UPDATE) to end."""


@dataclass(eq=False)
class LeaseKeeper:
    """Renews the leases of the rows this process holds, every quarter lease, from a thread
    that runs only while there are some. `renew(ids)` does the writing. `close()` stops the
    thread and waits for it: nothing is renewed afterwards (rows still held are left to
    expire, as a killed process leaves them), so no renewal outlives the database it writes to."""

    renew: Callable[[list[int]], None]
    lease_seconds: float = LEASE_SECONDS
    _held: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _wake: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _closed: bool = False

    def hold(self, ids: Iterable[int]) -> None:
        with self._lock:
            self._held.update(ids)
            if self._held and self._thread is None and not self._closed:
                self._wake.clear()
                self._thread = threading.Thread(target=self._run, name="lore-lease-keeper", daemon=True)
                self._thread.start()

    def release(self, ids: Iterable[int]) -> None:
        with self._lock:
            self._held.difference_update(ids)
            if not self._held:
                self._wake.set()

    def close(self) -> None:
        """Stop renewing, and wait for the thread (and a renewal under way) to end."""
        with self._lock:
            self._closed = True
            self._held.clear()
            self._wake.set()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(JOIN_SECONDS)

    @property
    def held(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._held)

    def _run(self) -> None:
        while True:
            self._wake.wait(max(self.lease_seconds / 4, 0.05))
            with self._lock:
                ids = sorted(self._held)
                if not ids or self._closed:
                    self._thread = None
                    return
                self._wake.clear()
            try:
                self.renew(ids)
            except Exception:  # the database is away for a moment: the next round tries again
                log.warning("could not renew the leases of %d documents", len(ids), exc_info=True)
