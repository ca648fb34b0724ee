"""The local embedder's memory stays bounded whatever lengths it is fed (issue 16, item 8).

Fed batches of 16 texts as they came, with onnxruntime's defaults, the process grew from
about 250 MB to about 1 GB after one batch of full-window texts and kept it (the arena sized
for 16 × 256 pieces, a memory plan per input shape, the int8 weights folded into a float
copy). Over the batches below the bounded feeding grows by about 20 MB, the old one by about
320 MB (on top of the 120 MB folded copy it made at load).
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from knowledge.backends.embedding import MAX_WORD_PIECES, LocalEmbedder, Shapes, runs

GROWTH_BOUND_MB = 100
STATUS = Path("/proc/self/status")


def _status_mb(field: str) -> float:
    for line in STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} in {STATUS}")


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _varied_batches(seed: int = 5) -> list[list[str]]:
    """Batches as ingest and questions bring them: full-window chunks, a mix, short lines."""
    rng = random.Random(seed)
    vocabulary = [
        f"{rng.choice('bcdfghjklmnp')}{rng.choice('aeiou')}{rng.choice('rstvwxz')}" for _ in range(400)
    ]

    def text(words: int) -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(words))

    return [
        [text(rng.randint(300, 420)) for _ in range(16)],
        [text(rng.choice((3, 40, 120, 260))) for _ in range(12)],
        [text(rng.randint(2, 12)) for _ in range(6)],
        [text(rng.randint(90, 200)) for _ in range(9)],
        [text(rng.randint(300, 420))],
    ]


@pytest.mark.skipif(not STATUS.exists(), reason="reads /proc (Linux)")
def test_rss_growth_over_varied_batches_is_bounded() -> None:
    embedder = LocalEmbedder()
    embedder.load()
    embedder.embed_sync(["warm up"])
    before = _status_mb("VmRSS")
    resettable = _reset_peak()
    for batch in _varied_batches():
        vectors = embedder.embed_sync(batch)
        assert vectors.shape == (len(batch), 384)
    after = _status_mb("VmHWM") if resettable else _status_mb("VmRSS")
    assert after - before <= GROWTH_BOUND_MB, f"grew {after - before:.0f} MB over varied batches"


@pytest.mark.skipif(not STATUS.exists(), reason="reads /proc (Linux)")
def test_rss_growth_stays_bounded_when_several_threads_embed_at_once() -> None:
    """An upload's batches and a few questions embed at the same time in `lore run`: run side
    by side, each run would hold its own activations and the arena would keep their sum."""
    embedder = LocalEmbedder()
    embedder.load()
    embedder.embed_sync(["warm up"])
    before = _status_mb("VmRSS")
    resettable = _reset_peak()
    batches = [batch for seed in range(4) for batch in _varied_batches(seed)[:1]]
    with ThreadPoolExecutor(len(batches)) as pool:
        shapes = [v.shape for v in pool.map(embedder.embed_sync, batches)]
    assert shapes == [(16, 384)] * len(batches)
    after = _status_mb("VmHWM") if resettable else _status_mb("VmRSS")
    assert after - before <= GROWTH_BOUND_MB, f"grew {after - before:.0f} MB with {len(batches)} threads"


def test_runs_stay_within_the_piece_budget_and_cover_every_text() -> None:
    shapes = Shapes(max_pieces=1024, max_rows=64, pad_to=32)
    lengths = sorted(random.Random(2).choice((3, 17, 64, 130, 255, 256)) for _ in range(300))
    cut = runs(lengths, shapes)
    assert [start for start, _, _ in cut] == [0, *(end for _, end, _ in cut[:-1])] and cut[-1][1] == 300
    for start, end, padded in cut:
        assert padded % 32 == 0 or padded == MAX_WORD_PIECES
        assert padded >= max(lengths[start:end]) and end - start <= 64
        assert (end - start) * padded <= 1024 or end - start == 1


def test_bounded_feeding_gives_the_vectors_of_one_text_at_a_time() -> None:
    embedder = LocalEmbedder()
    texts = [batch[0] for batch in _varied_batches()] + ["a", "retrieval " * 30]
    together = embedder.embed_sync(texts)
    alone = np.vstack([embedder.embed_sync([text]) for text in texts])
    assert np.allclose(together, alone, atol=1e-4)
