"""`python -m bench.claims` judges every hand-written claim and names the ones it gets wrong."""

from __future__ import annotations

import json
from pathlib import Path

from bench.claims import BLIND, CLAIMS, Claim, load, run


def test_the_claims_are_counted_by_kind_and_the_misjudged_named(tmp_path: Path) -> None:
    for path in (CLAIMS, BLIND):
        claims = load(path)
        assert len(claims) >= 30 and any(c.agrees for c in claims) and not all(c.agrees for c in claims)
    passage = "By default, Requests does not retry failed connections."
    mine = [
        Claim(passage, "By default, Requests never retries failed connections [1].", agrees=True),
        Claim(passage, "By default, Requests retries failed connections [1].", agrees=False),
        Claim(
            passage,
            "Requests retries failed connections by default, unless told otherwise [1].",
            agrees=False,
        ),
    ]
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(c.__dict__) + "\n" for c in mine))
    report = run(load(path))
    assert report["agreeing_refused"] == "0 of 1" and report["opposite_refused"] == "1 of 2"
    assert report["judged_wrongly"] == [{"claim": mine[2].claim, "agrees": False, "problem": None}], (
        "'unless' denies too, so the check sees two claims that both deny and leaves them alone"
    )
