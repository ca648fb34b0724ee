"""Deleted text leaves the disk: after documents, messages or whole indexes are removed, the
local stores are compacted so that no file under LORE_HOME keeps their text.

Deleting a row does not erase it. SQLite leaves a deleted row's bytes in free space and in
its write-ahead log, and FTS5 keeps a deleted passage's terms until its segments merge;
Chroma writes every text it is given to its own log (`embeddings_queue`) and leaves it there
until its vector index is saved (`storage.vectors` makes it save after every write, which
lets Chroma purge the log), and its SQLite file then keeps the purged rows' bytes.

So a removal calls `Scrubber.request()`, and a worker thread, once removals have paused for
`delay` seconds (a burst of them is one pass), then:
- Lore's SQLite database (whose connections zero what they free: `secure_delete`, see
  `storage.db`): merges the keyword index's segments (FTS5 `optimize`), which drops deleted
  terms, then checkpoints and truncates its write-ahead log;
- embedded Chroma: `VectorStore.compact` rewrites `chroma.sqlite3` without its free space
  (`VACUUM`, as `chroma vacuum` does) and removes the folders of dropped collections.

PostgreSQL and a Chroma server keep their files elsewhere, on their own terms (their
vacuuming); only what is under LORE_HOME is scrubbed here.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable

from storage.db import Database

log = logging.getLogger(__name__)
DELAY = 1.0
"""Seconds without a removal before the stores are scrubbed."""


class Scrubber:
    """Scrubs the local stores a moment after removals (see the module's docstring)."""

    def __init__(self, db: Database, compact: Callable[[], None], *, delay: float = DELAY) -> None:
        self._db = db
        self._compact = compact
        """The vector store's own compaction (`VectorStore.compact`: embedded Chroma's file)."""
        self._delay = delay
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._running = threading.Lock()
        self.passes = 0
        """How many scrubs have run (for tests and `lore doctor`)."""

    def request(self) -> None:
        """Something was removed: scrub once removals pause. Returns at once."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self._delay, self.scrub)
            self._timer.daemon = True
            self._timer.start()

    def close(self) -> None:
        """Run a scrub still due now (so a process that stops soon after a removal leaves no
        text behind), then stop."""
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
            self.scrub()

    def scrub(self) -> None:
        """Scrub now (one pass at a time); failures are logged, and the next removal retries."""
        with self._running:
            started = time.monotonic()
            self._scrub_sql()
            self._scrub_chroma()
            self.passes += 1
            log.info("scrubbed deleted text from disk in %.2f s", time.monotonic() - started)

    def _scrub_sql(self) -> None:
        if self._db.dialect != "sqlite":
            return
        raw = self._db.engine.raw_connection()  # each statement its own transaction
        try:
            cursor = raw.cursor()
            cursor.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('optimize')")
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cursor.close()
        except sqlite3.Error as exc:
            log.warning("could not scrub the database's deleted text: %s", exc)
        finally:
            raw.close()

    def _scrub_chroma(self) -> None:
        try:
            self._compact()
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not scrub the vector store's deleted text: %s", exc)
