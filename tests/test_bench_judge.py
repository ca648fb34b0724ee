"""`python -m bench.judge` compares judges fairly: each refuses at the same share of wrongly
refused answerable questions, and e5 reads the units MiniLM ranks best in the best passages."""

from __future__ import annotations

import numpy as np

from bench.judge import PASSAGES, UNITS, judged_texts, refusals, threshold
from knowledge.judging.ranking import Ranking, Scored, ScoredUnit
from knowledge.text.quotes import Kind, Unit
from tests.knowledge.answering.test_citations import hit


def test_refusals_are_counted_at_the_threshold_that_refuses_so_many_answerable_questions() -> None:
    scores = np.array([0.1, 0.2, 0.5, 0.9, 0.05, 0.15, 0.3, 0.6])
    answerable = np.array([True] * 4 + [False] * 4)
    assert threshold(scores, answerable, 2) == 0.35
    assert refusals(scores, answerable, 2) == 3
    assert refusals(scores, answerable, 0) == 1, "only what scores under every answerable question"


def test_e5_reads_the_units_minilm_scores_best_in_the_best_passages() -> None:
    def passage(n: int, sims: list[float]) -> Scored:
        units = [ScoredUnit(Unit(f"p{n} u{i}", Kind.SENTENCE, i), s, 0.0, s) for i, s in enumerate(sims)]
        return Scored(hit(f"passage {n}", n), 2.0 - n, units)

    passages = [passage(n, [0.1 * n + 0.01 * i for i in range(4)]) for n in range(PASSAGES + 1)]
    passages[0].units.append(ScoredUnit(Unit(" ", Kind.SENTENCE, 9), 0.99, 0.0, 0.99))
    texts = judged_texts(Ranking("question", passages))
    assert len(texts) == UNITS and texts[0] == f"p{PASSAGES - 1} u3"
    assert not any(t.startswith(f"p{PASSAGES} ") for t in texts), "beyond the best passages"
    assert " " not in texts, "an empty unit is not read"
