"""Timing what the code under test does, not how big the test session has grown.

A full garbage collection walks every object alive in the process. By the time the suite is
two thirds through, that is millions of objects, and a collection the timed code's own
allocations happen to start takes a second or more on a slow machine (it holds the GIL, so
it stalls the event loop too, whichever thread started it). `own_heap` collects once and
freezes what is alive before the clock starts, so that only the timed code's own objects
are walked while it runs; collections still happen, and still count.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def own_heap() -> Iterator[None]:
    """While the block runs, the garbage collector leaves alone what was alive before it."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
