"""Validate the docs-QA question set: schema, gold files, facts found in their gold files, and balance.

Run `python bench/data/docs_qa/check.py [QUESTIONS] [--partial]`: it prints every problem and the
counts per split, kind and project, and exits 1 if there is any problem. `--partial` skips the
whole-set requirements (minimum counts, tune/held-out balance) while a half is being written.

The matching rule is the one the evaluation uses: an answer holds a fact when any of the fact's
alternatives occurs in it, compared case-insensitively after collapsing whitespace (`normalize`).
Here every fact must hold in at least one of the question's gold files, so a correct answer can
quote it; and no fact may already hold in the question or its history, so echoing the question
earns nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions.jsonl"
CORPUS = HERE.parent / "docs-corpus"

PROJECTS = ("flask", "starlette", "requests")
SPLITS = ("tune", "heldout")
KINDS = ("howto", "config", "troubleshooting", "difference", "multi-fact", "followup", "unanswerable")
FIELDS = frozenset({"id", "split", "kind", "question", "history", "gold", "facts", "note"})
REQUIRED = FIELDS - {"note"}
MAX_FACTS = 3
MAX_FACT_WORDS = 6
MINIMUM = {"answerable": 130, "single-turn": 110, "followup": 20, "unanswerable": 30}

Item = Mapping[str, Any]


def normalize(text: str) -> str:
    """Lower-case `text` and collapse every run of whitespace to one space: the matching rule."""
    return " ".join(text.split()).lower()


def holds(fact: Sequence[str], text: str) -> bool:
    """Whether any alternative of `fact` occurs in `text` under the matching rule."""
    haystack = normalize(text)
    return any(normalize(alternative) in haystack for alternative in fact)


def load(path: Path) -> list[dict[str, Any]]:
    """The items of a JSON-lines file, one object per non-empty line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def project_of(item: Item) -> str:
    """The project an item is about, from its id (`flask-012` -> `flask`)."""
    return str(item.get("id", "")).split("-", 1)[0]


def _is_text_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def projects_in(corpus: Path) -> tuple[str, ...]:
    """The projects of a corpus: its folders (`flask`, `starlette`, `requests` for the docs
    corpus), in the order `PROJECTS` gives the docs corpus's; `PROJECTS` for a corpus without
    folders."""
    found = sorted(p.name for p in corpus.iterdir() if p.is_dir()) if corpus.is_dir() else []
    ordered = tuple(p for p in PROJECTS if p in found) + tuple(p for p in found if p not in PROJECTS)
    return ordered or PROJECTS


def _schema_problems(item: Item, projects: Sequence[str] = PROJECTS) -> list[str]:
    problems = []
    keys = set(item)
    if missing := REQUIRED - keys:
        problems.append(f"missing fields {sorted(missing)}")
    if extra := keys - FIELDS:
        problems.append(f"unknown fields {sorted(extra)}")
    if not re.fullmatch(rf"({'|'.join(map(re.escape, projects))})-\d{{3}}", str(item.get("id"))):
        problems.append(
            f"id must be a project's name and three digits ({projects[0]}-012); projects: {projects}"
        )
    if item.get("split") not in SPLITS:
        problems.append(f"split must be one of {SPLITS}")
    if item.get("kind") not in KINDS:
        problems.append(f"kind must be one of {KINDS}")
    if not isinstance(item.get("question"), str) or not item["question"].strip():
        problems.append("question must be a non-empty string")
    if not isinstance(item.get("note", ""), str):
        problems.append("note must be a string")
    if not _is_text_list(item.get("gold")):
        problems.append("gold must be a list of paths")
    facts = item.get("facts")
    if not isinstance(facts, list) or not all(_is_text_list(fact) and fact for fact in facts):
        problems.append("facts must be a list of non-empty lists of strings")
    return problems


def _history_problems(item: Item) -> list[str]:
    history = item.get("history")
    if not isinstance(history, list):
        return ["history must be a list"]
    if item["kind"] != "followup":
        return [] if not history else ["only followups have a history"]
    roles = [turn.get("role") if isinstance(turn, dict) else None for turn in history]
    expected = ["user", "assistant"] * (len(history) // 2)
    if not history or roles != expected:
        return ["a followup's history alternates user/assistant turns, starting with user"]
    if not all(isinstance(turn.get("content"), str) and turn["content"].strip() for turn in history):
        return ["every history turn needs non-empty content"]
    return []


def _gold_problems(item: Item, corpus: Path) -> list[str]:
    gold, facts = item["gold"], item["facts"]
    if item["kind"] == "unanswerable":
        problems = [] if not gold and not facts else ["unanswerable items have no gold and no facts"]
        return problems + ([] if item.get("note", "").strip() else ["say in note why it is unanswerable"])
    problems = []
    if not gold:
        problems.append("answerable items need gold files")
    if not 1 <= len(facts) <= MAX_FACTS:
        problems.append(f"answerable items need 1-{MAX_FACTS} facts")
    for path in gold:
        if path.split("/", 1)[0] != project_of(item):
            problems.append(f"gold {path} is outside the item's project")
        elif not (corpus / path).is_file():
            problems.append(f"gold {path} does not exist")
    texts = [_read(corpus / path) for path in gold if (corpus / path).is_file()]
    asked = " \n ".join([item["question"], *(turn["content"] for turn in item["history"])])
    for fact in facts:
        if not any(holds(fact, text) for text in texts):
            problems.append(f"fact {fact} occurs in no gold file")
        if holds(fact, asked):
            problems.append(f"fact {fact} is already in the question or history")
        if too_long := [alt for alt in fact if len(alt.split()) > MAX_FACT_WORDS]:
            problems.append(f"facts are at most {MAX_FACT_WORDS} words: {too_long}")
    return problems


def item_problems(item: Item, corpus: Path = CORPUS) -> list[str]:
    """Every problem with one item; [] when it is valid."""
    problems = _schema_problems(item, projects_in(corpus)) or _history_problems(item)
    if problems:
        return problems
    return _gold_problems(item, corpus)


def _set_problems(items: Sequence[Item], partial: bool) -> list[str]:
    problems = []
    for label, counter in (("id", Counter(i["id"] for i in items)), ("question", _questions(items))):
        problems += [f"duplicate {label}: {value}" for value, n in counter.items() if n > 1]
    if partial:
        return problems
    counts = _headline(items)
    problems += [f"{name}: {counts[name]} < {low}" for name, low in MINIMUM.items() if counts[name] < low]
    cells = Counter((project_of(i), i["kind"], i["split"]) for i in items)
    for project in PROJECTS:
        for kind in KINDS:
            tune, heldout = cells[project, kind, "tune"], cells[project, kind, "heldout"]
            if abs(tune - heldout) > 1:
                problems.append(f"{project}/{kind} is unbalanced: {tune} tune, {heldout} heldout")
    return problems


def _questions(items: Iterable[Item]) -> Counter[str]:
    return Counter(normalize(i["question"]) for i in items)


def _headline(items: Sequence[Item]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for item in items:
        kind = item["kind"]
        counts["unanswerable" if kind == "unanswerable" else "answerable"] += 1
        if kind not in ("unanswerable", "followup"):
            counts["single-turn"] += 1
        if kind == "followup":
            counts["followup"] += 1
    return counts


def find_problems(items: Sequence[Item], corpus: Path = CORPUS, partial: bool = False) -> list[str]:
    """Every problem with the set, each prefixed with the item's id; [] when the set is valid."""
    found = [f"{item.get('id', '?')}: {p}" for item in items for p in item_problems(item, corpus)]
    if found:
        return found
    return _set_problems(items, partial)


def table(items: Sequence[Item], projects: Sequence[str] = PROJECTS) -> str:
    """Counts per kind (rows) and project/split (columns), as a Markdown table."""
    cells = Counter((i["kind"], project_of(i), i["split"]) for i in items)
    columns = [(p, s) for p in projects for s in SPLITS]
    lines = [
        "| kind | " + " | ".join(f"{p} {s}" for p, s in columns) + " | total |",
        "|---" * (len(columns) + 2) + "|",
    ]
    for kind in KINDS:
        row = [cells[kind, p, s] for p, s in columns]
        lines.append(f"| {kind} | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    totals = [sum(cells[k, p, s] for k in KINDS) for p, s in columns]
    lines.append("| total | " + " | ".join(map(str, totals)) + f" | {sum(totals)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("questions", nargs="?", type=Path, default=QUESTIONS)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--partial", action="store_true", help="skip minimum counts and balance")
    args = parser.parse_args(argv)
    items = load(args.questions)
    found = find_problems(items, args.corpus, args.partial)
    print(table(items, projects_in(args.corpus)))
    headline = _headline(items)
    splits = Counter(i["split"] for i in items)
    print(
        ", ".join(f"{name} {headline[name]}" for name in MINIMUM)
        + f"; tune {splits['tune']}, heldout {splits['heldout']}"
    )
    for problem in found:
        print(f"PROBLEM {problem}", file=sys.stderr)
    print(f"{len(found)} problem(s)" if found else "ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
