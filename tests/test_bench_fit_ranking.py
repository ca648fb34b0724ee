"""`python -m bench.fit_ranking` fits the second stage's weights on the reciprocal rank of the
first gold passage: the reading of a question's candidates, and the ascent."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bench.fit_ranking import Candidates, as_vector, ascend, by_project, mean_reciprocal_rank
from knowledge.judging.ranking import PASSAGE_SIGNALS, Weights


def test_the_reciprocal_rank_is_that_of_the_first_gold_passage_once_scored() -> None:
    signals = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    question = Candidates(signals, np.array([False, True, True]))
    assert question.reciprocal_rank(np.array([1.0, 0.0])) == 0.5, "third scores 0.5, second 0"
    assert question.reciprocal_rank(np.array([0.0, 1.0])) == 1.0
    assert question.reciprocal_rank(np.array([0.0, 0.0])) == 0.5, "ties keep the retrieval's order"
    assert Candidates(signals, np.zeros(3, dtype=bool)).reciprocal_rank(np.array([1.0, 1.0])) == 0.0
    empty = Candidates(np.zeros((0, 2)), np.zeros(0, dtype=bool))
    assert mean_reciprocal_rank([question, empty], np.array([0.0, 1.0])) == 0.5, "a miss counts 0"


def test_the_ascent_finds_the_weight_that_puts_gold_first_and_never_loses_ground() -> None:
    rng = np.random.default_rng(7)
    questions = []
    for _ in range(30):
        signals = rng.random((12, 2))
        gold = np.zeros(12, dtype=bool)
        gold[int(np.argmax(signals[:, 1]))] = True  # the second signal tells the answer
        questions.append(Candidates(signals, gold))
    start = np.array([1.0, 0.2])
    fitted, best = ascend(questions, start)
    assert best == 1.0 and best > mean_reciprocal_rank(questions, start)
    assert fitted[1] > 0 and all(q.reciprocal_rank(fitted) == 1.0 for q in questions)
    again, same = ascend(questions, fitted)
    assert same == best and np.array_equal(again, fitted), "a fitted point is a fixed point"


def test_the_weights_are_read_in_the_order_of_the_signals() -> None:
    weights = replace(Weights.fitted(), keyword=0.7)
    vector = as_vector(weights)
    assert len(vector) == len(PASSAGE_SIGNALS)
    assert vector[PASSAGE_SIGNALS.index("keyword")] == pytest.approx(0.7)
    signals = dict.fromkeys(PASSAGE_SIGNALS, 0.0) | {"keyword": 1.0, "unit_dense": 0.5}
    assert weights.passage_score(signals) == pytest.approx(0.7 + 0.5 * weights.unit_dense)


def test_leaving_a_project_out_fits_on_the_others_and_scores_it() -> None:
    """One question of project a and one of b whose answer the second signal tells, three of
    c whose answer the first does. Left out, each project is scored with the weights the
    others call for: c's answers are missed (a and b want the second signal), and so are a's
    (b and c together want the first)."""

    def question(project: str, telling: int) -> Candidates:
        return Candidates(np.array([[0.9, 0.1], [0.1, 0.9]]), np.array([telling == 0, telling == 1]), project)

    questions = [question("a", 1), question("b", 1), *[question("c", 0) for _ in range(3)]]
    results = by_project(questions, np.array([0.0, 1.0]))
    assert results["c"] == (0.5, 0.5), "fitted on a and b, the weights still miss c's answers"
    assert results["a"] == (1.0, 0.5), "fitted on b and c, the first signal wins and a is missed"
