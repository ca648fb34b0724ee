"""Grouping texts by meaning: which of many questions ask the same thing.

Given unit-length embeddings, two texts are neighbours when their cosine similarity reaches
a threshold. Groups are then taken greedily from the densest point down: the text with the
most neighbours heads a group of itself and its neighbours not yet taken, then the next. A
group is thus held together by one centre (everything in it is close to its head), unlike
single-linkage grouping, where chains of near neighbours join unrelated texts.

Similarities are computed a block of rows at a time, so ten thousand texts take a few
hundred megabytes at most and well under a second of matrix products.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

SAME_QUESTION = 0.7
"""The cosine at which two questions count as asking the same thing, for Lore's local model:
paraphrases such as "how do I reset my VPN password?" / "VPN password reset?" / "I forgot my
vpn password, what do I do" scored 0.75 to 0.93, questions on different subjects under 0.3
(eleven questions written for the purpose, 2026-11-29; "can I expense a taxi on a business
trip" and "what is the expense policy for travel?", at 0.49, stay apart)."""
BLOCK = 1024  # rows compared at once: bounds the similarity matrix to a few MB


def group_similar(vectors: npt.NDArray[np.float32], *, threshold: float = SAME_QUESTION) -> list[list[int]]:
    """Row numbers of `vectors` (unit length), in groups of texts that mean the same, biggest
    group first (ties: the group whose head comes first). Every row is in exactly one group."""
    count = len(vectors)
    if count == 0:
        return []
    neighbours = _neighbours(vectors, threshold)
    degree = np.array([len(n) for n in neighbours])
    order = np.lexsort((np.arange(count), -degree))  # densest first, then by position
    taken = np.zeros(count, dtype=bool)
    groups: list[list[int]] = []
    for head in order:
        if taken[head]:
            continue
        members = [int(i) for i in neighbours[head] if not taken[i]]
        taken[members] = True
        groups.append(sorted(members, key=lambda i: (i != head, i)))
    groups.sort(key=lambda g: -len(g))
    return groups


def _neighbours(vectors: npt.NDArray[np.float32], threshold: float) -> list[npt.NDArray[np.intp]]:
    """For each row, the rows within `threshold` (itself included)."""
    found: list[npt.NDArray[np.intp]] = []
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    for start in range(0, len(matrix), BLOCK):
        similar = matrix[start : start + BLOCK] @ matrix.T >= threshold
        for offset, row in enumerate(similar):
            row[start + offset] = True
            found.append(np.flatnonzero(row))
    return found
