"""Many users of the embedded Chroma file at once, or one alone (its compaction)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Gate:
    """Many users at once, or one alone: the store's calls pass `shared()`, and `compact`'s
    VACUUM holds `alone()`, so no call of this process meets Chroma's file locked (Chroma
    then fails writes with "database is locked")."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._users = 0
        self._alone = False

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._alone)
            self._users += 1
        try:
            yield
        finally:
            with self._condition:
                self._users -= 1
                self._condition.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._alone)
            self._alone = True
            self._condition.wait_for(lambda: self._users == 0)
        try:
            yield
        finally:
            with self._condition:
                self._alone = False
                self._condition.notify_all()
