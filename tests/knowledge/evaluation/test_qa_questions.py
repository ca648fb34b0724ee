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


def test_the_unseen_projects_questions_point_at_files_of_their_corpus() -> None:
    corpus = DOCS_QA.parent / "unseen-corpus"
    items = load_questions(DOCS_QA / "unseen.jsonl", "all")
    assert items and {q.split for q in items} == {"heldout"}, "nothing is tuned on them"
    assert len({q.id for q in items}) == len(items)
    for item in items:
        assert all((corpus / gold).is_file() for gold in item.gold), item.id
        assert bool(item.gold) == bool(item.facts) == item.answerable, item.id
