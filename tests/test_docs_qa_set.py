"""The docs-QA question set stays valid: `bench/data/docs_qa/check.py` finds no problem in it, and the
checker itself rejects the mistakes it exists to catch (so a pass means something)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / "bench" / "data" / "docs_qa" / "check.py"


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_qa_check", CHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load_checker()


def test_the_question_set_has_no_problems() -> None:
    items = check.load(check.QUESTIONS)

    assert check.find_problems(items) == []


def test_every_project_and_split_is_represented() -> None:
    items = check.load(check.QUESTIONS)
    cells = {(check.project_of(i), i["split"]) for i in items}

    assert cells == {(p, s) for p in check.PROJECTS for s in check.SPLITS}


def test_the_corpus_copy_carries_each_project_license() -> None:
    for project in check.PROJECTS:
        assert (check.CORPUS / project / "LICENSE").is_file()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "flask" / "docs"
    docs.mkdir(parents=True)
    (docs / "config.rst").write_text("Set SECRET_KEY_FALLBACKS to a list of   old keys.\n")
    return tmp_path


def _item(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": "flask-001",
        "split": "tune",
        "kind": "config",
        "question": "can we rotate the secret key without logging everyone out?",
        "history": [],
        "gold": ["flask/docs/config.rst"],
        "facts": [["SECRET_KEY_FALLBACKS"], ["list of old keys"]],
        "note": "",
    }
    item.update(changes)
    return item


def test_a_valid_item_passes_with_whitespace_and_case_normalised(corpus: Path) -> None:
    assert check.item_problems(_item(), corpus) == []
    assert check.item_problems(_item(facts=[["secret_key_fallbacks"]]), corpus) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"facts": [["SECRET_KEY_ROTATION"]]}, "occurs in no gold file"),
        ({"gold": ["flask/docs/missing.rst"]}, "does not exist"),
        ({"gold": ["requests/docs/api.rst"]}, "outside the item's project"),
        ({"question": "what does SECRET_KEY_FALLBACKS do?"}, "already in the question"),
        ({"facts": [["a list of old keys that still work"]]}, "at most 6 words"),
        ({"facts": []}, "need 1-3 facts"),
        ({"kind": "unanswerable"}, "have no gold and no facts"),
        ({"kind": "followup"}, "alternates user/assistant"),
        ({"history": [{"role": "user", "content": "hi"}]}, "only followups have a history"),
        ({"split": "train"}, "split must be one of"),
        ({"extra": 1}, "unknown fields"),
    ],
)
def test_the_checker_rejects_a_broken_item(corpus: Path, changes: dict[str, Any], expected: str) -> None:
    problems = check.item_problems(_item(**changes), corpus)

    assert any(expected in problem for problem in problems), problems


def test_a_followup_fact_already_in_the_history_is_rejected(corpus: Path) -> None:
    history = [
        {"role": "user", "content": "how do i rotate keys?"},
        {"role": "assistant", "content": "Use SECRET_KEY_FALLBACKS."},
    ]
    item = _item(
        kind="followup", question="and is that in 3.0?", history=history, facts=[["SECRET_KEY_FALLBACKS"]]
    )

    assert any("already in the question or history" in p for p in check.item_problems(item, corpus))


def test_the_whole_set_rules_catch_duplicates_imbalance_and_small_sets(corpus: Path) -> None:
    items = [_item(), _item(question="another way to rotate the key?")]

    problems = check.find_problems(items, corpus)

    assert "duplicate id: flask-001" in problems
    assert any("flask/config is unbalanced: 2 tune, 0 heldout" in p for p in problems)
    assert any(p.startswith("unanswerable: 0 <") for p in problems)
    assert check.find_problems(items, corpus, partial=True) == ["duplicate id: flask-001"]


def test_main_reports_counts_and_exit_status(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps(_item()) + "\n")

    assert check.main([str(questions), "--corpus", str(corpus), "--partial"]) == 0
    assert "| config | 1 | 0 |" in capsys.readouterr().out
    assert check.main([str(questions), "--corpus", str(corpus)]) == 1


def test_the_seen_once_projects_set_has_no_problems() -> None:
    questions, corpus = CHECK.parent / "seen-once.jsonl", ROOT / "bench" / "data" / "seen-once-corpus"
    assert check.projects_in(corpus) == ("click", "fastapi", "httpx", "uvicorn")
    assert check.find_problems(check.load(questions), corpus, partial=True) == []
    assert check.item_problems({**check.load(questions)[0], "id": "flask-001"}, corpus) == [
        "id must be a project's name and three digits (click-012); projects: ('click', 'fastapi', 'httpx', 'uvicorn')"
    ]


def test_the_unseen_projects_set_has_no_problems() -> None:
    questions, corpus = CHECK.parent / "unseen.jsonl", ROOT / "bench" / "data" / "unseen-corpus"
    items = check.load(questions)
    assert check.projects_in(corpus) == ("celery", "pydantic")
    assert check.find_problems(items, corpus, partial=True) == []
    unanswerable = sum(item["kind"] == "unanswerable" for item in items)
    assert 0.2 <= unanswerable / len(items) <= 0.3, "about the docs-QA set's share of unanswerable questions"
    for project in ("celery", "pydantic"):
        assert (corpus / project / "LICENSE").is_file()
