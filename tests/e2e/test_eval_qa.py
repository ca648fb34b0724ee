"""`lore eval qa` end to end: a generated folder, five questions, the scores as JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LORE = str(Path(sys.executable).with_name("lore"))
DOCS = {
    "ops/deploy.md": """# Deploying the billing service

We deploy the billing service every Tuesday at 10:00 UTC with the blue-green pipeline.
A rollback switches the load balancer back to the previous colour, which takes about two minutes.
""",
    "ops/oncall.md": """# On-call

The on-call engineer carries the pager for one week, from Monday to Monday.
Escalate a severity one incident to the engineering manager within fifteen minutes.
""",
    "kitchen/bread.md": """# Sourdough

Feed the starter with equal weights of flour and water the evening before baking.
Bake the loaf at 250 degrees Celsius with steam for the first twenty minutes.
""",
}
QUESTIONS = [
    {
        "id": "t-001",
        "split": "tune",
        "kind": "howto",
        "question": "When do we deploy billing?",
        "history": [],
        "gold": ["ops/deploy.md"],
        "facts": [["Tuesday"], ["10:00 UTC", "10 am UTC"]],
    },
    {
        "id": "t-002",
        "split": "tune",
        "kind": "config",
        "question": "How hot should the oven be for the sourdough loaf?",
        "history": [],
        "gold": ["kitchen/bread.md"],
        "facts": [["250 degrees"]],
    },
    {
        "id": "t-003",
        "split": "tune",
        "kind": "followup",
        "question": "and how long does going back take?",
        "history": [
            {"role": "user", "content": "How do we roll back a billing deploy?"},
            {"role": "assistant", "content": "Switch the load balancer back to the previous colour."},
        ],
        "gold": ["ops/deploy.md"],
        "facts": [["two minutes"]],
    },
    {
        "id": "t-004",
        "split": "heldout",
        "kind": "howto",
        "question": "Who carries the pager and for how long?",
        "history": [],
        "gold": ["ops/oncall.md"],
        "facts": [["one week"]],
    },
    {
        "id": "t-005",
        "split": "tune",
        "kind": "unanswerable",
        "question": "What is the guest wifi password at the Lisbon office?",
        "history": [],
        "gold": [],
        "facts": [],
    },
]


def lore(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LORE, *args],
        env={"PATH": "/usr/bin:/bin", "LORE_HOME": str(home), "HOME": str(home.parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.e2e
def test_eval_qa_scores_a_split_in_a_throw_away_store(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    for name, text in DOCS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    home = tmp_path / "home"

    run = lore("eval", "qa", str(folder), str(questions), "--json", home=home)

    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["split"] == "tune" and report["model"] == "extractive" and report["files"] == 3
    assert (report["questions"], report["answerable"], report["unanswerable"]) == (4, 3, 1)
    assert [i["id"] for i in report["items"]] == ["t-001", "t-002", "t-003", "t-005"]
    first = report["items"][0]
    assert first["cited"][0] == "ops/deploy.md" and not first["abstained"] and first["fallback"] is None
    assert "fallbacks" not in report, "no model, so no answer of a model's fell back"
    assert report["hit@5"] == 1.0 and report["cited_recall@5"] == 1.0
    assert report["facts"] == 1.0, report["items"]
    answered = [i for i in report["items"] if i["kind"] != "unanswerable"]
    assert report["lead_facts"] == round(sum(i["lead_holds_fact"] for i in answered) / len(answered), 4)
    assert first["lead_holds_fact"], "'We deploy the billing service every Tuesday at 10:00 UTC…' leads"
    assert not report["items"][-1]["lead_holds_fact"], "an abstention leads with no fact"
    assert report["by_kind"]["followup"]["facts"] == 1.0
    assert report["abstention"] == 1.0 and report["wrong_abstention"] == 0.0, report["items"]
    assert 0 < report["latency_ms"]["p50"] <= report["latency_ms"]["p95"]
    assert not home.exists()

    text = lore("eval", "qa", str(folder), str(questions), "--split", "heldout", home=home)
    assert text.returncode == 0, text.stderr
    assert "heldout split, 1 questions" in text.stdout and "facts" in text.stdout


@pytest.mark.e2e
def test_eval_qa_refuses_an_unknown_split(tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps(QUESTIONS[0]) + "\n")
    run = lore("eval", "qa", str(tmp_path), str(questions), "--split", "test", home=tmp_path / "home")
    assert run.returncode == 1 and "unknown split 'test'" in run.stderr
