"""`python -m bench.quality [--quick]`: retrieval quality and answer-level checks.

- BEIR SciFact, ingested once through Lore's `Ingestor`, then nDCG@10 and Recall@100 for
  keyword (BM25), dense and hybrid retrieval over the same index (`knowledge.evaluation.beir`,
  ranked one chunk per document as `lore eval beir` ranks them). `--quick` uses a seeded
  subset of the corpus and only the queries whose relevant documents are all in it.
- Docs-QA: the Flask, Starlette and Requests documentation (`bench/data/docs-corpus`) and
  its question set (`bench/data/docs_qa/questions.jsonl`, a tuning and a held-out half),
  asked as `lore eval qa` asks them: cited-source recall, Hit@k, facts present, abstention,
  wrong abstentions and latency per half. `--quick` keeps the Requests docs and their first
  questions.
- Answers: a small handbook of a fictional company, each document holding facts no other
  holds, asked through `Knowledge.ask` as the bot asks it, with no model configured
  (extractive answers). Paraphrased questions that the handbook answers check that the
  right document is cited; questions it cannot answer check that Lore says so instead of
  quoting something.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.cli.evaluation import EVAL_SPEC, throwaway_index
from knowledge.answering.answer import Answer
from knowledge.engine import Request
from knowledge.evaluation.beir import BeirSet, evaluate_retrieval, ingest_corpus, load_beir
from knowledge.evaluation.qa import ask_all, load_questions, score_answers
from knowledge.evaluation.qa import folder_sources as qa_sources
from knowledge.indexing.ingest import IngestResult, Source
from knowledge.judging.ranking import Ranker
from knowledge.search.retrieval import Retriever
from storage.keyword import KeywordIndex
from storage.records import IndexRef

SCIFACT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"
DOCS_CORPUS = Path(__file__).resolve().parent / "data" / "docs-corpus"
DOCS_QUESTIONS = Path(__file__).resolve().parent / "data" / "docs_qa" / "questions.jsonl"
# HTTPX, Click, Uvicorn and FastAPI: once unseen, until a rule was written for two of its questions
SEEN_ONCE_CORPUS = Path(__file__).resolve().parent / "data" / "seen-once-corpus"
SEEN_ONCE_QUESTIONS = Path(__file__).resolve().parent / "data" / "docs_qa" / "seen-once.jsonl"
"""Docs of projects nothing was tuned on (HTTPX, Click, Uvicorn), all held out."""
QUICK_PROJECT, QUICK_QUESTIONS = "requests", 3
QUICK_LORE_ASKS = 1
"""`lore ask` processes the smoke run starts (each loads the model again)."""
QUICK_OTHER_FILES = 4
QUICK_DOCUMENTS = 60
QUICK_SEED = 7
LORE_ASK_QUESTIONS = 15
SWEEP = (0.30, 0.35, 0.40, 0.45)

# -- the handbook -------------------------------------------------------------------------

HANDBOOK: dict[str, str] = {
    "deploy-schedule.md": """# Deploy schedule
Production deploys go out on Tuesdays and Thursdays, between 10:00 and 14:00 Lisbon time,
when the whole platform team is at work. Nothing ships on Fridays or on the day before a
public holiday. From 20 December to 3 January the release train is frozen; a fix during the
freeze needs the VP of Engineering's written approval.""",
    "on-call-rota.md": """# On-call rota
Each team runs a weekly rotation with a primary and a secondary engineer. The shift changes
hands on Monday at 11:00, after the weekly operations sync, and the outgoing primary writes a
handover note in the #oncall-handover channel. Engineers on call receive an allowance of
EUR 250 per week, and a day off after any night in which they were paged twice or more.""",
    "database-failover.md": """# Database failover
The ledger-db PostgreSQL cluster runs its primary in Frankfurt with a streaming standby in
Dublin. Failover is manual: a database team lead approves it and then runs `tw-db promote
--cluster ledger-db`. The recovery time objective is 15 minutes and the recovery point
objective is one minute of transactions. After a failover, rebuild the old primary as the
new standby before the next business day.""",
    "expense-policy.md": """# Expense policy
Submit expenses in the finance portal within 30 days of spending the money. Any item over
EUR 25 needs a receipt. Hotel stays are reimbursed up to EUR 180 per night in most cities,
and your manager approves every claim before finance pays it, usually in the next payroll.""",
    "incident-severity.md": """# Incident severity levels
A SEV1 is a customer-facing outage that affects more than 20 percent of users or any loss of
payment data. For a SEV1 the incident commander updates the public status page within 10
minutes of declaring it. A SEV2 is a degraded service with a workaround; a SEV3 is an
internal problem with no customer impact.""",
    "code-review.md": """# Code review
Changes to the payments code need two approving reviews; every other repository needs one.
Pull requests over 400 changed lines should be split into smaller ones. Reviewers answer
within one business day, and the author merges once the checks are green.""",
    "laptop-security.md": """# Laptop security
Company laptops use full-disk encryption and lock the screen after five minutes idle. A lost
or stolen laptop must be reported to security@tidewater.example within one hour, so the
device can be wiped remotely. Personal software needs the IT team's review first.""",
    "production-access.md": """# Production access
Engineers request production access through the Gatekeeper tool. Access is granted for four
hours at a time, approved by the owner of the service, and every command typed in a
production shell is recorded for the quarterly audit.""",
    "mobile-releases.md": """# Mobile releases
The iOS and Android apps ship every two weeks. Versions follow a calendar scheme, year then
month then patch (for example 25.03.1). A release candidate stays in internal testing for
three days before it is submitted to the app stores.""",
    "backups.md": """# Backups
Every production database is backed up nightly at 02:00 UTC and the copies are kept for 35
days. On the first Wednesday of each month the SRE team restores a randomly chosen backup
into a scratch environment to prove that restores work.""",
    "feature-flags.md": """# Feature flags
Each flag has an owner and is deleted from the code within 90 days of reaching 100 percent
rollout. A report of stale flags is posted to the engineering channel every Friday, and
teams with more than ten stale flags lose their slot in the next planning cycle.""",
    "api-rate-limits.md": """# Public API rate limits
Each API key may make 600 requests per minute, with short bursts of up to 100 extra
requests. Clients over the limit get HTTP 429 with a Retry-After header. Enterprise
customers can buy a higher limit through their account manager.""",
    "onboarding.md": """# Onboarding for engineers
Every new engineer is paired with a buddy from another team and is expected to ship a small
change to production during the first week. After six weeks they shadow an on-call shift
before joining the rotation themselves.""",
    "postmortems.md": """# Postmortems
A blameless postmortem is written for every SEV1 and SEV2 within five business days of the
incident. Action items are tracked as tickets labelled pm-action and reviewed in the
Thursday operations review until they are closed.""",
    "dependency-updates.md": """# Dependency updates
A bot opens dependency update pull requests every Monday morning. Patches for critical
vulnerabilities are applied within seven days, high-severity ones within 30 days; anything
older is escalated to the security team.""",
    "meeting-free-days.md": """# Meeting-free Wednesdays
Wednesdays are kept free of meetings for the whole engineering department so that people
get long stretches of focus time. Incidents and customer escalations are the only
exceptions; recurring meetings may not be scheduled on that day.""",
    "data-retention.md": """# Data retention
Application logs that contain customer data are deleted after 30 days. Analytics events are
anonymised after 13 months. A customer's request to delete their data is completed within
30 days and confirmed to them by email.""",
    "interview-process.md": """# Interview process
The engineering interview loop has four conversations: coding, system design, a
collaboration interview and a conversation with the hiring manager. Take-home exercises are
capped at three hours, and candidates hear a decision within 48 hours of their last
interview.""",
}

ANSWERABLE: tuple[tuple[str, str], ...] = (
    ("Which days of the week can we push to prod?", "deploy-schedule.md"),
    ("Can I ship a hotfix over the Christmas holidays?", "deploy-schedule.md"),
    ("When does the pager get passed to the next person?", "on-call-rota.md"),
    ("How much extra pay do you get for being on call?", "on-call-rota.md"),
    ("Where does the standby for the ledger database live?", "database-failover.md"),
    ("What command promotes the replica if the main Postgres goes down?", "database-failover.md"),
    ("Up to what amount can I claim for a night in a hotel?", "expense-policy.md"),
    ("How soon must the status page be updated during a major outage?", "incident-severity.md"),
    ("How many approvals does a payments pull request require?", "code-review.md"),
    ("I lost my work computer, who do I tell and how fast?", "laptop-security.md"),
    ("How long does elevated access to the live servers last?", "production-access.md"),
    ("How are the phone app versions numbered?", "mobile-releases.md"),
    ("How long do we keep database snapshots?", "backups.md"),
    ("When do we check that restoring from backup actually works?", "backups.md"),
    ("How long can a toggle stay in the code after it is fully rolled out?", "feature-flags.md"),
    ("What happens when a client sends too many API calls?", "api-rate-limits.md"),
    ("When do new hires first join an on-call shift?", "onboarding.md"),
    ("Where are follow-up tasks from incident reviews tracked?", "postmortems.md"),
    ("How quickly do we have to fix a critical CVE in a library?", "dependency-updates.md"),
    ("Is there a day without meetings?", "meeting-free-days.md"),
    ("How long are logs with customer information kept?", "data-retention.md"),
    ("How long can a take-home assignment take?", "interview-process.md"),
)

UNANSWERABLE: tuple[str, ...] = (
    "How many weeks of parental leave do employees get?",
    "What is the guest Wi-Fi password at the Lisbon office?",
    "Which cloud provider runs our Kubernetes clusters?",
    "Where is the disaster-recovery copy of the analytics warehouse?",
    "What is the annual conference and training budget per engineer?",
    "Which programming language is the billing service written in?",
    "What time does the office canteen close?",
    "Who approves a pay rise for a senior engineer?",
)


# -- SciFact ------------------------------------------------------------------------------


def subset(beir: BeirSet, documents: int, seed: int) -> BeirSet:
    """A seeded `documents`-document corpus: the relevant documents of shuffled queries, up
    to a quarter of it, the rest drawn from the others; only queries fully inside kept."""
    rng = random.Random(seed)
    queries = sorted(beir.queries)
    rng.shuffle(queries)
    chosen: set[str] = set()
    for query in queries:
        relevant = set(beir.qrels[query])
        if len(chosen | relevant) > documents // 4:
            break
        chosen |= relevant
    others = sorted(d for d in beir.corpus if d not in chosen)
    chosen.update(rng.sample(others, documents - len(chosen)))
    kept = {q: t for q, t in beir.queries.items() if set(beir.qrels[q]) <= chosen}
    corpus = {d: doc for d, doc in beir.corpus.items() if d in chosen}
    return BeirSet(corpus, kept, {q: beir.qrels[q] for q in kept})


async def scifact(services: Services, folder: Path, quick: bool) -> dict[str, Any]:
    """Ingest SciFact (or its subset) once; score the three query types over that index."""
    beir = load_beir(folder)
    if quick:
        beir = subset(beir, QUICK_DOCUMENTS, QUICK_SEED)
    index = await throwaway_index(services, "scifact")
    started = time.perf_counter()
    failures = await ingest_corpus(services.ingestor, index, beir)
    seconds = time.perf_counter() - started
    index = await asyncio.to_thread(services.indexes.get, index.id)
    chunks = (await asyncio.to_thread(services.indexes.stats, index.id)).chunks
    retriever = Retriever(
        services.documents, services.vectors, KeywordIndex(services.db), services.embedder, spec=EVAL_SPEC
    )
    ranker = Ranker(services.embedder, retriever.term_frequencies)
    scores = await evaluate_retrieval(retriever, index, beir, ranker=ranker)
    return {
        "subset": quick,
        "documents": len(beir.corpus),
        "queries": len(beir.queries),
        "chunks": chunks,
        "failures": failures,
        "ingest_seconds": round(seconds, 1),
        "ingest_chunks_per_s": round(chunks / seconds, 2),
        **scores,
    }


# -- docs-QA ------------------------------------------------------------------------------


async def docs_qa(
    services: Services,
    quick: bool,
    corpus: Path = DOCS_CORPUS,
    questions: Path = DOCS_QUESTIONS,
    project: str = QUICK_PROJECT,
) -> dict[str, Any]:
    """A corpus (the docs corpus) in a fresh index, each half of its question set asked once
    (`quick`: a few of one project's questions, over their files and a few others)."""
    index = await throwaway_index(services, "docs")
    keys: dict[int, str] = {}

    def record(source: Source, result: object) -> None:
        if isinstance(result, IngestResult):
            keys[result.document.id] = source.key

    asked = {split: load_questions(questions, split) for split in ("tune", "heldout")}
    sources = list(qa_sources(corpus))
    if quick:
        asked = {
            split: [i for i in items if i.id.startswith(project)][:QUICK_QUESTIONS]
            for split, items in asked.items()
        }
        gold = {key for items in asked.values() for item in items for key in item.gold}
        others = [s for s in sources if s.key.startswith(project + "/") and s.key not in gold]
        sources = [s for s in sources if s.key in gold] + others[:QUICK_OTHER_FILES]
    started = time.perf_counter()
    await services.ingestor.add_many(index, sources, record)
    ingest_seconds = time.perf_counter() - started
    index = await asyncio.to_thread(services.indexes.get, index.id)
    await services.retriever.search([index], "warm up")
    splits: dict[str, Any] = {}
    for split, items in asked.items():
        if items:
            results = await ask_all(services.knowledge, [index], items, lambda d: keys.get(d, f"#{d}"))
            splits[split] = score_answers(results)
    return {"files": len(keys), "ingest_seconds": round(ingest_seconds, 1), **splits}


# -- answers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    """One question, what Lore answered, and the best dense similarity retrieval found."""

    question: str
    expected: str | None
    answer: Answer
    best_similarity: float | None

    @property
    def cited(self) -> list[str]:
        return [c.name for c in self.answer.citations]

    def as_json(self) -> dict[str, Any]:
        similarity = None if self.best_similarity is None else round(self.best_similarity, 3)
        quote = self.answer.citations[0].text[:160] if self.answer.citations else None
        return {
            "question": self.question,
            "expected": self.expected,
            "abstained": self.answer.abstained,
            "cited": self.cited,
            "best_similarity": similarity,
            "first_quote": quote,
        }


async def ask(services: Services, index: IndexRef, question: str, expected: str | None) -> Asked:
    """Ask as the bot's router does (the conversation's defaults: no mode, `always`)."""
    request = Request([index], [{"role": "user", "content": question}])
    answer = await services.knowledge.ask(request)
    retrieval = await services.retriever.search([index], question)
    return Asked(question, expected, answer, retrieval.best_similarity)


async def answers(services: Services) -> dict[str, Any]:
    """The handbook in a fresh index, every question asked once; the scores, the spread of
    best similarities, and each miss and each unanswerable question Lore answered anyway."""
    index = await throwaway_index(services, "handbook")
    sources = [
        Source(name=name, data=text.encode(), mime_type="text/markdown") for name, text in HANDBOOK.items()
    ]
    results = await services.ingestor.add_many(index, sources)
    if not all(isinstance(r, IngestResult) for r in results):
        raise RuntimeError(f"the handbook did not ingest: {results}")
    index = await asyncio.to_thread(services.indexes.get, index.id)
    answerable = [await ask(services, index, q, doc) for q, doc in ANSWERABLE]
    unanswerable = [await ask(services, index, q, None) for q in UNANSWERABLE]
    return {
        "documents": len(HANDBOOK),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        **answer_scores(answerable, unanswerable),
        "similarity": {
            "answerable": spread([a.best_similarity for a in answerable]),
            "unanswerable": spread([a.best_similarity for a in unanswerable]),
        },
        "floor_sweep": floor_sweep(answerable, unanswerable),
        "missed": [a.as_json() for a in answerable if a.expected not in a.cited],
        "answered_unanswerable": [a.as_json() for a in unanswerable if not a.answer.abstained],
    }


def answer_scores(answerable: Sequence[Asked], unanswerable: Sequence[Asked]) -> dict[str, float]:
    """Recall: the right document among the citations. First-citation accuracy: it is the
    first. Precision: the share of all citations given that name it. Abstention accuracy:
    unanswerable questions answered with "I couldn't find anything"."""
    citations = sum(len(a.cited) for a in answerable)
    right = sum(a.cited.count(a.expected or "") for a in answerable)
    return {
        "cited_source_recall": _share(sum(a.expected in a.cited for a in answerable), len(answerable)),
        "first_citation_accuracy": _share(
            sum(a.cited[:1] == [a.expected] for a in answerable), len(answerable)
        ),
        "cited_source_precision": _share(right, citations),
        "mean_citations": round(citations / max(1, len(answerable)), 2),
        "false_abstention_rate": _share(sum(a.answer.abstained for a in answerable), len(answerable)),
        "abstention_accuracy": _share(sum(a.answer.abstained for a in unanswerable), len(unanswerable)),
    }


def floor_sweep(
    answerable: Sequence[Asked], unanswerable: Sequence[Asked], floors: Sequence[float] = SWEEP
) -> list[dict[str, float]]:
    """What other relevance floors would do (the engine abstains below its floor, 0.30 by
    default): the abstentions each would give, judged from the best similarities found.
    For reading the trade-off, not for tuning the questions."""
    rows = []
    for floor in floors:
        below = [(a.best_similarity or 0.0) < floor for a in answerable]
        rejected = [(a.best_similarity or 0.0) < floor for a in unanswerable]
        rows.append(
            {
                "floor": floor,
                "false_abstention_rate": _share(sum(below), len(answerable)),
                "abstention_accuracy": _share(sum(rejected), len(unanswerable)),
            }
        )
    return rows


def spread(values: Sequence[float | None]) -> dict[str, float]:
    known = sorted(v for v in values if v is not None)
    if not known:
        return {}
    return {
        "min": round(known[0], 3),
        "median": round(statistics.median(known), 3),
        "max": round(known[-1], 3),
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


# -- the run ------------------------------------------------------------------------------


def settings(home: Path) -> Settings:
    return Settings(_env_file=None, lore_home=home, database_url=None, chroma_host=None)


async def run(workdir: Path, quick: bool, scifact_folder: Path = SCIFACT) -> dict[str, Any]:
    """SciFact (skipped, saying why, when the folder is missing), then the handbook answers,
    each in a Lore home of its own under `workdir` (keyword statistics are shared by every
    index of one database, so SciFact would otherwise shift the handbook's BM25 ranking)."""
    if (scifact_folder / "corpus.jsonl").exists():
        beir = await timed(workdir / "scifact", lambda services: scifact(services, scifact_folder, quick))
    else:
        beir = {"skipped": f"no BEIR corpus at {scifact_folder}"}
    handbook = await timed(workdir / "handbook", answers)
    if DOCS_QUESTIONS.exists():
        qa = await timed(workdir / "docs-qa", lambda services: docs_qa(services, quick))
        qa["lore_ask"] = await asyncio.to_thread(lore_ask_latency, workdir / "docs-qa", quick)
        if SEEN_ONCE_QUESTIONS.exists():
            qa["seen_once"] = await timed(
                workdir / "seen-once-qa",
                lambda services: docs_qa(services, quick, SEEN_ONCE_CORPUS, SEEN_ONCE_QUESTIONS, "httpx"),
            )
    else:
        qa = {"skipped": f"no question set at {DOCS_QUESTIONS}"}
    return {"quick": quick, "scifact": beir, "answers": handbook, "docs_qa": qa}


def lore_ask_latency(home: Path, quick: bool) -> dict[str, Any]:
    """`lore ask -i docs --json` run as a user runs it, a new process per question (its
    start-up, the model's load and the store's opening included), over the docs index left
    in `home`: the wall time's p50 and p95 over the first tune questions."""
    items = [i for i in load_questions(DOCS_QUESTIONS, "tune") if not i.history]
    items = [i for i in items if not quick or i.id.startswith(QUICK_PROJECT)][
        : QUICK_LORE_ASKS if quick else LORE_ASK_QUESTIONS
    ]
    lore = Path(sys.executable).with_name("lore")
    command = [str(lore)] if lore.exists() else [sys.executable, "-c", "from bot.cli import main; main()"]
    ignored = ("DATABASE_URL", "CHROMA_HOST", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SLACK_BOT_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in ignored} | {"LORE_HOME": str(home)}
    seconds = []
    for item in items:
        started = time.perf_counter()
        subprocess.run(
            [*command, "ask", "-i", "docs", "--json", item.question],
            env=env, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        seconds.append(time.perf_counter() - started)
    seconds.sort()
    return {
        "questions": len(seconds),
        "p50_s": round(statistics.median(seconds), 2) if seconds else 0.0,
        "p95_s": round(seconds[int(0.95 * (len(seconds) - 1))], 2) if seconds else 0.0,
    }


async def timed(home: Path, section: Callable[[Services], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """`section` run on fresh services (no model configured), with its wall time."""
    started = time.perf_counter()
    services = build_services(settings(home))
    try:
        result = await section(services)
    finally:
        await services.aclose()
    return {**result, "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.quality")
    parser.add_argument(
        "--quick", action="store_true", help="a 60-document SciFact subset, a few docs-QA questions"
    )
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="the BEIR SciFact folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lore-bench-quality-") as workdir:
        print(json.dumps(asyncio.run(run(Path(workdir), args.quick, args.scifact)), indent=2))


if __name__ == "__main__":
    main()
