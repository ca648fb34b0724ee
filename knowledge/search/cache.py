"""A small LRU cache with expiry for answers and query results.

Keys include each searched index's content version, so adding or removing a document
changes the key of every answer it could change; stale entries simply age out.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class TTLCache(Generic[V]):
    def __init__(
        self,
        size: int = 512,
        ttl_seconds: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._size = size
        self._ttl = ttl_seconds
        self._clock = clock
        self._items: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        item = self._items.get(key)
        if item is None:
            return None
        stored_at, value = item
        if self._clock() - stored_at > self._ttl:
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> None:
        self._items[key] = (self._clock(), value)
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def stable_key(*parts: Any) -> str:
    """A cache key from JSON-able parts (dict order and whitespace in text do not matter)."""
    return json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))


def normalise_query(text: str) -> str:
    return " ".join(text.lower().split())
