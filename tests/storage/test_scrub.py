"""The scrubber's parts: removals in a burst are one pass, and its VACUUM waits for the
vector store's calls under way (and holds new ones back until it is done)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from storage.db import open_database
from storage.scrub import Scrubber
from storage.vectors import Gate


def test_a_burst_of_removals_is_one_pass_and_close_runs_what_is_due(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    try:
        scrubber = Scrubber(db, lambda: None, delay=0.2)
        for _ in range(5):
            scrubber.request()
        time.sleep(0.6)
        assert scrubber.passes == 1
        scrubber.request()
        scrubber.close()  # due, not yet run: run now
        assert scrubber.passes == 2
    finally:
        db.dispose()


def test_alone_waits_for_shared_users_and_holds_new_ones_back() -> None:
    gate, order = Gate(), []
    entered = threading.Event()

    def user(name: str, hold: float) -> None:
        with gate.shared():
            entered.set()
            order.append(f"{name} in")
            time.sleep(hold)
            order.append(f"{name} out")

    first = threading.Thread(target=user, args=("first", 0.3))
    first.start()
    entered.wait()

    def vacuum() -> None:
        with gate.alone():
            order.append("vacuum")
            time.sleep(0.2)
            order.append("vacuum done")

    alone = threading.Thread(target=vacuum)
    alone.start()
    time.sleep(0.1)
    second = threading.Thread(target=user, args=("second", 0.0))
    second.start()
    for thread in (first, alone, second):
        thread.join(5)
    assert order == ["first in", "first out", "vacuum", "vacuum done", "second in", "second out"]
