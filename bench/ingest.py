"""`python -m bench.ingest [--quick]`: ingest throughput on a generated mixed corpus.

One run measures, on the same Markdown, HTML, PDF and Word documents:

- extraction + chunking alone (MB/s per format and overall), called as `Ingestor` calls them;
- the real `Ingestor.add_many` into a fresh index (SQLite + embedded Chroma), chunks/s;
- the embedder alone on exactly the chunk texts the pipeline embedded, grouped as the
  `Ingestor` groups them: the floor the pipeline can at best reach (target ratio ≥ 0.9);
- plain chromadb (a persistent collection, cosine space) adding the same texts with the
  same embedder: what Lore costs over the simplest thing a team could run instead.
"""

from __future__ import annotations

import asyncio
import html
import io
import os
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.config import Settings as ChromaSettings

from bench import run_alone
from bot.app.local import local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from knowledge.backends.embedding import LocalEmbedder, embed_batches
from knowledge.extraction import extract
from knowledge.indexing.chunking import ChunkSpec, chunk_text
from knowledge.indexing.ingest import IngestResult, Source

BATCH_CHUNKS = 256
"""`Ingestor.add_many`'s default: chunks of several documents embedded and stored together."""
TARGET_RATIO = 0.9
MIME = {
    "markdown": "text/markdown",
    "html": "text/html",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
EXTENSION = {"markdown": "md", "html": "html", "pdf": "pdf", "docx": "docx"}


# -- the corpus ---------------------------------------------------------------------------

SERVICES = (
    "billing-api", "auth-gateway", "search-indexer", "notification-worker", "ledger",
    "checkout", "inventory-sync", "feature-flags", "media-transcoder", "report-builder",
)  # fmt: skip
STORES = ("PostgreSQL", "Redis", "Kafka", "S3", "Elasticsearch", "RabbitMQ", "ClickHouse")
TEAMS = ("Platform", "Payments", "Search", "Growth", "Infra", "Data", "Mobile")
ACTIONS = (
    "retries failed requests with exponential backoff",
    "writes an audit record before acknowledging the message",
    "drains its queue before a deploy completes",
    "rejects payloads larger than the configured limit",
    "rotates its credentials every thirty days",
    "batches writes to reduce lock contention",
    "emits a latency histogram for every endpoint",
    "caches tenant settings for five minutes",
    "sheds load when the error budget is exhausted",
    "reads from the replica unless the request needs fresh data",
)
REASONS = (
    "the previous approach doubled our p99 latency during peak hours",
    "the vendor library stopped receiving security fixes",
    "it keeps the on-call load predictable",
    "we could not reproduce the failure without it",
    "it lets us roll back without a schema migration",
    "the cost per request dropped by a third in the trial",
)
CONDITIONS = (
    "the replication lag exceeds ten seconds",
    "a deploy is rolled back twice in one day",
    "the disk on a primary passes eighty percent",
    "more than five percent of checks fail",
    "a customer reports missing invoices",
    "the consumer group falls behind by a million messages",
)
STEPS = (
    "Page the secondary on-call engineer",
    "Freeze deploys in the release channel",
    "Check the dashboard for the affected region",
    "Fail over to the standby cluster",
    "Open an incident document and post the link",
    "Restart the worker pool one node at a time",
    "Compare the config with the last known good version",
    "Confirm recovery with a synthetic transaction",
)
SECTIONS = {
    "Runbook": ("Overview", "Alerts", "Diagnosis", "Mitigation", "Escalation", "Follow-up"),
    "Design": ("Context", "Goals", "Proposal", "Alternatives", "Rollout", "Risks"),
    "Postmortem": ("Summary", "Timeline", "Impact", "Root cause", "What went well", "Action items"),
    "Guide": ("Introduction", "Setup", "Configuration", "Operations", "Troubleshooting", "FAQ"),
}


@dataclass(frozen=True)
class Block:
    """One piece of a document's body: a paragraph, a list, a table or a sub-heading."""

    kind: str  # "p", "ul", "ol", "table", "h3"
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Doc:
    title: str
    sections: tuple[tuple[str, tuple[Block, ...]], ...]


def sentence(rng: random.Random) -> str:
    """A sentence of the kind engineering docs are made of, from a few templates."""
    service, other = rng.sample(SERVICES, 2)
    store = rng.choice(STORES)
    templates = (
        f"The {service} service {rng.choice(ACTIONS)}.",
        f"When {rng.choice(CONDITIONS)}, the {rng.choice(TEAMS)} team owns the response.",
        f"We moved {service} from {store} to {rng.choice(STORES)} because {rng.choice(REASONS)}.",
        f"Latency for {service} should stay under {rng.randint(2, 60) * 10} ms at p99.",
        f"{service} calls {other} through the internal gateway, with a {rng.randint(1, 9)} s timeout.",
        f"Every {rng.choice(('hour', 'night', 'weekday', 'Monday'))}, a job compacts the {store} tables used by {service}.",
        f"If {rng.choice(CONDITIONS)}, {rng.choice(STEPS).lower()} before anything else.",
        f"The {rng.choice(TEAMS)} team reviewed this in sprint {rng.randint(10, 99)} and kept it because {rng.choice(REASONS)}.",
    )
    return rng.choice(templates)


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))


def block(rng: random.Random) -> Block:
    roll = rng.random()
    if roll < 0.62:
        return Block("p", (paragraph(rng),))
    if roll < 0.78:
        return Block("ul", tuple(sentence(rng) for _ in range(rng.randint(3, 6))))
    if roll < 0.88:
        return Block("ol", tuple(rng.sample(STEPS, rng.randint(3, 5))))
    if roll < 0.94:
        rows = [("Setting", "Default", "Owner")] + [
            (f"{rng.choice(SERVICES)}.{rng.choice(('timeout', 'pool', 'retries', 'ttl'))}", str(rng.randint(1, 500)), rng.choice(TEAMS))
            for _ in range(rng.randint(3, 7))
        ]  # fmt: skip
        return Block("table", tuple(" | ".join(row) for row in rows))
    return Block("h3", (f"{rng.choice(SERVICES)} notes",))


def document(rng: random.Random, number: int, size: int) -> Doc:
    """A document of about `size` blocks in sections named after its kind."""
    kind = rng.choice(tuple(SECTIONS))
    title = f"{kind}: {rng.choice(SERVICES)} {rng.choice(('v2', 'migration', 'on-call', 'limits', 'storage'))} #{number}"
    names = SECTIONS[kind]
    sections = []
    for n in range(len(names)):
        count = max(1, size // len(names) + rng.randint(-1, 1))
        sections.append((names[n], tuple(block(rng) for _ in range(count))))
    return Doc(title, tuple(sections))


def to_markdown(doc: Doc) -> str:
    out = [f"# {doc.title}", ""]
    for heading, blocks in doc.sections:
        out += [f"## {heading}", ""]
        for b in blocks:
            if b.kind == "p":
                out.append(b.lines[0])
            elif b.kind == "h3":
                out.append(f"### {b.lines[0]}")
            elif b.kind == "table":
                out += [f"| {b.lines[0]} |", "|---|---|---|", *(f"| {row} |" for row in b.lines[1:])]
            else:
                marks = ("- " for _ in b.lines) if b.kind == "ul" else (f"{i}. " for i in range(1, 99))
                out += [mark + line for mark, line in zip(marks, b.lines, strict=False)]
            out.append("")
    return "\n".join(out)


def to_html(doc: Doc, rng: random.Random) -> str:
    """The document inside a real page's chrome: head with styles and scripts, a header
    and navigation of many links, a sidebar, a footer; the kind trafilatura must cut away."""
    body = []
    for heading, blocks in doc.sections:
        body.append(f"<h2>{html.escape(heading)}</h2>")
        for b in blocks:
            if b.kind == "p":
                body.append(f"<p>{html.escape(b.lines[0])}</p>")
            elif b.kind == "h3":
                body.append(f"<h3>{html.escape(b.lines[0])}</h3>")
            elif b.kind == "table":
                cells = [row.split(" | ") for row in b.lines]
                head = "".join(f"<th>{html.escape(c)}</th>" for c in cells[0])
                rows = "".join(
                    "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in cells[1:]
                )
                body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            else:
                tag = b.kind
                items = "".join(f"<li>{html.escape(line)}</li>" for line in b.lines)
                body.append(f"<{tag}>{items}</{tag}>")
    return _page(doc.title, "\n".join(body), rng)


def _page(title: str, main: str, rng: random.Random) -> str:
    def links(count: int, section: str) -> str:
        return "".join(
            f'<li class="nav-item"><a class="nav-link" href="/{section}/{rng.choice(SERVICES)}-{i}">'
            f"{rng.choice(SERVICES)} {rng.choice(('docs', 'status', 'api', 'changelog'))}</a></li>"
            for i in range(count)
        )

    style = ".nav-link{color:#333;padding:4px 8px}" * rng.randint(300, 500)
    script = "window.analytics=window.analytics||[];analytics.push({page:location.pathname});" * rng.randint(
        500, 900
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<meta name="author" content="{rng.choice(TEAMS)} team"><style>{style}</style>'
        f"<script>{script}</script></head><body>"
        f'<header class="site-header"><a href="/">Engineering handbook</a><nav><ul>{links(60, "docs")}</ul></nav>'
        f'<form action="/search"><input name="q" placeholder="Search"></form></header>'
        f'<div class="layout"><aside class="sidebar"><nav><ul>{links(80, "handbook")}</ul></nav></aside>'
        f"<main><article><h1>{html.escape(title)}</h1>\n{main}\n</article></main></div>"
        f'<footer class="site-footer"><ul>{links(40, "about")}</ul>'
        "<p>© Example Corp. All rights reserved. Privacy · Terms · Cookie settings</p></footer>"
        "</body></html>"
    )


def figure(rng: random.Random) -> bytes:
    """An architecture diagram as a JPEG (boxes, arrows, a little scan noise): the bytes a
    real design doc carries that extraction must read past."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (720, 420), "white")
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randint(6, 12)):
        x, y = rng.randint(0, 600), rng.randint(0, 340)
        fill = (rng.randint(200, 255), rng.randint(200, 255), 255)
        draw.rectangle((x, y, x + 110, y + 60), outline=(40, 60, 120), width=2, fill=fill)
        draw.text((x + 8, y + 22), rng.choice(SERVICES), fill="black")
    for _ in range(12):
        ends = (rng.randint(0, 720), rng.randint(0, 420), rng.randint(0, 720), rng.randint(0, 420))
        draw.line(ends, fill=(90, 90, 90), width=2)
    noise = Image.frombytes("L", image.size, rng.randbytes(image.size[0] * image.size[1])).convert("RGB")
    buffer = io.BytesIO()
    Image.blend(image, noise, 0.08).save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def to_pdf(doc: Doc, picture: bytes) -> bytes:
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    pdf = FPDF(format="A4")
    pdf.set_title(doc.title)
    pdf.set_author("Engineering")
    pdf.add_page()
    width = pdf.epw

    def line(text: str, size: int = 10, style: str = "") -> None:
        pdf.set_font("Helvetica", style, size)
        pdf.multi_cell(width, size * 0.55, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(1.5)

    line(doc.title, 16, "B")
    pdf.image(io.BytesIO(picture), w=width * 0.8)
    for heading, blocks in doc.sections:
        line(heading, 13, "B")
        for b in blocks:
            if b.kind == "table":
                pdf.set_font("Helvetica", "", 9)
                with pdf.table() as table:
                    for row in b.lines:
                        cells = table.row()
                        for cell in row.split(" | "):
                            cells.cell(cell)
                pdf.ln(2)
            elif b.kind == "h3":
                line(b.lines[0], 11, "B")
            elif b.kind == "p":
                line(b.lines[0])
            else:
                for n, item in enumerate(b.lines, 1):
                    line(f"{'-' if b.kind == 'ul' else f'{n}.'} {item}")
    return bytes(pdf.output())


def to_docx(doc: Doc, picture: bytes) -> bytes:
    import docx
    from docx.shared import Inches

    word = docx.Document()
    word.core_properties.title = doc.title
    word.core_properties.author = "Engineering"
    word.add_heading(doc.title, level=1)
    word.add_picture(io.BytesIO(picture), width=Inches(5.5))
    for heading, blocks in doc.sections:
        word.add_heading(heading, level=2)
        for b in blocks:
            if b.kind == "p":
                word.add_paragraph(b.lines[0])
            elif b.kind == "h3":
                word.add_heading(b.lines[0], level=3)
            elif b.kind == "table":
                rows = [row.split(" | ") for row in b.lines]
                table = word.add_table(rows=len(rows), cols=len(rows[0]))
                for cells, values in zip(table.rows, rows, strict=True):
                    for cell, value in zip(cells.cells, values, strict=True):
                        cell.text = value
            else:
                style = "List Bullet" if b.kind == "ul" else "List Number"
                for item in b.lines:
                    word.add_paragraph(item, style=style)
    buffer = io.BytesIO()
    word.save(buffer)
    return buffer.getvalue()


@dataclass(frozen=True)
class Item:
    """A generated file and its format."""

    format: str
    source: Source


def mixed_corpus(seed: int, per_format: int, blocks: tuple[int, int]) -> list[Item]:
    """`per_format` documents of each format, `blocks` (low, high) body blocks each,
    interleaved so the pipeline sees formats mixed as an upload of a folder would."""
    rng = random.Random(seed)
    items: list[Item] = []
    for n in range(per_format):
        for fmt in MIME:
            doc = document(rng, len(items) + 1, rng.randint(*blocks))
            data = render(doc, fmt, rng)
            name = f"{fmt}-{n:03d}.{EXTENSION[fmt]}"
            items.append(Item(fmt, Source(name=name, data=data, mime_type=MIME[fmt])))
    return items


def render(doc: Doc, fmt: str, rng: random.Random) -> bytes:
    if fmt == "markdown":
        return to_markdown(doc).encode()
    if fmt == "html":
        return to_html(doc, rng).encode()
    if fmt == "pdf":
        return to_pdf(doc, figure(rng))
    return to_docx(doc, figure(rng))


# -- the measures -------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunked:
    """One document extracted and chunked as the `Ingestor` does it: its embedding texts."""

    item: Item
    text_bytes: int
    texts: list[str]
    seconds: float


def extract_and_chunk(item: Item, spec: ChunkSpec, max_bytes: int) -> Chunked:
    """`Ingestor._prepare`'s CPU work, timed: extract, then chunk under the same heading
    (the source's path, then its title)."""
    source = item.source
    started = time.perf_counter()
    extracted = extract(source.data, source.name, mime_type=source.mime_type, max_bytes=max_bytes)
    title = source.facts.title or extracted.title or source.name
    heading = " > ".join((*source.facts.path, title))
    chunks = chunk_text(extracted.text, title=heading, spec=spec)
    seconds = time.perf_counter() - started
    texts = [chunk.embedding_text(heading) for chunk in chunks]
    return Chunked(item, len(extracted.text.encode()), texts, seconds)


def extraction_report(chunked: Sequence[Chunked]) -> dict[str, Any]:
    """MB/s of file bytes and of extracted text, per format and overall."""

    def figures(group: Sequence[Chunked]) -> dict[str, Any]:
        seconds = sum(c.seconds for c in group)
        mb = sum(len(c.item.source.data) for c in group) / 1e6
        text_mb = sum(c.text_bytes for c in group) / 1e6
        return {
            "documents": len(group),
            "mb": round(mb, 3),
            "text_mb": round(text_mb, 3),
            "chunks": sum(len(c.texts) for c in group),
            "seconds": round(seconds, 3),
            "mb_per_s": round(mb / seconds, 2),
            "text_mb_per_s": round(text_mb / seconds, 3),
        }

    by_format = {fmt: figures([c for c in chunked if c.item.format == fmt]) for fmt in MIME}
    return {"overall": figures(chunked), "by_format": by_format}


def ingest_batches(chunked: Sequence[Chunked]) -> list[list[str]]:
    """The chunk texts grouped as `add_many` groups them: documents are added to a batch
    until it holds at least `BATCH_CHUNKS` chunks."""
    batches: list[list[str]] = []
    current: list[str] = []
    for document in chunked:
        current += document.texts
        if len(current) >= BATCH_CHUNKS:
            batches.append(current)
            current = []
    return [*batches, current] if current else batches


@dataclass(frozen=True)
class Timing:
    """One measured pass over the corpus's chunks."""

    chunks: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.chunks / self.seconds

    def as_json(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 2), "chunks_per_s": round(self.rate, 2)}


async def embedder_alone(services: Services, batches: Sequence[list[str]]) -> Timing:
    """The floor: `embed_batches`, as the `Ingestor` calls it, on the pipeline's texts."""
    started = time.perf_counter()
    for texts in batches:
        await embed_batches(services.embedder, texts)
    return Timing(sum(len(texts) for texts in batches), time.perf_counter() - started)


@dataclass(frozen=True)
class PipelineRun:
    timing: Timing
    embedding_seconds: float
    """What the `Ingestor` itself reports as spent embedding: the rest is extraction it
    waited for, SQL and vector writes, and the gaps between them."""

    def as_json(self) -> dict[str, Any]:
        seconds = self.timing.seconds
        return {
            **self.timing.as_json(),
            "embedding_seconds": round(self.embedding_seconds, 2),
            "other_seconds": round(seconds - self.embedding_seconds, 2),
            "embedding_share": round(self.embedding_seconds / seconds, 3),
        }


async def pipeline(services: Services, items: Sequence[Item], name: str) -> PipelineRun:
    """`Ingestor.add_many` into a fresh shared index called `name`, end to end."""
    actor = await local_dm(services, "bench")
    index = await services.catalog.create_shared(actor.place, name)
    started = time.perf_counter()
    results = await services.ingestor.add_many(index, [item.source for item in items])
    seconds = time.perf_counter() - started
    done = [r for r in results if isinstance(r, IngestResult)]
    if len(done) != len(results):
        failures = [str(r) for r in results if not isinstance(r, IngestResult)]
        raise RuntimeError(f"the pipeline refused generated documents: {failures[:3]}")
    return PipelineRun(Timing(sum(r.chunks for r in done), seconds), embedding_seconds(done))


def embedding_seconds(results: Sequence[IngestResult]) -> float:
    """Time spent embedding inside the pipeline, as the `Ingestor` reports it: documents of
    one batch share their batch's `seconds_embedding`, so each run of equal values counts once."""
    total, previous = 0.0, None
    for result in results:
        if result.seconds_embedding != previous:
            total += result.seconds_embedding
            previous = result.seconds_embedding
    return total


class LoreEmbedderFunction(EmbeddingFunction[Documents]):
    """Lore's local embedder as a chromadb embedding function, called in the `Ingestor`'s
    slices (`embed_batches` hands the model `batch_size * 4` texts at a time)."""

    def __init__(self, embedder: LocalEmbedder) -> None:
        self._embedder = embedder

    def __call__(self, input: Documents) -> Embeddings:
        step = self._embedder.batch_size * 4
        parts = [self._embedder.embed_sync(input[i : i + step]) for i in range(0, len(input), step)]
        return list(np.concatenate(parts))

    @staticmethod
    def name() -> str:
        return "lore-bench-minilm"

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> LoreEmbedderFunction:
        return LoreEmbedderFunction(LocalEmbedder())

    def get_config(self) -> dict[str, Any]:
        return {}


def chromadb_baseline(path: Path, embedder: LocalEmbedder, batches: Sequence[list[str]]) -> Timing:
    """Plain chromadb: one persistent collection (cosine), texts added in the same batches,
    embedded by the collection's embedding function while `add` runs."""
    client = chromadb.PersistentClient(path=str(path), settings=ChromaSettings(anonymized_telemetry=False))
    collection = client.create_collection(
        "baseline",
        embedding_function=LoreEmbedderFunction(embedder),  # type: ignore[arg-type]
        metadata={"hnsw:space": "cosine"},
    )
    started = time.perf_counter()
    added = 0
    for texts in batches:
        ids = [f"chunk-{added + n}" for n in range(len(texts))]
        metadatas: Any = [{"position": added + n} for n in range(len(texts))]
        collection.add(ids=ids, documents=texts, metadatas=metadatas)
        added += len(texts)
    timing = Timing(added, time.perf_counter() - started)
    assert collection.count() == added
    return timing


# -- the run ------------------------------------------------------------------------------


def settings(home: Path) -> Settings:
    return Settings(_env_file=None, lore_home=home, database_url=None, chroma_host=None)


@dataclass
class Passes:
    """The measured passes in the order they ran: the embedder alone before and after each
    pipeline pass, so each is compared with the floor measured around it."""

    floors: list[Timing]
    lore: list[tuple[int, PipelineRun]]
    """Each pipeline pass with the number of floor passes before it."""
    chromadb: tuple[int, Timing] | None = None

    def around(self, before: int) -> float:
        """The floor's rate around a pass: the two passes next to it, pooled."""
        pair = self.floors[before - 1 : before + 1]
        return sum(t.chunks for t in pair) / sum(t.seconds for t in pair)


async def measure(
    services: Services, workdir: Path, items: Sequence[Item], batches: Sequence[list[str]], rounds: int
) -> Passes:
    """Floor, Lore, floor, chromadb, floor, then (Lore, floor) for each further round; a
    shared machine's speed drifts by a factor of two over minutes, neighbours much less."""
    embedder = services.embedder
    assert isinstance(embedder, LocalEmbedder)
    passes = Passes([await embedder_alone(services, batches)], [])
    for n in range(rounds):
        passes.lore.append((len(passes.floors), await pipeline(services, items, f"bench-ingest-{n}")))
        passes.floors.append(await embedder_alone(services, batches))
        if passes.chromadb is None:
            baseline = await asyncio.to_thread(chromadb_baseline, workdir / "chromadb", embedder, batches)
            passes.chromadb = (len(passes.floors), baseline)
            passes.floors.append(await embedder_alone(services, batches))
    return passes


def throughput(
    passes: Passes, batches: Sequence[list[str]], embedder: LocalEmbedder, mb: float
) -> dict[str, Any]:
    """The passes as JSON, each pipeline pass and the baseline against the floor around it."""
    assert passes.chromadb is not None
    lore = [(run.timing.rate / passes.around(before), run) for before, run in passes.lore]
    before, baseline = passes.chromadb
    baseline_ratio = baseline.rate / passes.around(before)
    lore_ratio = statistics.median(ratio for ratio, _ in lore)
    seconds = statistics.median(run.timing.seconds for _, run in lore)
    return {
        "pipeline": {
            "chunks": lore[0][1].timing.chunks,
            "chunks_per_s": round(lore[0][1].timing.chunks / seconds, 2),
            "mb_per_s": round(mb / seconds, 3),
            "embedding_share": round(
                statistics.median(run.embedding_seconds / run.timing.seconds for _, run in lore), 3
            ),
            "passes": [{**run.as_json(), "vs_embedder": round(ratio, 3)} for ratio, run in lore],
        },
        "embedder": {
            "chunks": sum(len(texts) for texts in batches),
            "chunks_per_s": round(statistics.median(t.rate for t in passes.floors), 2),
            "batch_size": embedder.batch_size,
            "texts_per_call": embedder.batch_size * 4,
            "passes": [t.as_json() for t in passes.floors],
        },
        "chromadb": {**baseline.as_json(), "vs_embedder": round(baseline_ratio, 3)},
        "ratios": {
            "pipeline_vs_embedder": round(lore_ratio, 3),
            "target": TARGET_RATIO,
            "chromadb_vs_embedder": round(baseline_ratio, 3),
            "lore_vs_chromadb": round(lore_ratio / baseline_ratio, 3),
        },
    }


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    """Generate the corpus, measure extraction and chunking, then the embedder alone, the
    pipeline and the chromadb baseline in interleaved passes; files stay under `workdir`."""
    items = mixed_corpus(seed=20250101, per_format=2 if quick else 8, blocks=(4, 8) if quick else (8, 22))
    load_before = os.getloadavg()[0]
    services = build_services(settings(workdir / "lore"))
    try:
        embedder = services.embedder
        assert isinstance(embedder, LocalEmbedder), "the bench measures the local embedder"
        spec, max_bytes = ChunkSpec(), services.settings.max_file_bytes
        await asyncio.to_thread(warm_up, embedder, items, spec, max_bytes)
        chunked = [await asyncio.to_thread(extract_and_chunk, item, spec, max_bytes) for item in items]
        batches = ingest_batches(chunked)
        passes = await measure(services, workdir, items, batches, rounds=1 if quick else 2)
    finally:
        await services.aclose()
    expected = sum(len(texts) for texts in batches)
    if any(run.timing.chunks != expected for _, run in passes.lore):
        raise RuntimeError(f"the pipeline's chunk count differs from extraction's alone ({expected})")
    corpus = corpus_summary(items)
    return {
        "quick": quick,
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "corpus": corpus,
        "extraction": extraction_report(chunked),
        **throughput(passes, batches, embedder, corpus["mb"]),
    }


def warm_up(embedder: LocalEmbedder, items: Sequence[Item], spec: ChunkSpec, max_bytes: int) -> None:
    """Load the model and the tokenizer, and touch each extractor once, outside the timings."""
    embedder.load()
    embedder.embed_sync(["warm up the session"] * embedder.batch_size)
    for fmt in MIME:
        extract_and_chunk(next(item for item in items if item.format == fmt), spec, max_bytes)


def corpus_summary(items: Sequence[Item]) -> dict[str, Any]:
    by_format = {
        fmt: {
            "documents": sum(1 for item in items if item.format == fmt),
            "mb": round(sum(len(item.source.data) for item in items if item.format == fmt) / 1e6, 3),
        }
        for fmt in MIME
    }
    total = sum(len(item.source.data) for item in items) / 1e6
    return {"documents": len(items), "mb": round(total, 3), "by_format": by_format}


def main() -> None:
    run_alone("ingest", run, "a handful of small files (seconds)")


if __name__ == "__main__":
    main()
