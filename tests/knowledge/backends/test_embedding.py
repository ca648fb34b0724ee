"""The offline embedder: real model, real tokenizer, no network."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import numpy as np
import pytest

from knowledge.backends.embedding import LocalEmbedder, Shapes, default_model_path, embed_batches
from knowledge.errors import EmbedderUnavailable


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    model = LocalEmbedder()
    model.load()
    return model


async def test_vectors_are_normalised_and_meaningful(embedder: LocalEmbedder) -> None:
    vectors = await embedder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.6 > similarity[0, 2] + 0.5


def test_the_models_threads_sleep_between_runs(embedder: LocalEmbedder) -> None:
    """Spinning between runs took a fifth more CPU alone and slowed two processes embedding
    at once by 40% (see `LocalEmbedder.load`)."""
    options = embedder._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_batching_and_length_sorting_keep_the_input_order(embedder: LocalEmbedder) -> None:
    texts = [("word " * n).strip() for n in (40, 1, 300, 7, 2, 90)] * 7  # > one batch, mixed lengths
    together = embedder.embed_sync(texts)
    alone = np.vstack([embedder.embed_sync([t]) for t in texts[:6]])
    assert np.allclose(together[:6], alone, atol=1e-4)


def test_padding_changes_the_speed_not_the_vectors(embedder: LocalEmbedder) -> None:
    """Runs are padded to a multiple of 8 word pieces (32 before, a third of the second
    stage's short units); the padding is masked, so the vectors are the ones padding to 32
    or to each run's longest text gives."""
    texts = [("word " * n).strip() for n in (1, 5, 9, 17, 23, 31, 40, 77, 130)] * 3
    padded = embedder.embed_sync(texts)
    for pad_to in (32, 1):
        other = LocalEmbedder(shapes=Shapes(pad_to=pad_to))
        assert np.allclose(other.embed_sync(texts), padded, atol=1e-6)
    assert Shapes().pad_to == 8


def test_text_beyond_the_window_is_truncated_not_refused(embedder: LocalEmbedder) -> None:
    long = "lore " * 2000
    assert embedder.embed_sync([long]).shape == (1, 384)


async def test_progress_is_reported_per_batch(embedder: LocalEmbedder) -> None:
    seen: list[tuple[int, int]] = []
    vectors = await embed_batches(
        embedder, [f"passage {i}" for i in range(300)], lambda d, t: seen.append((d, t))
    )
    assert vectors.shape == (300, 384)
    assert seen[-1] == (300, 300) and len(seen) >= 2 and seen == sorted(seen)


async def test_embedding_does_not_block_the_event_loop(embedder: LocalEmbedder) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.create_task(ticker())
    await embedder.embed(["a longer passage about retrieval " * 20] * 64)
    task.cancel()
    assert ticks >= 3


def test_a_tampered_model_file_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "model.onnx"
    shutil.copy(default_model_path(), copy)
    with copy.open("r+b") as handle:
        handle.seek(1000)
        handle.write(b"\x00\x01\x02")
    with pytest.raises(EmbedderUnavailable, match="sha256 mismatch"):
        LocalEmbedder(copy).load()
