"""Retention and forgetting a person through the real CLI: what `lore retention run` and
`lore forget-user` say they removed is gone from SQL, and their text from every file of the
data folder (the SQLite database and its write-ahead log, embedded Chroma)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e]

LORE = str(Path(sys.executable).with_name("lore"))


def lore(home: Path, *args: str, stdin: str | None = None, **settings: str) -> str:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    env.update(LORE_HOME=str(home / "data"), ANONYMIZED_TELEMETRY="False", **settings)
    done = subprocess.run(
        [LORE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def rows(home: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(home / "data" / "lore.db", timeout=30)) as db:
        return list(db.execute(sql, args))


def files_holding(folder: Path, needle: bytes) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_retention_removes_old_questions_from_sql_and_the_disk(tmp_path: Path) -> None:
    (tmp_path / "vpn.md").write_text("# VPN\n\nThe VPN password is reset at the IT desk.\n")
    lore(tmp_path, "ingest", "vpn.md", "--index", "handbook")
    lore(
        tmp_path, "shell", stdin="where does the zebracorn protocol live?\nhow do I reset the VPN password?\n"
    )
    assert rows(tmp_path, "SELECT COUNT(*) FROM answer_log") == [(2,)]
    with closing(sqlite3.connect(tmp_path / "data" / "lore.db")) as db, db:
        long_ago = (datetime.now(UTC) - timedelta(days=40)).strftime("%Y-%m-%d %H:%M:%S.%f")
        db.execute("UPDATE answer_log SET created_at = ? WHERE question LIKE '%zebracorn%'", (long_ago,))
    assert files_holding(tmp_path / "data", b"zebracorn")  # it is there before

    said = lore(tmp_path, "retention", "run", LORE_RETENTION_DAYS="30")
    assert "Retention 30 days in local: removed" in said and "answer_log 1" in said
    assert rows(tmp_path, "SELECT question FROM answer_log") == [("how do I reset the VPN password?",)]
    assert files_holding(tmp_path / "data", b"zebracorn") == []
    audit = lore(tmp_path, "audit", "--action", "retention")
    assert '"action": "retention.purge"' in audit and '"answer_log": 1' in audit
    # retention 0 keeps everything
    assert "keeps questions for good" in lore(tmp_path, "retention", "run", LORE_RETENTION_DAYS="0")


def test_forgetting_a_person_is_a_job_that_removes_their_questions_and_personal_index(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Carol's notes\n\nThe platypunk budget is approved for March.\n")
    lore(
        tmp_path,
        "shell",
        stdin="/as carol\nadd ./notes.md to your memory\nwhat is the wombatron schedule?\n/as dave\nwho owns billing?\n",
    )
    assert rows(tmp_path, "SELECT COUNT(*) FROM answer_log") == [(2,)]
    data = tmp_path / "data"
    assert files_holding(data, b"platypunk") and files_holding(data, b"wombatron")

    # asked for twice: one job, queued, nothing removed yet
    said = lore(tmp_path, "forget-user", "carol")
    assert "Forget job 1 for carol: queued" in said
    assert "Forget job 1 for carol: queued" in lore(tmp_path, "forget-user", "carol")
    assert rows(tmp_path, "SELECT COUNT(*) FROM forget_job") == [(1,)]
    listed = lore(tmp_path, "jobs")
    assert re.search(r"^\s*1\s+carol\s+queued\s+—\s+cli", listed, re.M), listed
    assert files_holding(data, b"wombatron")

    # --now runs the queued job here and says what it removed
    said = lore(tmp_path, "forget-user", "carol", "--now")
    assert "Forgot carol (job 1):" in said and "answer_log 1" in said and "personal index documents 1" in said
    assert rows(tmp_path, "SELECT question FROM answer_log") == [("who owns billing?",)]
    assert rows(tmp_path, "SELECT state, steps FROM forget_job") == [
        ("succeeded", '["answers", "personal index", "scrub", "audit"]')
    ]
    assert files_holding(data, b"wombatron") == []
    assert files_holding(data, b"platypunk") == []
    listed = lore(tmp_path, "jobs")
    assert re.search(r"^\s*1\s+carol\s+succeeded\s+.*answer_log 1, personal index documents 1", listed, re.M)
    audit = lore(tmp_path, "audit", "--action", "user")
    entries = [json.loads(line) for line in audit.splitlines()]
    forgot = [e for e in entries if e["action"] == "user.forget"]
    asked = [e for e in entries if e["action"] == "user.forget_request"]
    assert len(forgot) == 1 and len(asked) == 1  # asked twice, queued and audited once
    assert forgot[0]["target"] == "carol" and forgot[0]["surface"] == "cli"
    assert forgot[0]["details"]["job"] == 1 and forgot[0]["details"]["removed"]["answer_log"] == 1


def test_a_forget_job_whose_worker_was_killed_is_resumed(tmp_path: Path) -> None:
    lore(tmp_path, "shell", stdin="/as dave\nwhere is the quokkanaut manual?\n")
    assert "Forget job 1 for dave: queued" in lore(tmp_path, "forget-user", "dave")
    # a worker took it, removed dave's questions, and was killed before its next step: the
    # row is as that worker leaves it (running, its last heartbeat a while ago)
    with closing(sqlite3.connect(tmp_path / "data" / "lore.db")) as db, db:
        db.execute("DELETE FROM answer_index")
        db.execute("DELETE FROM question_vector")
        db.execute("DELETE FROM answer_log")
        long_ago = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M:%S.%f")
        db.execute(
            "UPDATE forget_job SET state = 'running', worker = 'killed', claim = 'gone', "
            "heartbeat_at = ?, started_at = ?, steps = '[\"answers\"]', removed = '{\"answer_log\": 1}'",
            (long_ago, long_ago),
        )
    # asking again while it is under way gets the same job
    assert "Forget job 1 for dave: running" in lore(tmp_path, "forget-user", "dave")
    said = lore(tmp_path, "forget-user", "dave", "--now")
    assert "Forgot dave (job 1): answer_log 1" in said
    assert rows(tmp_path, "SELECT state, worker != 'killed', steps FROM forget_job") == [
        ("succeeded", 1, '["answers", "personal index", "scrub", "audit"]')
    ]
    assert files_holding(tmp_path / "data", b"quokkanaut") == []
