"""Job counters are read by meaning, not by spelling keys."""

from __future__ import annotations

import pytest

from knowledge.sources.jobs.counters import Count, JobCounters, skipped_key


def test_counters_read_by_meaning() -> None:
    raw = {
        "pages_found": 9, "pages_fetched": 4, "pages_unchanged": 2, "pages_skipped": 1, "pages_gone": 1,
        "attachments_added": 2, "attachments_updated": 1, skipped_key("robots.txt disallows it"): 3,
        skipped_key("not a page"): 1,
    }  # fmt: skip
    counted = JobCounters(raw)
    assert counted[Count.PAGES_FOUND] == 9 and counted[Count.CHUNKS] == 0
    assert counted.pages_done == 8 and counted.pages_indexed == 6 and counted.attachments_indexed == 3
    assert counted.skipped == {"robots.txt disallows it": 3, "not a page": 1}


def test_outcomes_name_their_counters() -> None:
    assert Count.page("fetched") is Count.PAGES_FETCHED
    assert Count.document("added") is Count.DOCUMENTS_ADDED
    assert Count.document("unchanged", attachment=True) is Count.ATTACHMENTS_UNCHANGED
    with pytest.raises(ValueError):
        Count.page("teleported")
