"""`python -m bench.calibrate`: refit abstention's calibration on the tuning half.

Ingests the docs corpus into a throw-away store, gathers the evidence (`knowledge.judging.abstain`)
of every question of the *tune* half as `lore ask` would (follow-ups made standalone, the
second stage over the first 12 passages), fits an L2-regularised logistic regression of
"answerable" on it, and picks the highest threshold that refuses at most `MAX_WRONG` of the
tune half's answerable questions. Prints the fitted calibration with the trade-off at other
thresholds and the hedge's shares; with `--write`, it goes into the parameters file Lore reads
(`knowledge/data/parameters.toml`, [abstention]: the model, the threshold and the typical
standout; the hedge is chosen by reading those shares). Never reads the held-out half.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np

from bench.quality import DOCS_CORPUS, DOCS_QUESTIONS, settings
from bot.app.services import build_services
from bot.cli.evaluation import throwaway_index
from knowledge.engine import AnswerSpec
from knowledge.evaluation.qa import QaItem, folder_sources, load_questions
from knowledge.indexing.ingest import Source
from knowledge.judging import parameters
from knowledge.judging.abstain import Calibration, Evidence
from knowledge.judging.ranking import Ranking
from knowledge.search.followup import standalone_question

MAX_WRONG = 0.03
"""The goal is at most 5% of answerable questions refused; choosing 3% on the tune half
leaves room for the held-out half and for run-to-run jitter (a text's vector moves very
slightly with the batch it is embedded in, enough to move a question lying on the line)."""
L2 = 1.0


async def weighed(
    home: Path, corpus: Path = DOCS_CORPUS, questions: Path = DOCS_QUESTIONS, split: str = "tune"
) -> AsyncIterator[tuple[QaItem, Ranking | None, Evidence | None]]:
    """Each question of `split` with its ranking and evidence as `Judge` reads them
    (before reading on), over `corpus` ingested into a throw-away store under `home`; None
    for both below the relevance floor."""
    services = build_services(settings(home))
    spec = AnswerSpec()
    try:
        index = await throwaway_index(services, "docs")
        sources: list[Source] = list(folder_sources(corpus))
        await services.ingestor.add_many(index, sources)
        index = await asyncio.to_thread(services.indexes.get, index.id)
        for item in load_questions(questions, split):
            query = standalone_question(item.question, list(item.history))
            retrieval = await services.retriever.search([index], query, top_k=spec.extractive_top_k)
            if retrieval.hits and (retrieval.best_similarity or 0.0) >= spec.relevance_floor:
                yield (item, *await services.knowledge.judge.weigh(query, retrieval))
            else:
                yield item, None, None
    finally:
        await services.aclose()


async def gather(home: Path) -> list[tuple[Evidence | None, bool]]:
    """(evidence or None below the relevance floor, answerable) for each tune question."""
    return [(found, item.answerable) async for item, _, found in weighed(home)]


def fit(x: np.ndarray, y: np.ndarray, iterations: int = 4000, rate: float = 0.1) -> tuple[np.ndarray, float]:
    """Logistic regression by gradient descent on standardised features; the coefficients
    and intercept on the original scale."""
    mean, scale = x.mean(0), x.std(0) + 1e-9
    z = (x - mean) / scale
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(z @ w + b)))
        w -= rate * (z.T @ (p - y) / len(y) + L2 * w / len(y))
        b -= rate * float((p - y).mean())
    return w / scale, b - float((w * mean / scale).sum())


def cross_validated_auc(x: np.ndarray, y: np.ndarray) -> float:
    """Leave-one-out: each question scored by a model fitted on the others; the AUC of those
    scores (the chance an answerable question outscores an unanswerable one)."""
    scores = np.empty(len(y))
    for i in range(len(y)):
        others = np.arange(len(y)) != i
        coefficients, intercept = fit(x[others], y[others])
        scores[i] = intercept + x[i] @ coefficients
    positive, negative = scores[y == 1], scores[y == 0]
    wins = (positive[:, None] > negative[None, :]).sum() + 0.5 * (
        positive[:, None] == negative[None, :]
    ).sum()
    return float(wins / (len(positive) * len(negative)))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.calibrate", description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="write the calibration to the parameters file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lore-calibrate-") as home:
        rows = asyncio.run(gather(Path(home)))
    kept = [(e.as_vector(), a) for e, a in rows if e is not None]
    x = np.array([v for v, _ in kept], dtype=float)
    y = np.array([a for _, a in kept], dtype=float)
    coefficients, intercept = fit(x, y)
    print(f"leave-one-out AUC on the tune half: {cross_validated_auc(x, y):.3f}")
    confidence = np.array(
        [1.0 / (1.0 + np.exp(-(intercept + e.as_vector() @ coefficients))) if e else 0.0 for e, _ in rows]
    )
    answerable = np.array([a for _, a in rows])
    best = 0.0
    values = sorted(set(confidence.tolist()))
    for below, threshold in zip([0.0, *values], values, strict=False):
        if (confidence[answerable] < threshold).mean() <= MAX_WRONG:
            best = (below + threshold) / 2  # the same decisions, off the last question's line
    for threshold in sorted({best, *np.quantile(confidence, np.linspace(0.05, 0.5, 10)).tolist()}):
        print(
            f"threshold {threshold:.3f}: abstains on {(confidence[~answerable] < threshold).mean():.2f} "
            f"of the unanswerable, {(confidence[answerable] < threshold).mean():.2f} of the answerable"
        )
    hedge = Calibration.fitted().hedge
    flagged = (confidence[~answerable] < hedge).mean()
    hedged = ((confidence[answerable] >= best) & (confidence[answerable] < hedge)).mean()
    print(
        f"hedge {hedge:.3f}: flags {flagged:.2f} of the unanswerable, hedges {hedged:.2f} of the answerable"
    )
    standout = float(np.median([e.standout for e, a in rows if e is not None and a]))
    fitted = {"intercept": intercept, "coefficients": coefficients.tolist(), "threshold": best}
    print(f"{fitted}, typical standout {standout:.3f}")
    if args.write:
        parameters.write(parameters.PARAMETERS, "abstention", fitted | {"typical_standout": standout})
        print(f"wrote {parameters.PARAMETERS}")


if __name__ == "__main__":
    main()
