"""`python -m bench.fit_ranking`: refit the second stage's weights on the tuning half.

Ingests the docs corpus into a throw-away store and ranks every answerable question of the
*tune* half as `lore ask` would (`bench.calibrate.weighed`: follow-ups made standalone, the
second stage over the first 12 passages), keeping each passage's signals
(`knowledge.judging.ranking.PASSAGE_SIGNALS`) and whether it lies in a gold file. The score is linear
in the signals, so the weights are then fitted without ranking again: coordinate ascent on
the mean reciprocal rank of the first gold passage, from the current `Weights`, each weight
tried over `GRID` in turn until none improves it. Prints the current and the fitted mean
reciprocal rank and the fitted `Weights`, then each project's figure with the weights fitted
on the other projects' questions (do they hold elsewhere?). With `--write`, the fitted weights
go into the parameters file Lore reads (`knowledge/data/parameters.toml`, [ranking]).
Refit abstention's calibration after (`python -m bench.calibrate`): it reads the reordered
passages. Never reads the held-out half.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.calibrate import weighed
from knowledge.judging import parameters
from knowledge.judging.ranking import PASSAGE_SIGNALS, Weights

GRID = np.round(np.arange(0.0, 2.0001, 0.05), 2)
"""The values each weight is tried at: the signals lie in 0..1, so weights beyond 2 would
only say that one signal decides alone."""


@dataclass(frozen=True)
class Candidates:
    """One answerable question's scored passages: their signals (one row each, in
    `PASSAGE_SIGNALS` order) and which lie in a gold file."""

    signals: np.ndarray
    gold: np.ndarray
    project: str = ""
    """The top folder of its first gold file (`flask`, `starlette`, `requests`)."""

    def reciprocal_rank(self, weights: np.ndarray) -> float:
        """1 / the rank of the first gold passage once scored by `weights` (ties keep the
        retrieval's order); 0 with none among them."""
        if not self.gold.any():
            return 0.0
        order = np.argsort(-(self.signals @ weights), kind="stable")
        return 1.0 / (1 + int(np.flatnonzero(self.gold[order])[0]))


def as_vector(weights: Weights) -> np.ndarray:
    return np.array([getattr(weights, name) for name in PASSAGE_SIGNALS], dtype=float)


def mean_reciprocal_rank(questions: Sequence[Candidates], weights: np.ndarray) -> float:
    return sum(q.reciprocal_rank(weights) for q in questions) / len(questions) if questions else 0.0


def ascend(
    questions: Sequence[Candidates], start: np.ndarray, grid: np.ndarray = GRID
) -> tuple[np.ndarray, float]:
    """Coordinate ascent on the mean reciprocal rank from `start`: each weight in turn set
    to the value of `grid` that raises it most, until a full round raises it no more."""
    best, weights = mean_reciprocal_rank(questions, start), start.astype(float)
    improved = True
    while improved:
        improved = False
        for i in range(len(weights)):
            for value in grid:
                trial = weights.copy()
                trial[i] = value
                found = mean_reciprocal_rank(questions, trial)
                if found > best + 1e-12:
                    best, weights, improved = found, trial, True
    return weights, best


async def gather(home: Path) -> list[Candidates]:
    """The candidates of every answerable tune question (none for one below the relevance
    floor: it counts as a miss whatever the weights)."""
    questions = []
    async for item, ranking, _ in weighed(home):
        if not item.answerable:
            continue
        scored = [p for p in ranking.passages if p.signals] if ranking is not None else []
        questions.append(
            Candidates(
                signals=np.array(
                    [[p.signals[n] for n in PASSAGE_SIGNALS] for p in scored], dtype=float
                ).reshape(len(scored), len(PASSAGE_SIGNALS)),
                gold=np.array([p.hit.document.source_key in item.gold for p in scored], dtype=bool),
                project=item.gold[0].split("/", 1)[0] if item.gold else "",
            )
        )
    return questions


def by_project(questions: Sequence[Candidates], start: np.ndarray) -> dict[str, tuple[float, float]]:
    """Leave one project out: for each project, the mean reciprocal rank of its questions with
    `start`, and with the weights fitted from `start` on the other projects' questions alone.
    Close figures say the weights hold for docs they were not fitted on."""
    out = {}
    for project in sorted({q.project for q in questions}):
        own = [q for q in questions if q.project == project]
        fitted, _ = ascend([q for q in questions if q.project != project], start)
        out[project] = (mean_reciprocal_rank(own, start), mean_reciprocal_rank(own, fitted))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fit_ranking", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--write", action="store_true", help="write the fitted weights to the parameters file"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lore-fit-ranking-") as home:
        questions = asyncio.run(gather(Path(home)))
    current = as_vector(Weights.fitted())
    fitted, best = ascend(questions, current)
    print(f"{len(questions)} answerable tune questions; mean reciprocal rank of the first gold passage:")
    print(f"  current weights {mean_reciprocal_rank(questions, current):.4f}, fitted {best:.4f}")
    print("Weights(" + ", ".join(f"{n}={v:g}" for n, v in zip(PASSAGE_SIGNALS, fitted, strict=True)) + ")")
    print("leave one project out (its questions: current weights / weights fitted on the others):")
    for project, (before, after) in by_project(questions, current).items():
        print(f"  {project}: {before:.4f} / {after:.4f}")
    if args.write:
        parameters.write(
            parameters.PARAMETERS, "ranking", dict(zip(PASSAGE_SIGNALS, fitted.tolist(), strict=True))
        )
        print(f"wrote {parameters.PARAMETERS}")


if __name__ == "__main__":
    main()
