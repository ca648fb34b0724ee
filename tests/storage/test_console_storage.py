"""What the admin console reads and removes in SQL, on SQLite and PostgreSQL: usage counted
per day, place and index, the audit log's filters, retention's purge, forgetting a person,
and sign-in links that work once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import inspect, text

from storage.db import Database
from storage.records import NewDocument
from storage.repositories.answers import AnswerEntry, AnswerRepository
from storage.repositories.audit import AuditFilter, AuditLog, NewAuditEntry
from storage.repositories.console import ConsoleAccess
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.history import AnswerHistory
from storage.repositories.indexes import IndexRepository
from storage.repositories.retention import Retention
from storage.repositories.usage import UsageRepository
from storage.repositories.verified import VerifiedEntry, VerifiedRepository
from storage.values import Scope, SourceKind, utcnow

TENANT = "T0001"


def world(db: Database) -> dict[str, int]:
    directory = Directory(db)
    directory.ensure_tenant(TENANT)
    ada = directory.ensure_user(TENANT, "UADA", "ada")
    bea = directory.ensure_user(TENANT, "UBEA", "bea")
    public = directory.ensure_channel(TENANT, "CPUB", "general", is_private=False)
    secret = directory.ensure_channel(TENANT, "CSEC", "secret", is_private=True)
    index = IndexRepository(db).create(
        TENANT, "handbook", Scope.SHARED, embedding_model="m", embedding_dimension=3
    )
    return {
        "ada": ada.id,
        "bea": bea.id,
        "public": directory.channel_conversation(public).id,
        "secret": directory.channel_conversation(secret).id,
        "dm": directory.dm_conversation(ada).id,
        "index": index.id,
    }


def ask(
    db: Database, ids: dict[str, int], question: str, where: str, *, user: str = "ada", **more: object
) -> int:
    entry = AnswerEntry(
        tenant_id=TENANT,
        question=question,
        mode="rag_only",
        fallback=None,
        abstained=bool(more.pop("abstained", False)),
        cited=[{"n": 1, "name": "doc", "index_id": ids["index"], "document_id": more.pop("document", 7)}],
        conversation_id=ids[where],
        user_id=ids[user],
        searched=[ids["index"]],
        latency_ms=int(more.pop("latency", 100)),  # type: ignore[call-overload]
    )
    return AnswerRepository(db).record(entry)


def age(db: Database, answer_id: int, days: int) -> None:
    with db.engine.begin() as connection:
        connection.execute(
            text("UPDATE answer_log SET created_at = :at WHERE id = :id"),
            {"at": utcnow() - timedelta(days=days), "id": answer_id},
        )


def test_usage_is_counted_per_day_place_and_index(database: Database) -> None:
    ids = world(database)
    for n, latency in enumerate((100, 200, 300, 400, 5000)):
        ask(database, ids, f"question {n}", "public", latency=latency, abstained=n == 4)
    ask(database, ids, "in private", "secret", user="bea")
    old = ask(database, ids, "in a DM", "dm")
    age(database, old, 2)
    answers = AnswerRepository(database)
    answers.set_feedback(old, TENANT, ids["ada"], True)
    answers.set_feedback(old, TENANT, ids["bea"], False)
    usage = UsageRepository(database).usage(
        TENANT, utcnow() - timedelta(days=7), utcnow() + timedelta(minutes=1)
    )
    assert (usage.questions, usage.abstained, usage.answered, usage.askers) == (7, 1, 6, 2)
    assert (usage.helpful, usage.unhelpful) == (1, 1)
    assert (usage.latency_p50_ms, usage.latency_p95_ms) == (200, 5000)
    assert sorted(d.questions for d in usage.days) == [1, 6]
    assert {(p.name, p.is_private, p.questions) for p in usage.places} == {
        ("general", False, 5),
        ("secret", True, 1),
        ("", True, 1),  # DMs, counted together
    }
    assert usage.indexes == ((ids["index"], 7),)
    assert usage.verified == 0
    # outside the window nothing counts
    empty = UsageRepository(database).usage(
        TENANT, utcnow() - timedelta(days=30), utcnow() - timedelta(days=8)
    )
    assert empty.questions == 0 and empty.latency_p50_ms is None


def test_answers_from_a_verified_answer_are_counted(database: Database) -> None:
    ids = world(database)
    documents = DocumentRepository(database)

    def document(name: str, **meta: str) -> int:
        new = NewDocument(ids["index"], SourceKind.TEXT, name, name, "text/markdown", name, 1, 1, meta=meta)
        return documents.create_pending(new, [])[0].id

    verified, plain = document("Answer: leave?", verified="true"), document("handbook.md")
    for n, cited in enumerate((verified, verified, plain)):  # marked when logged
        ask(database, ids, f"question {n}", "public", document=cited)
    ask(database, ids, "unanswered", "public", abstained=True)
    usage = UsageRepository(database).usage(
        TENANT, utcnow() - timedelta(days=1), utcnow() + timedelta(minutes=1)
    )
    assert (usage.questions, usage.answered, usage.verified) == (4, 3, 2)


def test_the_audit_log_filters_and_pages_newest_first(database: Database) -> None:
    world(database)
    log = AuditLog(database)
    for action, actor in (("index.create", "UADA"), ("index.delete", "UBEA"), ("document.forget", "UADA")):
        log.append(NewAuditEntry(TENANT, actor, "slack", action, target="handbook"))
    log.append(NewAuditEntry("T0OTHER", "UADA", "slack", "index.create"))
    assert [e.action for e in log.page(TENANT, AuditFilter())] == [
        "document.forget",
        "index.delete",
        "index.create",
    ]
    assert [e.action for e in log.page(TENANT, AuditFilter(action="index"))] == [
        "index.delete",
        "index.create",
    ]
    assert [e.action for e in log.page(TENANT, AuditFilter(action="index.create"))] == ["index.create"]
    assert [e.actor for e in log.page(TENANT, AuditFilter(actor="UBEA"))] == ["UBEA"]
    newest = log.page(TENANT, AuditFilter(), limit=1)[0]
    assert len(log.page(TENANT, AuditFilter(before=newest.id))) == 2
    assert log.page(TENANT, AuditFilter(action="ind%")) == []  # a pattern is not a family
    assert log.actions(TENANT) == ["document.forget", "index.create", "index.delete"]


def test_retention_removes_old_questions_and_all_that_hangs_on_them(database: Database) -> None:
    ids = world(database)
    old = ask(database, ids, "an old question", "public")
    new = ask(database, ids, "a new question", "public")
    AnswerRepository(database).set_feedback(old, TENANT, ids["bea"], False, comment="meh")
    AnswerHistory(database).keep_vectors("m", {old: b"\0" * 12})
    age(database, old, 40)
    removed = Retention(database).purge_before(TENANT, utcnow() - timedelta(days=30))
    assert removed == {
        "answer_log": 1,
        "answer_index": 1,
        "answer_citation": 1,
        "answer_feedback": 1,
        "question_vector": 1,
    }
    left = list(AnswerHistory(database).between(TENANT, utcnow() - timedelta(days=90), utcnow()))
    assert [a.answer_id for a in left] == [new]
    assert Retention(database).purge_before(TENANT, utcnow() - timedelta(days=30)) == {}


def test_forgetting_a_person_removes_what_they_asked_and_said(database: Database) -> None:
    ids = world(database)
    hers = ask(database, ids, "ada's question", "dm")
    theirs = ask(database, ids, "bea's question", "public", user="bea")
    AnswerRepository(database).set_feedback(theirs, TENANT, ids["ada"], False, comment="ada's comment")
    access = ConsoleAccess(database)
    access.open_session(TENANT, ids["ada"], via="link", lasts=timedelta(hours=1))
    removed = Retention(database).forget_user(TENANT, ids["ada"])
    assert removed["answer_log"] == 1 and removed["answer_feedback"] == 1 and removed["console_session"] == 1
    history = AnswerHistory(database)
    assert history.some(TENANT, [hers]) == []
    [kept] = history.some(TENANT, [theirs])
    assert kept.comments == () and kept.unhelpful == 0
    assert Directory(database).user(ids["ada"]).name == ""


def test_a_sign_in_link_works_once_and_not_after_it_expires(database: Database) -> None:
    world(database)
    access = ConsoleAccess(database)
    link = access.grant(TENANT, "UADA", lasts=timedelta(minutes=15))
    grant = access.redeem(link)
    assert grant is not None and (grant.tenant_id, grant.user_external_id) == (TENANT, "UADA")
    assert access.redeem(link) is None
    stale = access.grant(TENANT, "UADA", lasts=timedelta(seconds=-1))
    assert access.redeem(stale) is None
    assert access.redeem("made-up") is None
    with database.engine.connect() as connection:  # only hashes are kept
        kept = [row[0] for row in connection.execute(text("SELECT token_hash FROM console_grant"))]
    assert link not in kept and len(kept) == 2


def test_a_session_ends_when_signed_out_or_expired(database: Database) -> None:
    ids = world(database)
    access = ConsoleAccess(database)
    secret, session = access.open_session(TENANT, ids["ada"], via="slack", lasts=timedelta(hours=1))
    assert access.session(secret) == session
    access.end(secret)
    assert access.session(secret) is None
    expired, _ = access.open_session(TENANT, ids["ada"], via="slack", lasts=timedelta(seconds=-1))
    assert access.session(expired) is None
    assert Retention(database).end_stale_sessions() == 1


def test_removing_questions_keeps_a_verified_answer_saved_from_one(database: Database) -> None:
    """A verified answer saved from Lore's answer points at it (a foreign key): retention and
    forgetting its asker remove the answer, and keep the channel's verified answer (its own
    copy of the text), no longer pointing at it."""
    ids = world(database)
    repository = VerifiedRepository(database)
    saved = []
    for n, user in enumerate(("ada", "bea")):
        answer_id = ask(database, ids, f"question {n}", "public", user=user)
        entry = VerifiedEntry(
            tenant_id=TENANT, index_id=ids["index"], source_key=f"answer:{answer_id}", question=f"question {n}",
            answer="the answer", question_vector=[0.0, 0.0, 1.0], embedding_model="m", answered_by="Lore",
            verified_by=ids["bea"], answer_id=answer_id,
        )  # fmt: skip
        saved.append(repository.save(entry).id)
    bea_answer = repository.get(saved[1], TENANT).answer_id
    assert bea_answer is not None
    age(database, bea_answer, 40)
    assert Retention(database).forget_user(TENANT, ids["ada"])["answer_log"] == 1
    assert Retention(database).purge_before(TENANT, utcnow() - timedelta(days=30))["answer_log"] == 1
    for verified in saved:
        kept = repository.get(verified, TENANT)
        assert kept.answer == "the answer" and kept.answer_id is None


def test_whole_past_days_are_kept_and_dropped_when_their_questions_change(database: Database) -> None:
    ids = world(database)
    answers = AnswerRepository(database)
    usage = UsageRepository(database)
    asked = {}
    for days in (0, 1, 3, 3, 10):
        asked.setdefault(days, []).append(ask(database, ids, f"asked {days} days ago", "public"))
        age(database, asked[days][-1], days)
    shown = ask(database, ids, "a verified answer shown", "public", abstained=True)
    age(database, shown, 3)
    with database.engine.begin() as connection:  # given from a help channel's verified answer
        connection.execute(
            text("UPDATE answer_log SET verified = :yes WHERE id = :id"), {"yes": True, "id": shown}
        )

    def figures() -> tuple[object, ...]:
        found = usage.usage(TENANT, utcnow() - timedelta(days=7), utcnow())
        return (
            found.questions, found.abstained, found.verified, found.escalated, found.helpful,
            found.askers, found.indexes, tuple((d.questions, d.verified, d.escalated) for d in found.days),
        )  # fmt: skip

    def kept() -> int:
        with database.engine.connect() as connection:
            return int(connection.execute(text("SELECT COUNT(*) FROM usage_day")).scalar() or 0)

    first = figures()
    assert first[:6] == (5, 0, 1, 0, 0, 1)  # the verified answer shown counts as answered, not abstained
    assert kept() == 6  # the whole days between its first, ragged day and today (both counted)
    assert figures() == first  # read from the kept days, the same figures

    answers.escalate(asked[3][0], TENANT)  # on a kept day: dropped, counted again
    answers.set_feedback(asked[1][0], TENANT, ids["bea"], True)
    again = figures()
    assert again[3:5] == (1, 1)  # escalated, helpful
    assert [d for d in again[7] if d[2]] == [(3, 1, 1)]  # type: ignore[index,attr-defined]

    Retention(database).purge_before(TENANT, utcnow() - timedelta(days=2))
    assert figures()[0] == 2  # today's and yesterday's
    Retention(database).forget_user(TENANT, ids["ada"])
    assert figures()[0] == 0


def every_row(db: Database) -> str:
    """Every row of every table, as text: where a removed wording must not be."""
    with db.engine.connect() as connection:
        tables = inspect(connection).get_table_names()
        return "\n".join(
            str(row) for table in tables for row in connection.execute(text(f'SELECT * FROM "{table}"'))
        )


def test_forgetting_a_person_blanks_their_name_on_the_answers_they_wrote(database: Database) -> None:
    """`answered_by` goes for answers a person wrote: known by their user, or, saved before
    that was kept, by their name or Slack id; another person's name stays."""
    ids = world(database)
    repository = VerifiedRepository(database)

    def save(key: str, answered_by: str, answered_by_user: int | None = None) -> int:
        entry = VerifiedEntry(
            tenant_id=TENANT, index_id=ids["index"], source_key=key, question=f"question {key}",
            answer=f"answer {key}", question_vector=[0.25, 0.5, 0.75], embedding_model="m",
            answered_by=answered_by, verified_by=ids["bea"], answered_by_user=answered_by_user,
        )  # fmt: skip
        return repository.save(entry).id

    by_user = save("slack:CPUB:1.1", "Ada Lovelace", ids["ada"])
    by_name = save("slack:CPUB:1.2", "ada")
    by_id = save("slack:CPUB:1.3", "UADA")
    theirs = save("slack:CPUB:1.4", "bea")

    removed = Retention(database).forget_user(TENANT, ids["ada"])

    assert removed["verified_answer answerers"] == 3
    assert [repository.get(v, TENANT).answered_by for v in (by_user, by_name, by_id, theirs)] == [
        "",
        "",
        "",
        "bea",
    ]
    assert "Ada Lovelace" not in every_row(database)


def test_forgetting_an_asker_takes_their_wording_out_of_verified_answers(database: Database) -> None:
    """A verified answer to a question someone asked keeps its answer and who verified it when
    that person is forgotten, but not their wording (the question, its vector, a key made of
    it): it awaits review until an expert writes the question. A question an expert rewrote,
    and another person's, stay."""
    ids = world(database)
    repository = VerifiedRepository(database)

    def save(key: str, question: str, asked_by: str, verified_by: str, **more: object) -> int:
        entry = VerifiedEntry(
            tenant_id=TENANT, index_id=ids["index"], source_key=key, question=question,
            answer=f"the answer to {key.split(':')[0]}", question_vector=[0.25, 0.5, 0.75], embedding_model="m",
            answered_by="bea", verified_by=ids[verified_by], asked_by=ids[asked_by], **more,  # type: ignore[arg-type]
        )  # fmt: skip
        return repository.save(entry).id

    asked = "my payslip from the maternity leave months is missing, who fixes that?"
    said = "can I claim the physiotherapy for my knee on the team budget?"
    from_answer = save("answer", asked, "ada", "bea", answer_id=ask(database, ids, asked, "public"))
    from_reply = save("slack:CPUB:1.2", asked, "ada", "bea")
    from_teach = save("said:" + said, said, "ada", "ada")
    rewritten = save("slack:CPUB:3.4", "ada's wording about her overtime", "ada", "bea")
    repository.edit(
        rewritten, "the overtime answer", ids["bea"], ("How is overtime paid?", [1.0, 0.0, 0.0], "m")
    )
    theirs = save("slack:CPUB:5.6", "bea's question about the VPN", "bea", "bea")

    removed = Retention(database).forget_user(TENANT, ids["ada"])
    Retention(database).scrub()

    assert removed["verified_answer questions"] == 3
    rows = every_row(database)
    for wording in ("maternity leave", "physiotherapy", "ada's wording"):
        assert wording not in rows
    for verified in (from_answer, from_reply, from_teach):
        kept = repository.get(verified, TENANT)
        assert kept.question == "" and kept.question_vector == () and kept.asked_by is None
        assert kept.answer.startswith("the answer to") and kept.verified_by in (ids["ada"], ids["bea"])
        assert kept.flagged == "asker forgotten" and not kept.source_key.startswith("said:")
    live = {v.id for v in repository.of_indexes([ids["index"]], live_only=True)}
    assert live == {rewritten, theirs}
    assert repository.get(rewritten, TENANT).question == "How is overtime paid?"
    assert repository.get(theirs, TENANT).question == "bea's question about the VPN"
    if database.engine.dialect.name == "sqlite":  # nor in the database's files
        path = Path(str(database.engine.url.database))
        files = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
        assert b"maternity leave" not in files and b"physiotherapy" not in files

    # an expert gives it a question in their own words: answered with again
    repository.edit(from_reply, "the answer to slack", ids["bea"], ("Who fixes a missing payslip?", [0.0, 1.0, 0.0], "m"))  # fmt: skip
    assert repository.get(from_reply, TENANT).live
    repository.edit(from_answer, "the answer, edited", ids["bea"])  # no question yet: still set aside
    assert not repository.get(from_answer, TENANT).live
