"""The docs-QA question set as `lore eval qa` reads it: a file, or the folder holding it."""

from __future__ import annotations

from pathlib import Path

from knowledge.evaluation.qa import load_questions

DOCS_QA = Path(__file__).parents[3] / "bench" / "data" / "docs_qa"


def test_a_question_set_folder_is_read_through_its_questions_file() -> None:
    from_folder = load_questions(DOCS_QA, "all")
    assert from_folder == load_questions(DOCS_QA / "questions.jsonl", "all")
    halves = {split: load_questions(DOCS_QA, split) for split in ("tune", "heldout")}
    assert len(halves["tune"]) == len(halves["heldout"]) == len(from_folder) / 2
    assert {q.id for q in halves["tune"]}.isdisjoint(q.id for q in halves["heldout"])
    assert sum(not q.answerable for q in halves["heldout"]) >= 10


def test_the_seen_once_projects_questions_point_at_files_of_their_corpus() -> None:
    corpus = DOCS_QA.parent / "seen-once-corpus"
    items = load_questions(DOCS_QA / "seen-once.jsonl", "all")
    # Once unseen; a rule was written for two of its questions (bench/answer-quality-history.md, the
    # ninth session), so the whole set counts as tuned on: only `unseen.jsonl` is held out now.
    assert items and {q.split for q in items} == {"tune"}
    assert len({q.id for q in items}) == len(items)
    for item in items:
        assert all((corpus / gold).is_file() for gold in item.gold), item.id
        assert bool(item.gold) == bool(item.facts) == item.answerable, item.id


def test_the_unseen_projects_questions_are_held_out_and_point_at_files_of_their_corpus() -> None:
    corpus = DOCS_QA.parent / "unseen-corpus"
    items = load_questions(DOCS_QA / "unseen.jsonl", "all")
    assert items and {q.split for q in items} == {"heldout"}, "nothing is tuned on them"
    assert load_questions(DOCS_QA / "unseen.jsonl", "tune") == []
    assert len({q.id for q in items}) == len(items)
    for item in items:
        assert all((corpus / gold).is_file() for gold in item.gold), item.id
        assert bool(item.gold) == bool(item.facts) == item.answerable, item.id
