"""Grouping texts by meaning: every text in one group, each group held by its centre."""

from __future__ import annotations

import numpy as np

from knowledge.search.grouping import group_similar


def unit(*rows: list[float]) -> np.ndarray:
    matrix = np.array(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_near_texts_group_around_the_densest_and_the_rest_stand_alone() -> None:
    vectors = unit([1, 0, 0], [0.95, 0.1, 0], [0.9, 0.2, 0], [0, 1, 0], [0, 0.97, 0.1], [0, 0, 1])
    assert group_similar(vectors, threshold=0.9) == [[0, 1, 2], [3, 4], [5]]  # ties: the first heads


def test_a_chain_of_neighbours_is_not_one_group() -> None:
    # each text is near the next (35 degrees apart), none near the one after: single linkage
    # would make one group of all five; around centres they split
    angles = np.radians([0, 35, 70, 105, 140])
    vectors = unit(*np.stack([np.cos(angles), np.sin(angles)], axis=1).tolist())
    assert group_similar(vectors, threshold=0.766) == [[1, 0, 2], [3, 4]]


def test_nothing_to_group_and_many_to_group() -> None:
    assert group_similar(np.zeros((0, 4), dtype=np.float32)) == []
    rng = np.random.default_rng(7)
    vectors = unit(*rng.normal(size=(2500, 16)).tolist())
    groups = group_similar(vectors, threshold=0.8)
    assert sorted(i for g in groups for i in g) == list(range(2500))
    assert [len(g) for g in groups] == sorted((len(g) for g in groups), reverse=True)
