"""`python -m bench.claims`: how the check of a model's answer (`knowledge.citations`) judges
claims written by hand against passages of the Flask, Requests and Starlette docs.

Each line of a claims file holds a passage, a claim citing it as `[1]`, and whether the claim
agrees with it: said in other words, or said as its opposite. The check should pass the first
and refuse the second; the report counts both, and lists every claim judged otherwise with the
check's reason. No model is needed: the claims are what small models write. Two files:
`bench/data/claims.jsonl`, written alongside the check's rules by the one who wrote them, and
`bench/data/claims_blind.jsonl`, 128 written by two helpers who never read the rules (a
"not" added or dropped, a word swapped for its opposite, who does what turned around, a
default changed), which is the fairer measure.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowledge.citations import check_answer
from knowledge.retrieval import Hit
from storage.records import DocumentRef, IndexRef
from storage.values import DocumentStatus, Scope, SourceKind

CLAIMS = Path(__file__).parent / "data" / "claims.jsonl"
BLIND = CLAIMS.with_name("claims_blind.jsonl")
_SOMETIME = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Claim:
    passage: str
    claim: str
    agrees: bool


def passage(text: str, n: int = 1) -> Hit:
    """`text` as the `n`th passage a model was shown, from a document of its own."""
    document = DocumentRef(
        n, 1, SourceKind.FILE, f"d{n}", f"d{n}.md", None, None, _SOMETIME, None, None,
        "text/markdown", 1, 1, "h", 1, DocumentStatus.READY, {},
    )  # fmt: skip
    index = IndexRef(1, "T1", "notes", Scope.SHARED, None, None, False, "model", 384, 1, _SOMETIME)
    return Hit(n, index, document, "", text, 0, 1.0, 0.5, None)


def load(path: Path = CLAIMS) -> list[Claim]:
    return [Claim(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def run(claims: list[Claim]) -> dict[str, Any]:
    """How many of each kind the check refused, and every claim it judged wrongly."""
    counts = {"agrees": [0, 0], "opposite": [0, 0]}  # [refused, of]
    wrong = []
    for item in claims:
        problems = check_answer(item.claim, [passage(item.passage)]).problems
        kind = "agrees" if item.agrees else "opposite"
        counts[kind][0] += bool(problems)
        counts[kind][1] += 1
        if bool(problems) == item.agrees:
            wrong.append(
                {"claim": item.claim, "agrees": item.agrees, "problem": problems[0] if problems else None}
            )
    return {
        "agreeing_refused": f"{counts['agrees'][0]} of {counts['agrees'][1]}",
        "opposite_refused": f"{counts['opposite'][0]} of {counts['opposite'][1]}",
        "judged_wrongly": wrong,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "claims", nargs="*", type=Path, default=[CLAIMS, BLIND], help="claims files (JSON lines)"
    )
    print(json.dumps({path.name: run(load(path)) for path in parser.parse_args().claims}, indent=2))


if __name__ == "__main__":
    main()
