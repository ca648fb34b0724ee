"""The coverage-gap job: a workspace's recent questions that Lore could not answer, or whose
answer someone found unhelpful, grouped by meaning (Lore's own embedder,
`knowledge.search.grouping`), biggest group first, for the console to show.

Each question is embedded once: its vector is kept beside it (and removed with it), so a run
embeds only the questions asked since the last. The groups hold answer ids only; who may
read which question is decided when they are shown (`bot.app.actions.admin`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from knowledge import KnowledgeError, group_similar
from storage.repositories.history import AnswerHistory
from storage.repositories.workspace import WorkspaceStore
from storage.values import utcnow

if TYPE_CHECKING:
    from bot.app.services import Services

log = logging.getLogger(__name__)
WINDOW = timedelta(days=90)
"""Questions older than this are not grouped (their gaps may have been filled since)."""
MOST_QUESTIONS = 10_000
MOST_GROUPS = 100
LAST_RUN = "coverage.last_run"


@dataclass(frozen=True)
class GapRun:
    """What one run found: how many questions, in how many groups (and how many it kept)."""

    tenant_id: str
    questions: int
    groups: int
    embedded: int
    """Questions embedded in this run (the others' vectors were kept from earlier runs)."""
    seconds: float
    at: datetime


class CoverageGaps:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._history = AnswerHistory(services.db)
        self._store = WorkspaceStore(services.db)
        self._running: set[str] = set()

    async def run_all(self) -> list[GapRun]:
        runs = []
        for tenant in await asyncio.to_thread(self._store.tenants):
            run = await self.run(tenant)
            if run is not None:
                runs.append(run)
        return runs

    async def run(self, tenant_id: str) -> GapRun | None:
        """Group the workspace's unresolved questions; None when a run is already under way."""
        if tenant_id in self._running:
            return None
        self._running.add(tenant_id)
        try:
            return await self._run(tenant_id)
        finally:
            self._running.discard(tenant_id)

    def last_run(self, tenant_id: str) -> GapRun | None:
        found = self._store.setting(tenant_id, LAST_RUN)
        if not found:
            return None
        return GapRun(
            tenant_id,
            int(found.get("questions", 0)),
            int(found.get("groups", 0)),
            int(found.get("embedded", 0)),
            float(found.get("seconds", 0.0)),
            datetime.fromisoformat(str(found["at"])),
        )

    async def _run(self, tenant_id: str) -> GapRun:
        started = time.perf_counter()
        questions = await asyncio.to_thread(
            self._history.unresolved, tenant_id, utcnow() - WINDOW, limit=MOST_QUESTIONS
        )
        vectors, embedded = await self._vectors(questions)
        groups = await asyncio.to_thread(group_similar, vectors) if len(questions) else []
        kept = [[questions[i][0] for i in group] for group in groups[:MOST_GROUPS]]
        await asyncio.to_thread(self._store.replace_gaps, tenant_id, kept)
        run = GapRun(
            tenant_id, len(questions), len(groups), embedded, time.perf_counter() - started, utcnow()
        )
        await asyncio.to_thread(
            self._store.put,
            tenant_id,
            LAST_RUN,
            {
                "questions": run.questions,
                "groups": run.groups,
                "embedded": run.embedded,
                "seconds": round(run.seconds, 3),
                "at": run.at.isoformat(),
            },
        )
        if questions:
            log.info(
                "coverage gaps of %s: %d questions in %d groups (%d embedded) in %.1f s",
                tenant_id,
                run.questions,
                run.groups,
                run.embedded,
                run.seconds,
            )
        return run

    async def keep(self, answer_id: int, question: str) -> None:
        """Keep the vector of a question that is a gap (Lore abstained, or someone found the
        answer unhelpful), as the search embedded it: usually from its cache of recent
        queries, so nothing is embedded twice and the next run has nothing to embed. When
        the embedder fails, the run embeds it instead."""
        retriever = self._services.retriever
        try:
            vector = await retriever.query_vector(question.strip())
        except KnowledgeError as exc:
            log.info("question %d not embedded now (%s); the coverage-gap job will", answer_id, exc)
            return
        await asyncio.to_thread(
            self._history.keep_vectors,
            retriever.embedder.model_id,
            {answer_id: np.asarray(vector, dtype="<f4").tobytes()},
        )

    async def _vectors(self, questions: list[tuple[int, str]]) -> tuple[np.ndarray, int]:
        """Unit vectors of the questions, in order, embedding only those not kept yet (each
        distinct text once); how many were embedded."""
        embedder = self._services.embedder
        ids = [answer_id for answer_id, _ in questions]
        kept = await asyncio.to_thread(self._history.vectors, ids, embedder.model_id)
        missing = [(i, q) for i, q in questions if i not in kept]
        texts = sorted({q.strip() for _, q in missing})
        if texts:
            fresh = await embedder.embed(texts)
            by_text = {text: fresh[n].astype("<f4").tobytes() for n, text in enumerate(texts)}
            new = {i: by_text[q.strip()] for i, q in missing}
            await asyncio.to_thread(self._history.keep_vectors, embedder.model_id, new)
            kept.update(new)
        matrix = np.zeros((len(questions), embedder.dimension), dtype=np.float32)
        for row, answer_id in enumerate(ids):
            matrix[row] = np.frombuffer(kept[answer_id], dtype="<f4")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.clip(norms, 1e-12, None), len(texts)
