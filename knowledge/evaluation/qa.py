"""Answer quality on a folder of documents and a set of questions (`lore eval qa`).

A question set is JSON lines, one item a line: `id`, `split` ("tune" or "heldout"), `kind`
("unanswerable" for questions the documents cannot answer), `question`, `history` (earlier
turns of a thread, `{"role", "content"}`), `gold` (paths, relative to the folder, of the files
that answer it) and `facts` (each a list of alternative strings; an answer holds a fact when
any alternative occurs in it, compared case-insensitively after collapsing whitespace).

Every question is asked through `Knowledge.ask`, as `lore ask` asks it (a follow-up with its
history as the conversation), and scored on what a reader sees: the sources cited (mapped
back to files), the answer text with its quoted passages, whether its first line alone holds
a required fact (`lead_facts`: the line a reader takes for the answer), and whether Lore
abstained.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge.answering.answer import Answer
from knowledge.answering.brief import display_lines
from knowledge.engine import Knowledge, Request
from knowledge.indexing.ingest import Source
from knowledge.search.context import Message
from storage.records import IndexRef

SPLITS = ("tune", "heldout", "all")
UNANSWERABLE = "unanswerable"
HIT_AT = (1, 3, 5)  # the ranks retrieval is reported at (the first, the quoted, the read)
SKIPPED_PARTS = {".git", ".venv", "node_modules", "__pycache__", ".lore"}


@dataclass(frozen=True)
class QaItem:
    id: str
    split: str
    kind: str
    question: str
    history: tuple[Message, ...]
    gold: tuple[str, ...]
    facts: tuple[tuple[str, ...], ...]

    @property
    def answerable(self) -> bool:
        return self.kind != UNANSWERABLE

    def messages(self) -> list[Message]:
        """The conversation as `lore ask` would send it: the history, then the question."""
        turns = [{"role": str(t["role"]), "content": str(t["content"])} for t in self.history]
        return [*turns, {"role": "user", "content": self.question}]


QUESTIONS_FILE = "questions.jsonl"
"""The question file of a question-set folder (`bench/data/docs_qa`)."""


def load_questions(path: Path, split: str = "tune") -> list[QaItem]:
    """The items of `split` ("all" for every item) in a JSON-lines file, or in the
    `questions.jsonl` of a folder; raises ValueError for an unknown split or a line that is
    not an item."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if path.is_dir():
        path = path / QUESTIONS_FILE
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            item = QaItem(
                id=str(raw["id"]),
                split=str(raw["split"]),
                kind=str(raw["kind"]),
                question=str(raw["question"]),
                history=tuple(raw.get("history") or ()),
                gold=tuple(str(g) for g in raw.get("gold") or ()),
                facts=tuple(tuple(str(a) for a in fact) for fact in raw.get("facts") or ()),
            )
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}:{number}: not a question item ({exc})") from None
        if split == "all" or item.split == split:
            items.append(item)
    return items


def normalize(text: str) -> str:
    return " ".join(text.split()).lower()


def holds(fact: Sequence[str], text: str) -> bool:
    """Whether any alternative of `fact` occurs in `text` (case and whitespace ignored)."""
    haystack = normalize(text)
    return any(normalize(alternative) in haystack for alternative in fact)


def shown_text(answer: Answer) -> str:
    """What a reader sees: the answer and the text of every cited passage."""
    return "\n".join([answer.text, *(c.text for c in answer.citations)])


def visible_text(answer: Answer) -> str:
    """What a chat reader sees before "Show more" that may hold a fact: the brief
    (`knowledge.answering.brief`); the notices above it and the sources' names aside."""
    return answer.short()


def visible_lines(answer: Answer) -> int:
    """Display lines of the chat form before "Show more": a line a notice, the brief, and a
    line naming the sources (when there are any)."""
    return len(answer.notices) + answer.brief.lines() + (1 if answer.citations else 0)


def whole_lines(answer: Answer) -> int:
    """Display lines of the whole answer as the command line shows it: its text, then a line
    a source."""
    return (
        display_lines(answer.text)
        + len(answer.notices)
        + (1 + len(answer.citations) if answer.citations else 0)
    )


def lead_line(answer: Answer) -> str:
    """The answer's first line that is not blank."""
    return next((line for line in answer.text.splitlines() if line.strip()), "")


def corpus_files(folder: Path) -> Iterator[Path]:
    """The files `lore ingest FOLDER` would add, in a stable order."""
    for child in sorted(folder.rglob("*")):
        parts = set(child.relative_to(folder).parts)
        if child.is_file() and not parts & SKIPPED_PARTS and not child.name.startswith("."):
            yield child


def folder_sources(folder: Path) -> Iterator[Source]:
    """Sources named as `lore ingest` names them (the file name), keyed by the path relative
    to `folder`, which is how gold files are written."""
    for path in corpus_files(folder):
        yield Source(name=path.name, data=path.read_bytes(), source_key=path.relative_to(folder).as_posix())


@dataclass(frozen=True)
class QaResult:
    item: QaItem
    answer: Answer
    cited: list[str]
    """Cited files (their keys), distinct, in the order of first citation."""
    seconds: float

    @property
    def facts_held(self) -> list[bool]:
        text = shown_text(self.answer)
        return [holds(fact, text) for fact in self.item.facts]

    @property
    def visible_facts_held(self) -> list[bool]:
        """The required facts a chat reader sees before "Show more" (`visible_text`)."""
        text = visible_text(self.answer)
        return [holds(fact, text) for fact in self.item.facts]

    @property
    def lead_holds_fact(self) -> bool:
        """Whether the answer's first line (what a reader takes for the answer before the
        quotes) holds at least one required fact; never for an abstention."""
        if self.answer.abstained:
            return False
        lead = lead_line(self.answer)
        return any(holds(fact, lead) for fact in self.item.facts)

    def as_json(self) -> dict[str, Any]:
        held = self.facts_held
        return {
            "id": self.item.id,
            "kind": self.item.kind,
            "abstained": self.answer.abstained,
            "hedged": self.answer.hedged,
            "confidence": self.answer.confidence,
            "fallback": self.answer.fallback,
            "gold": list(self.item.gold),
            "cited": self.cited,
            "missing_facts": [list(f) for f, ok in zip(self.item.facts, held, strict=True) if not ok],
            "hidden_facts": [
                list(f)
                for f, ok, seen in zip(self.item.facts, held, self.visible_facts_held, strict=True)
                if ok and not seen
            ],
            "lines": {"visible": visible_lines(self.answer), "whole": whole_lines(self.answer)},
            "lead_holds_fact": self.lead_holds_fact,
            "ms": round(self.seconds * 1000, 1),
        }


async def ask_all(
    knowledge: Knowledge,
    indexes: Sequence[IndexRef],
    items: Sequence[QaItem],
    key_of: Callable[[int], str],
) -> list[QaResult]:
    """Ask every item once, in order; `key_of` maps a document id to its file key."""
    results = []
    for item in items:
        started = time.perf_counter()
        answer = await knowledge.ask(Request(indexes, item.messages()))
        seconds = time.perf_counter() - started
        cited = list(dict.fromkeys(key_of(c.document_id) for c in answer.citations))
        results.append(QaResult(item, answer, cited, seconds))
    return results


def score_answers(results: Sequence[QaResult]) -> dict[str, Any]:
    """The headline measures, then the same per kind of question."""
    return {**_measures(results), "by_kind": _by_kind(results)}


def _measures(results: Sequence[QaResult]) -> dict[str, Any]:
    answerable = [r for r in results if r.item.answerable]
    unanswerable = [r for r in results if not r.item.answerable]
    measures: dict[str, Any] = {
        "questions": len(results),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "cited_recall@5": _mean(_recall(r, 5) for r in answerable),
    }
    for k in HIT_AT:
        measures[f"hit@{k}"] = _mean(float(bool(set(r.cited[:k]) & set(r.item.gold))) for r in answerable)
    measures |= {
        "facts": _mean(float(all(r.facts_held)) for r in answerable),
        "facts_share": _mean(_share(r.facts_held) for r in answerable),
        "lead_facts": _mean(float(r.lead_holds_fact) for r in answerable),
        "visible_facts": _mean(float(all(r.visible_facts_held)) for r in answerable),
        "visible_facts_share": _mean(_share(r.visible_facts_held) for r in answerable),
        "abstention": _mean(float(r.answer.abstained) for r in unanswerable),
        "wrong_abstention": _mean(float(r.answer.abstained) for r in answerable),
        "flagged": _mean(float(r.answer.abstained or r.answer.hedged) for r in unanswerable),
        "hedged": _mean(float(r.answer.hedged) for r in answerable),
        "mean_citations": _mean(float(len(r.cited)) for r in answerable),
        "latency_ms": _latency([r.seconds * 1000 for r in results]),
        "lines": _lines([r.answer for r in results if not r.answer.abstained]),
    }
    fallbacks = Counter(str(r.answer.fallback) for r in results if r.answer.fallback is not None)
    if fallbacks:  # with a model: answers it did not write, by why (`Fallback`)
        measures["fallbacks"] = dict(sorted(fallbacks.items()))
    return measures


def _by_kind(results: Sequence[QaResult]) -> dict[str, dict[str, Any]]:
    kinds = sorted({r.item.kind for r in results})
    out = {}
    for kind in kinds:
        chosen = [r for r in results if r.item.kind == kind]
        if kind == UNANSWERABLE:
            out[kind] = {"n": len(chosen), "abstention": _mean(float(r.answer.abstained) for r in chosen)}
        else:
            out[kind] = {
                "n": len(chosen),
                "hit@5": _mean(float(bool(set(r.cited[:5]) & set(r.item.gold))) for r in chosen),
                "facts": _mean(float(all(r.facts_held)) for r in chosen),
                "wrong_abstention": _mean(float(r.answer.abstained) for r in chosen),
            }
    return out


def _lines(answers: Sequence[Answer]) -> dict[str, dict[str, float]]:
    """Median and 90th percentile of the answers' lines, in chat before "Show more" and whole."""
    out = {}
    for name, measure in (("visible", visible_lines), ("whole", whole_lines)):
        counts = sorted(measure(a) for a in answers)
        out[name] = (
            {"p50": float(statistics.median(counts)), "p90": float(counts[round(0.9 * (len(counts) - 1))])}
            if counts
            else {"p50": 0.0, "p90": 0.0}
        )
    return out


def _recall(result: QaResult, k: int) -> float:
    gold = set(result.item.gold)
    return len(gold & set(result.cited[:k])) / len(gold) if gold else 0.0


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 1.0


def _mean(values: Iterator[float] | Sequence[float]) -> float:
    values = list(values)
    return round(sum(values) / len(values), 4) if values else 0.0


def _latency(milliseconds: Sequence[float]) -> dict[str, float]:
    ordered = sorted(milliseconds)
    if not ordered:
        return {"p50": 0.0, "p95": 0.0}
    return {
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[round(0.95 * (len(ordered) - 1))], 1),
    }
