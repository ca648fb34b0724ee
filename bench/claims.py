"""`python -m bench.claims`: how the check of a model's answer (`knowledge.answering.citations`) judges
claims written by hand against passages of the Flask, Requests and Starlette docs.

Each line of a claims file holds a passage, a claim citing it as `[1]`, and whether the claim
agrees with it: said in other words, or said as its opposite. The check should pass the first
and refuse the second; the report counts both, and lists every claim judged otherwise with the
check's reason. No model is needed: the claims are what small models write. Two files:
`bench/data/claims.jsonl`, written alongside the check's rules by the one who wrote them, and
`bench/data/claims_blind.jsonl`, 128 written by two helpers who never read the rules (a
"not" added or dropped, a word swapped for its opposite, who does what turned around, a
default changed), which is the fairer measure. With `--judge`, the configured model
(`OPENAI_BASE_URL`, `LLM_MODEL`) also judges what the check passes, as `LLM_VERIFY` does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowledge.answering.citations import check_answer
from knowledge.answering.verification import claims_of, judged, verify_prompt
from knowledge.backends.llm import ChatModel, OpenAIChatModel
from knowledge.search.retrieval import Hit
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
    return report(claims, [_checked(item) for item in claims])


async def judge(claims: list[Claim], chat: ChatModel) -> dict[str, Any]:
    """As `run`, with the model's judgement after the citation check (`LLM_VERIFY`): a claim
    the check passed is refused when the model judges it contradicted or unsupported. One
    model call a claim; also how many the model gave no verdict for, and its p50 latency."""
    problems, unjudged, seconds = [], 0, []
    for item in claims:
        found = _checked(item)
        if not found:
            started = time.perf_counter()
            prompt = verify_prompt(claims_of(item.claim, 1), [passage(item.passage)])
            completion = await chat.complete(prompt)
            seconds.append(time.perf_counter() - started)
            verdict = judged(completion.text, 1).get(1)
            unjudged += verdict is None
            found = [verdict] if verdict in ("CONTRADICTED", "UNSUPPORTED") else []
        problems.append(found)
    median = round(statistics.median(seconds), 2) if seconds else None
    return {"no_verdict": unjudged, "judge_p50_s": median, **report(claims, problems)}


def report(claims: list[Claim], problems: list[list[str]]) -> dict[str, Any]:
    """The counts of refused claims of each kind (`problems`: each claim's), and every claim
    judged wrongly, with the first problem found."""
    counts = {"agrees": [0, 0], "opposite": [0, 0]}  # [refused, of]
    wrong = []
    for item, found in zip(claims, problems, strict=True):
        kind = "agrees" if item.agrees else "opposite"
        counts[kind][0] += bool(found)
        counts[kind][1] += 1
        if bool(found) == item.agrees:
            wrong.append({"claim": item.claim, "agrees": item.agrees, "problem": found[0] if found else None})
    return {
        "agreeing_refused": f"{counts['agrees'][0]} of {counts['agrees'][1]}",
        "opposite_refused": f"{counts['opposite'][0]} of {counts['opposite'][1]}",
        "judged_wrongly": wrong,
    }


def _checked(item: Claim) -> list[str]:
    return check_answer(item.claim, [passage(item.passage)]).problems


async def _judged(paths: list[Path]) -> dict[str, Any]:
    from bot.app.services import build_llm_client
    from bot.app.settings import Settings

    settings = Settings()
    client = build_llm_client(settings)
    if client is None:
        raise SystemExit("--judge needs a model: set OPENAI_BASE_URL or OPENAI_API_KEY (and LLM_MODEL)")
    chat = OpenAIChatModel(client, settings.llm_model)
    try:
        return {path.name: await judge(load(path), chat) for path in paths}
    finally:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "claims", nargs="*", type=Path, default=[CLAIMS, BLIND], help="claims files (JSON lines)"
    )
    parser.add_argument(
        "--judge", action="store_true", help="the configured model judges what the check passes (LLM_VERIFY)"
    )
    args = parser.parse_args()
    if args.judge:
        print(json.dumps(asyncio.run(_judged(args.claims)), indent=2))
    else:
        print(json.dumps({path.name: run(load(path)) for path in args.claims}, indent=2))


if __name__ == "__main__":
    main()
