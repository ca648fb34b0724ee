"""`lore eval beir`: the metrics by hand, and the command end to end on a tiny BEIR folder."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.evaluation.beir import load_beir, ndcg_at_k, recall_at_k

LORE = str(Path(sys.executable).with_name("lore"))
DOCS = {
    "d1": ("Volcanoes", "Basaltic lava flows from shield volcanoes such as Mauna Loa in Hawaii."),
    "d2": ("Bread", "Sourdough bread rises thanks to wild yeast and lactic acid bacteria in the starter."),
    "d3": ("Tides", "Ocean tides follow the gravitational pull of the moon and, less, the sun."),
    "d4": ("Bees", "Honey bees communicate the direction of flowers with a waggle dance."),
}
QUERIES = {
    "q1": "What makes sourdough rise?",
    "q2": "How do honey bees tell each other where flowers are?",
    "q3": "Which body pulls the ocean tides?",
    "q9": "a query with no judgement is left out",
}
QRELS = [("q1", "d2", 1), ("q2", "d4", 1), ("q3", "d3", 1)]
SUBSET = ("--max-queries", "2", "--max-documents", "3")
"""A subset, as a slow machine evaluates one: q1 and q2, over d2, d4 and d1."""


def beir_folder(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w") as out:
        for doc_id, (title, text) in DOCS.items():
            out.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (root / "queries.jsonl").open("w") as out:
        for query_id, text in QUERIES.items():
            out.write(json.dumps({"_id": query_id, "text": text, "metadata": {}}) + "\n")
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in QRELS)]
    (root / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return root


def test_ndcg_and_recall_match_their_definitions() -> None:
    relevant = {"a": 1, "b": 2}
    assert ndcg_at_k(["b", "a", "x"], relevant) == pytest.approx(1.0)
    dcg = 0 + 3 / math.log2(3) + 1 / math.log2(4)  # x, b, a
    ideal = 3 + 1 / math.log2(3)
    assert ndcg_at_k(["x", "b", "a"], relevant) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(["x"] * 10 + ["b"], relevant) == 0.0  # beyond the cut
    assert recall_at_k(["a", "x"], relevant) == 0.5 and recall_at_k([], {}) == 0.0


def test_load_beir_keeps_only_judged_queries(tmp_path: Path) -> None:
    beir = load_beir(beir_folder(tmp_path / "beir"))
    assert set(beir.queries) == {"q1", "q2", "q3"} and beir.qrels["q1"] == {"d2": 1}
    assert beir.corpus["d3"][0] == "Tides"


@pytest.mark.e2e
def test_eval_beir_scores_each_retrieval_and_leaves_the_home_untouched(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path / "beir")
    home = tmp_path / "home"
    run = subprocess.run(
        [LORE, "eval", "beir", str(folder), "--json"],
        env={"PATH": "/usr/bin:/bin", "LORE_HOME": str(home), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    scores = json.loads(run.stdout)
    assert set(scores) == {"keyword", "dense", "hybrid", "reranked"}
    for kind in ("dense", "hybrid", "reranked"):
        assert scores[kind]["ndcg@10"] == 1.0 and scores[kind]["recall@100"] == 1.0
    assert all(0 < v["p50_ms"] <= v["p95_ms"] for v in scores.values())
    assert "ingested 4 documents" in run.stderr and "chunks/s" in run.stderr
    assert not home.exists()  # a throw-away store


def test_a_sample_keeps_the_first_queries_their_judged_documents_and_the_first_others(tmp_path: Path) -> None:
    beir = load_beir(beir_folder(tmp_path / "beir"))
    two = beir.sample(queries=2, documents=3)
    assert list(two.queries) == ["q1", "q2"] and set(two.qrels) == {"q1", "q2"}
    assert set(two.corpus) == {"d2", "d4", "d1"}, "the judged ones, then the corpus's first other"
    assert set(beir.sample(queries=2, documents=1).corpus) == {"d2", "d4"}, "never fewer than judged"
    assert beir.sample() == beir and beir.sample(documents=4).corpus == beir.corpus


@pytest.mark.e2e
@pytest.mark.postgres
@pytest.mark.chroma_server
def test_eval_beir_runs_on_the_configured_postgresql_and_chroma_server(
    tmp_path: Path, postgres_admin_url: str, chroma_server: tuple[str, int]
) -> None:
    """With DATABASE_URL and CHROMA_HOST, the evaluation runs on them (keyword search on
    PostgreSQL is what it measures), in a schema and a namespace of its own that it removes."""
    import psycopg
    from sqlalchemy import make_url

    from storage.vectors import chroma_client
    from tests.support.postgres import create_database, drop_database

    url = create_database(postgres_admin_url)
    client = chroma_client(host=chroma_server[0], port=chroma_server[1])
    before = {c.name for c in client.list_collections()}
    try:
        run = subprocess.run(
            [LORE, "eval", "beir", str(beir_folder(tmp_path / "beir")), "--json", *SUBSET],
            env={
                "PATH": "/usr/bin:/bin",
                "LORE_HOME": str(tmp_path / "home"),
                "HOME": str(tmp_path),
                "DATABASE_URL": url,
                "CHROMA_HOST": chroma_server[0],
                "CHROMA_PORT": str(chroma_server[1]),
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr
        assert "evaluating on PostgreSQL" in run.stderr and "Chroma server at" in run.stderr
        assert "ingested 3 documents" in run.stderr
        scores = json.loads(run.stdout)
        assert scores["keyword"]["ndcg@10"] == 1.0 and scores["hybrid"]["ndcg@10"] == 1.0
        assert {c.name for c in client.list_collections()} == before  # its namespace is gone
        parsed = make_url(url)
        with psycopg.connect(
            host=parsed.host, port=parsed.port, user=parsed.username, dbname=parsed.database
        ) as db:
            schemas = db.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lore_scratch_%'"
            ).fetchall()
            tables = db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
        assert schemas == [] and tables == (0,)  # the schema went with it; nothing left in public
    finally:
        drop_database(postgres_admin_url, url)
