"""Synthetic indexes of any size, built in seconds rather than hours.

Embedding 100k chunks with the local model would take over an hour on a small machine, so
a scale index is made from a pool of ~260 generated "engineering handbook" sentences that
are embedded once per process. A chunk is 2-4 pool sentences; its vector is the normalised
sum of theirs plus a little seeded noise, so the dense space clusters like real text and
dense and keyword search agree about what matches. Chunks are written through Lore's own
storage path (the Ingestor's, minus the embedder call): pending rows with their keyword
index, then vectors, then ready.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from bot.app.services import Services
from knowledge.backends.embedding import Embedder, Vectors, normalise
from knowledge.indexing.ingest import check_model, collection_for, content_hash
from storage.access import Place
from storage.records import DocumentRef, IndexRef, NewChunk, NewDocument
from storage.repositories.documents import DocumentRepository
from storage.values import SourceKind
from storage.vectors import VectorRecord

CHUNKS_PER_DOCUMENT = 20
BATCH_CHUNKS = 5000
"""Chunks written per round trip: big enough to amortise, small enough to bound memory."""
SENTENCES_PER_TOPIC = 22
ON_TOPIC = 0.8
"""Share of a chunk's sentences taken from its document's topic (the rest: any topic)."""
NOISE = 0.15
"""Length of the Gaussian noise added to a chunk's unit vector."""
POOL_SEED = 0
"""The pool is the same in every run, so its embeddings can be cached and compared."""


@dataclass(frozen=True)
class _Topic:
    title: str
    actors: tuple[str, ...]
    actions: tuple[tuple[str, str], ...]
    """(third person, base form): "rolls back the canary", "roll back the canary"."""
    conditions: tuple[str, ...]


_TOPICS = (
    _Topic(
        "Deploys",
        ("The release captain", "The deploy bot", "The service owner"),
        (
            ("rolls back the canary", "roll back the canary"),
            ("freezes the release train", "freeze the release train"),
            ("promotes the build to production", "promote the build to production"),
            ("tags the release in the changelog", "tag the release in the changelog"),
        ),
        (
            "when the error rate doubles",
            "before the Friday cutoff",
            "after the smoke tests pass",
            "if the schema migration is still running",
        ),
    ),
    _Topic(
        "On-call",
        ("The on-call engineer", "The backup responder", "The team lead"),
        (
            ("acknowledges the page", "acknowledge the page"),
            ("hands over the pager", "hand over the pager"),
            ("escalates to the owning team", "escalate to the owning team"),
            ("updates the runbook", "update the runbook"),
        ),
        (
            "within five minutes of an alert",
            "at the Monday handover",
            "when an alert fires twice in an hour",
            "during a holiday weekend",
        ),
    ),
    _Topic(
        "Databases",
        ("The database administrator", "The storage team", "The replication monitor"),
        (
            ("promotes a read replica", "promote a read replica"),
            ("runs the vacuum job", "run the vacuum job"),
            ("restores the nightly snapshot", "restore the nightly snapshot"),
            ("rotates the connection credentials", "rotate the connection credentials"),
        ),
        (
            "when replication lag exceeds thirty seconds",
            "every Sunday night",
            "after a failed schema change",
            "if disk usage passes eighty percent",
        ),
    ),
    _Topic(
        "Incidents",
        ("The incident commander", "The communications lead", "The scribe"),
        (
            ("opens a status page entry", "open a status page entry"),
            ("declares a severity one incident", "declare a severity one incident"),
            ("schedules the postmortem review", "schedule the postmortem review"),
            ("pages the affected team", "page the affected team"),
        ),
        (
            "when customers report an outage",
            "within an hour of mitigation",
            "if the incident lasts beyond thirty minutes",
            "before closing the incident channel",
        ),
    ),
    _Topic(
        "Billing",
        ("The billing service", "The finance analyst", "The payments engineer"),
        (
            ("retries the failed invoice", "retry the failed invoice"),
            ("issues a prorated refund", "issue a prorated refund"),
            ("reconciles the ledger with the bank feed", "reconcile the ledger with the bank feed"),
            ("flags the account for manual review", "flag the account for manual review"),
        ),
        (
            "at the end of each month",
            "when a card payment is declined",
            "if a customer disputes a charge",
            "after a plan upgrade",
        ),
    ),
    _Topic(
        "APIs",
        ("The API gateway", "The platform team", "The client library"),
        (
            ("throttles requests from the partner", "throttle requests from the partner"),
            ("deprecates the version one endpoint", "deprecate the version one endpoint"),
            ("returns a rate limit header", "return a rate limit header"),
            ("rejects requests without a valid token", "reject requests without a valid token"),
        ),
        (
            "when traffic exceeds the quota",
            "six months after the announcement",
            "for every authenticated call",
            "if the payload is larger than one megabyte",
        ),
    ),
    _Topic(
        "Security",
        ("The security team", "The access reviewer", "The secrets scanner"),
        (
            ("revokes the leaked key", "revoke the leaked key"),
            ("reviews admin permissions", "review admin permissions"),
            ("rotates the signing certificates", "rotate the signing certificates"),
            ("blocks the suspicious login", "block the suspicious login"),
        ),
        (
            "every quarter",
            "within an hour of a leak report",
            "when an employee changes teams",
            "if two-factor authentication is missing",
        ),
    ),
    _Topic(
        "Observability",
        ("The metrics pipeline", "The dashboard owner", "The logging agent"),
        (
            ("drops high cardinality labels", "drop high cardinality labels"),
            ("archives debug logs to cold storage", "archive debug logs to cold storage"),
            ("alerts on the latency budget", "alert on the latency budget"),
            ("samples one trace in a hundred", "sample one trace in a hundred"),
        ),
        (
            "when tail latency crosses two seconds",
            "after fourteen days",
            "during peak traffic",
            "for every new service",
        ),
    ),
    _Topic(
        "Continuous integration",
        ("The build system", "The test runner", "The merge queue"),
        (
            ("caches the dependency layer", "cache the dependency layer"),
            ("quarantines the flaky test", "quarantine the flaky test"),
            ("blocks the merge", "block the merge"),
            ("rebuilds the container image", "rebuild the container image"),
        ),
        (
            "when a test fails three times in a row",
            "if code coverage drops",
            "on every pull request",
            "after the base image is patched",
        ),
    ),
    _Topic(
        "Networking",
        ("The load balancer", "The network engineer", "The DNS provider"),
        (
            ("drains the unhealthy node", "drain the unhealthy node"),
            ("shifts traffic to the secondary region", "shift traffic to the secondary region"),
            ("renews the TLS certificate", "renew the TLS certificate"),
            ("lowers the record time to live", "lower the record time to live"),
        ),
        (
            "when health checks fail",
            "before a planned migration",
            "thirty days before expiry",
            "during a regional outage",
        ),
    ),
    _Topic(
        "Onboarding",
        ("The new hire", "The onboarding buddy", "The hiring manager"),
        (
            ("requests laptop access", "request laptop access"),
            ("shadows an on-call shift", "shadow an on-call shift"),
            ("completes the security training", "complete the security training"),
            ("pairs on a first bug fix", "pair on a first bug fix"),
        ),
        (
            "in the first week",
            "before getting production access",
            "by the end of the first month",
            "after the welcome session",
        ),
    ),
    _Topic(
        "Backups",
        ("The backup job", "The storage admin", "The retention policy"),
        (
            ("copies snapshots to another region", "copy snapshots to another region"),
            ("deletes expired objects", "delete expired objects"),
            ("verifies the restore drill", "verify the restore drill"),
            ("encrypts the archive bucket", "encrypt the archive bucket"),
        ),
        (
            "every six hours",
            "after ninety days",
            "once a quarter",
            "when a bucket is made public",
        ),
    ),
)


@dataclass(frozen=True)
class Fact:
    """One pool sentence and questions it answers (the first two name all its parts)."""

    topic: int
    sentence: str
    questions: tuple[str, ...]


@dataclass(frozen=True)
class Pool:
    """The embedded pool: `vectors[i]` is the unit vector of `facts[i].sentence`."""

    model_id: str
    facts: tuple[Fact, ...]
    vectors: Vectors


@dataclass(frozen=True)
class Corpus:
    """Synthetic documents, as texts and vectors: what `fill_index` writes, and what a
    baseline can add elsewhere to compare like with like."""

    first_document: int
    """How many documents the index held before: numbering (titles, names) goes on from it."""
    titles: list[str]
    texts: list[list[str]]
    """Chunk texts of each document."""
    facts: list[list[tuple[int, ...]]]
    """Pool facts of each chunk of each document."""
    vectors: Vectors
    """One unit row per chunk, in document then position order."""

    @property
    def chunks(self) -> int:
        return len(self.vectors)


@dataclass(frozen=True)
class Filled:
    """What `fill_index` wrote, how long it took, and questions its text answers."""

    chunks: int
    documents: int
    seconds: float
    """Writing the chunks (rows, keyword index, vectors), not generating them."""
    vector_seconds: float
    """The part of `seconds` spent adding vectors to the vector store."""
    questions: list[str]
    answers: dict[str, str]
    """The pool sentence that answers each question (present in some chunks)."""


def handbook() -> list[Fact]:
    """The pool's sentences: actor, action and condition drawn without repetition per topic."""
    rng = random.Random(POOL_SEED)
    facts = []
    for number, topic in enumerate(_TOPICS):
        combos = list(itertools.product(topic.actors, topic.actions, topic.conditions))
        for actor, action, condition in rng.sample(combos, SENTENCES_PER_TOPIC):
            facts.append(
                Fact(number, f"{actor} {action[0]} {condition}.", _questions(actor, action, condition))
            )
    return facts


def _questions(actor: str, action: tuple[str, str], condition: str) -> tuple[str, ...]:
    who, (third, base) = actor[0].lower() + actor[1:], action
    return (
        f"Who {third} {condition}?",
        f"Does {who} {base} {condition}?",
        f"What does {who} do {condition}?",
        f"When does {who} {base}?",
        f"Why would {who} {base} {condition}?",
        f"How often does {who} {base}?",
    )


_POOLS: dict[str, Pool] = {}
"""Pools by model id: several builds in one process embed the pool once."""


async def embedded_pool(embedder: Embedder) -> Pool:
    """The pool embedded by `embedder`'s model (cached for the process)."""
    if embedder.model_id not in _POOLS:
        facts = tuple(handbook())
        vectors = await embedder.embed([f.sentence for f in facts])
        _POOLS[embedder.model_id] = Pool(embedder.model_id, facts, vectors)
    return _POOLS[embedder.model_id]


def questions(pool: Pool, count: int, *, seed: int = 0) -> list[str]:
    """`count` distinct questions about the pool, in a seeded order (ValueError if the pool
    has fewer): fresh questions, as users ask them, so no cache answers for the embedder."""
    every = [q for fact in pool.facts for q in fact.questions]
    if count > len(every):
        raise ValueError(f"the pool has {len(every)} distinct questions, not {count}")
    return random.Random(seed).sample(every, count)


def synthesize(pool: Pool, chunks: int, *, seed: int = 0, first_document: int = 0) -> Corpus:
    """`chunks` chunks in documents of `CHUNKS_PER_DOCUMENT`, each document on one topic,
    numbered after `first_document`."""
    rng = random.Random(seed)
    by_topic = [[n for n, f in enumerate(pool.facts) if f.topic == t] for t in range(len(_TOPICS))]
    titles, texts, facts = [], [], []
    for number, start in enumerate(range(0, chunks, CHUNKS_PER_DOCUMENT)):
        topic = rng.randrange(len(_TOPICS))
        size = min(CHUNKS_PER_DOCUMENT, chunks - start)
        chosen = [_chunk_facts(rng, by_topic[topic], len(pool.facts)) for _ in range(size)]
        titles.append(f"{_TOPICS[topic].title} notes, part {first_document + number + 1}")
        facts.append(chosen)
        texts.append([" ".join(pool.facts[n].sentence for n in chunk) for chunk in chosen])
    flat = [chunk for document in facts for chunk in document]
    return Corpus(first_document, titles, texts, facts, _vectors(pool, flat, seed))


def synthetic_texts(facts: Sequence[Fact], chunks: int, *, seed: int = 0) -> Iterator[tuple[str, list[str]]]:
    """The documents `synthesize` makes (titles and chunk texts, the same draws), without
    their vectors: for filling a keyword index alone, at sizes whose vectors would not fit
    in memory."""
    rng = random.Random(seed)
    by_topic = [[n for n, f in enumerate(facts) if f.topic == t] for t in range(len(_TOPICS))]
    for number, start in enumerate(range(0, chunks, CHUNKS_PER_DOCUMENT)):
        topic = rng.randrange(len(_TOPICS))
        size = min(CHUNKS_PER_DOCUMENT, chunks - start)
        chosen = [_chunk_facts(rng, by_topic[topic], len(facts)) for _ in range(size)]
        title = f"{_TOPICS[topic].title} notes, part {number + 1}"
        yield title, [" ".join(facts[n].sentence for n in chunk) for chunk in chosen]


def _chunk_facts(rng: random.Random, topic: list[int], every: int) -> tuple[int, ...]:
    return tuple(
        rng.choice(topic) if rng.random() < ON_TOPIC else rng.randrange(every)
        for _ in range(rng.randint(2, 4))
    )


def _vectors(pool: Pool, chunks: Sequence[tuple[int, ...]], seed: int) -> Vectors:
    """Normalised sums of the chunks' sentence vectors, plus noise (in slices, so the
    gathered sentence vectors never take more than a few tens of MB)."""
    dimension = pool.vectors.shape[1]
    padded = np.vstack([pool.vectors, np.zeros((1, dimension), dtype=np.float32)])
    rng = np.random.default_rng(seed)
    out = np.empty((len(chunks), dimension), dtype=np.float32)
    for start in range(0, len(chunks), BATCH_CHUNKS):
        part = chunks[start : start + BATCH_CHUNKS]
        index = np.full((len(part), 4), len(pool.facts), dtype=np.int64)
        for row, chunk in enumerate(part):
            index[row, : len(chunk)] = chunk
        summed = normalise(padded[index].sum(axis=1))
        noise = rng.standard_normal(summed.shape).astype(np.float32) * (NOISE / np.sqrt(dimension))
        out[start : start + len(part)] = normalise(summed + noise)
    return out


async def create_index(services: Services, name: str = "synthetic", *, tenant: str = "bench") -> IndexRef:
    """A new shared index (in `tenant`, created if needed) for the services' embedder."""
    await asyncio.to_thread(services.directory.ensure_tenant, tenant)
    return await services.catalog.create_shared(Place(tenant, None), name)


async def fill_index(services: Services, index: IndexRef, chunks: int, *, seed: int = 0) -> Filled:
    """Add `chunks` synthetic chunks to `index` (after any it holds) as Lore's Ingestor
    would, minus the embedder call: SQL rows and keyword index, Chroma vectors, then ready.
    `synthesize(pool, chunks, seed=seed, first_document=<documents before>)` gives the same
    chunks, to add elsewhere."""
    check_model(index, services.embedder)
    pool = await embedded_pool(services.embedder)
    before = await asyncio.to_thread(services.indexes.stats, index.id)
    corpus = await asyncio.to_thread(synthesize, pool, chunks, seed=seed, first_document=before.documents)
    started = time.perf_counter()
    vector_seconds = await write_corpus(services, index, corpus)
    seconds = time.perf_counter() - started
    answers = _answers(pool, corpus, seed)
    return Filled(corpus.chunks, len(corpus.titles), seconds, vector_seconds, list(answers), answers)


async def write_corpus(services: Services, index: IndexRef, corpus: Corpus) -> float:
    """Write `corpus` in batches of about `BATCH_CHUNKS` chunks; the seconds spent adding
    vectors to the vector store."""
    per_batch = max(1, BATCH_CHUNKS // CHUNKS_PER_DOCUMENT)
    row, vector_seconds = 0, 0.0
    for first in range(0, len(corpus.titles), per_batch):
        numbers = range(first, min(first + per_batch, len(corpus.titles)))
        rows = sum(len(corpus.texts[n]) for n in numbers)
        vector_seconds += await _write_batch(
            services, index, corpus, numbers, corpus.vectors[row : row + rows]
        )
        row += rows
    return vector_seconds


async def _write_batch(
    services: Services, index: IndexRef, corpus: Corpus, numbers: range, vectors: Vectors
) -> float:
    """Pending rows (and their keyword index), then vectors, then ready; on any failure,
    remove what was written, as the Ingestor does. Returns the seconds adding vectors."""
    written: list[tuple[DocumentRef, list[int]]] = []
    try:
        await asyncio.to_thread(_create_pending, services.documents, index, corpus, numbers, written)
        records = await asyncio.to_thread(_records, written, [corpus.texts[n] for n in numbers], vectors)
        started = time.perf_counter()
        await asyncio.to_thread(services.vectors.add, collection_for(index), records)
        seconds = time.perf_counter() - started
        await asyncio.to_thread(_mark_ready, services.documents, [d.id for d, _ in written])
    except BaseException:
        ids = [document.id for document, _ in written]
        await asyncio.shield(asyncio.to_thread(_purge, services, index, ids))
        raise
    return seconds


def _create_pending(
    documents: DocumentRepository,
    index: IndexRef,
    corpus: Corpus,
    numbers: range,
    written: list[tuple[DocumentRef, list[int]]],
) -> None:
    """Create each document as pending, appending to `written` as it goes so that a
    failure half-way still knows what to remove."""
    for n in numbers:
        title, texts = corpus.titles[n], corpus.texts[n]
        # The chunk prefix is the title alone: the synthetic documents have no headings.
        chunks = [NewChunk(position, title, text) for position, text in enumerate(texts)]
        written.append(documents.create_pending(_new_document(index, title, texts), chunks))


def _new_document(index: IndexRef, title: str, texts: list[str]) -> NewDocument:
    """What the Ingestor records for a Markdown file whose text is the chunks' text."""
    text = "\n\n".join(texts)
    name = f"{title.lower().replace(',', '').replace(' ', '-')}.md"
    return NewDocument(
        index_id=index.id,
        source_kind=SourceKind.FILE,
        source_key=name,
        name=name,
        mime_type="text/markdown",
        content_hash=content_hash(text),
        size=len(text.encode()),
        characters=len(text),
        meta={"title": title},
    )


def _records(
    written: list[tuple[DocumentRef, list[int]]], texts: list[list[str]], vectors: Vectors
) -> list[VectorRecord]:
    records = []
    row = 0
    for (document, ids), chunk_texts in zip(written, texts, strict=True):
        for position, (chunk_id, text) in enumerate(zip(ids, chunk_texts, strict=True)):
            meta = {"document_id": document.id, "position": position}
            records.append(VectorRecord(chunk_id, vectors[row].tolist(), text, meta))
            row += 1
    return records


def _mark_ready(documents: DocumentRepository, ids: list[int]) -> None:
    for document_id in ids:
        documents.mark_ready(document_id)


def _purge(services: Services, index: IndexRef, ids: list[int]) -> None:
    if ids:
        services.vectors.delete_documents(collection_for(index), ids)
        services.documents.delete(ids)


def _answers(pool: Pool, corpus: Corpus, seed: int, count: int = 8) -> dict[str, str]:
    """Questions naming every part of a sentence that the corpus holds, with that sentence."""
    present = sorted({n for document in corpus.facts for chunk in document for n in chunk})
    chosen = random.Random(seed).sample(present, min(count, len(present)))
    return {pool.facts[n].questions[k % 2]: pool.facts[n].sentence for k, n in enumerate(chosen)}
