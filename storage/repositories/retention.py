"""Removing people's questions: those older than a workspace keeps them (retention), and
everything one person asked or said about answers (forgetting a user).

An answer goes with what hangs on it: the indexes it searched, the documents it cited, the
verdicts on it. On SQLite the deleted rows are overwritten (`secure_delete`) and the
write-ahead log is truncated afterwards, so the removed text is not left in the database's
files; PostgreSQL's own storage is the production guide's subject (VACUUM).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import ColumnElement, Connection, Delete, String, cast, delete, literal, update
from sqlalchemy import select as sa_select
from sqlmodel import col

from storage.db import Database
from storage.keyword import KeywordIndex
from storage.models import (
    AnswerCitation,
    AnswerFeedback,
    AnswerIndex,
    AnswerLog,
    ConsoleGrant,
    ConsoleSession,
    Conversation,
    QuestionVector,
    SlackGroupMember,
    User,
    VerifiedAnswer,
    utcnow,
)
from storage.repositories.usage import stale_days
from storage.repositories.verified import FORGOTTEN

Removed = dict[str, int]


class Retention:
    def __init__(self, db: Database) -> None:
        self._db = db

    def purge_before(self, tenant_id: str, cutoff: datetime) -> Removed:
        """Remove the workspace's questions asked before `cutoff`, with their answers,
        verdicts and citations; the rows removed per table."""
        return self._remove_answers(
            (col(AnswerLog.tenant_id) == tenant_id) & (col(AnswerLog.created_at) < cutoff),
            stale_days(tenant_id, up_to=cutoff.date()),
        )

    def forget_user(self, tenant_id: str, user_id: int) -> Removed:
        """Remove what one person asked and said: their questions (and the answers to them),
        their verdicts and comments on anyone's answers, their console sessions and sign-in
        links; their name and email are blanked, and so is their name where it was kept with
        an answer they wrote (`VerifiedAnswer.answered_by`); they are no channel's expert any
        more, nor a member of the Slack groups Lore last read (read again at the next
        refresh), so their Slack id is nowhere but in the job's record. A verified answer to a question they asked keeps its
        answer and who verified it, but loses their wording (the question, its vector, a key
        made from it) and awaits review until an expert gives it a question in their own
        words (`FORGOTTEN`). The rows removed per table."""
        removed = self._remove_answers(
            (col(AnswerLog.tenant_id) == tenant_id) & (col(AnswerLog.user_id) == user_id),
            stale_days(tenant_id),
        )

        def more(connection: Connection) -> Removed:
            found: Removed = {}
            verdicts = connection.execute(
                delete(AnswerFeedback).where(col(AnswerFeedback.user_id) == user_id)
            )
            sessions = connection.execute(
                delete(ConsoleSession).where(col(ConsoleSession.user_id) == user_id)
            )
            external = connection.execute(
                sa_select(col(User.external_id)).where(col(User.id) == user_id)
            ).scalar()
            grants = connection.execute(
                delete(ConsoleGrant).where(
                    col(ConsoleGrant.tenant_id) == tenant_id, col(ConsoleGrant.user_external_id) == external
                )
            )
            found.update(_unname(connection, tenant_id, user_id))
            worded = connection.execute(
                update(VerifiedAnswer)
                .where(col(VerifiedAnswer.tenant_id) == tenant_id, col(VerifiedAnswer.asked_by) == user_id)
                .values(
                    question="",
                    question_vector=[],
                    source_key=literal("forgotten:") + cast(col(VerifiedAnswer.id), String),
                    asked_by=None,
                    flagged=FORGOTTEN,
                    updated_at=utcnow(),
                )
            )
            if worded.rowcount:
                found["verified_answer questions"] = int(worded.rowcount)
            for table, result in (
                (AnswerFeedback.__tablename__, verdicts),
                (ConsoleSession.__tablename__, sessions),
                (ConsoleGrant.__tablename__, grants),
            ):
                if result.rowcount:
                    found[str(table)] = int(result.rowcount)
            return found

        with self._scrubbing() as run:
            for table, count in run(more).items():
                removed[table] = removed.get(table, 0) + count
        return removed

    def scrub(self) -> None:
        """SQLite: leave nothing of what was deleted elsewhere (a forgotten person's personal
        index) in the database's files: merge the keyword index (deleted passages' words stay
        in its older segments), rebuild the file without its free pages, truncate the log."""
        with self._db.engine.connect() as connection:
            if connection.dialect.name != "sqlite":
                return
            KeywordIndex.merge(connection)
            raw = connection.connection.driver_connection
            assert raw is not None
            raw.execute("VACUUM")
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def end_stale_sessions(self) -> int:
        """Console sessions and sign-in links past their time go (how many)."""
        now = utcnow()
        with self._db.session() as session:
            ended = session.exec(delete(ConsoleSession).where(col(ConsoleSession.expires_at) < now))
            links = session.exec(delete(ConsoleGrant).where(col(ConsoleGrant.expires_at) < now))
            return int(ended.rowcount or 0) + int(links.rowcount or 0)

    def _remove_answers(self, which: ColumnElement[bool], stale: Delete) -> Removed:
        answers = sa_select(col(AnswerLog.id)).where(which)

        def remove(connection: Connection) -> Removed:
            found: Removed = {}
            for table, link in (
                (AnswerFeedback, col(AnswerFeedback.answer_id)),
                (AnswerIndex, col(AnswerIndex.answer_id)),
                (AnswerCitation, col(AnswerCitation.answer_id)),
                (QuestionVector, col(QuestionVector.answer_id)),
            ):
                result = connection.execute(delete(table).where(link.in_(answers)))
                if result.rowcount:
                    found[str(table.__tablename__)] = int(result.rowcount)
            # a verified answer saved from one of them stays the channel's (its own copy of
            # the text); it only stops pointing at the answer removed
            connection.execute(
                update(VerifiedAnswer)
                .where(col(VerifiedAnswer.answer_id).in_(answers))
                .values(answer_id=None)
            )
            connection.execute(stale)  # the overview's kept figures of the days they were asked
            result = connection.execute(delete(AnswerLog).where(which))
            if result.rowcount:
                found[str(AnswerLog.__tablename__)] = int(result.rowcount)
            return found

        with self._scrubbing() as run:
            return run(remove)

    @contextmanager
    def _scrubbing(self) -> Iterator[Callable[[Callable[[Connection], Removed]], Removed]]:
        """Run deletions in one transaction that, on SQLite, overwrites what it deletes and
        then truncates the write-ahead log (which would otherwise keep the old pages)."""
        with self._db.engine.connect() as connection:
            raw = connection.connection.driver_connection if connection.dialect.name == "sqlite" else None

            def run(work: Callable[[Connection], Removed]) -> Removed:
                # every SQLite connection overwrites what it deletes (`storage.db`); never
                # turn that off here, or the pooled connection would keep it off
                with connection.begin():
                    return work(connection)

            yield run
            if raw is not None:
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _unname(connection: Connection, tenant_id: str, user_id: int) -> Removed:
    """Every place a person's name or Slack id is kept, but the job's record and the audit
    log (what admins did, kept by design): their user row's name and email, the name kept with
    the answers they wrote (by user, or by name or Slack id for those saved before it was
    known), the channels they were an expert of, the Slack groups they were read in."""
    found: Removed = {}
    person = connection.execute(
        sa_select(col(User.external_id), col(User.name)).where(col(User.id) == user_id)
    ).one_or_none()
    if person is None:
        return found
    external, name = str(person[0]), str(person[1] or "")
    connection.execute(update(User).where(col(User.id) == user_id).values(name="", email=None))
    written = connection.execute(
        update(VerifiedAnswer)
        .where(
            col(VerifiedAnswer.tenant_id) == tenant_id,
            (col(VerifiedAnswer.answered_by_user) == user_id)
            | (
                col(VerifiedAnswer.answered_by_user).is_(None)
                & col(VerifiedAnswer.answered_by).in_([n for n in (name, external) if n])
            ),
        )
        .values(answered_by="", answered_by_user=None)
    )
    experts = 0
    for conversation_id, listed in connection.execute(
        sa_select(col(Conversation.id), col(Conversation.experts)).where(
            col(Conversation.tenant_id) == tenant_id
        )
    ).all():
        if external in (listed or []):
            kept = [e for e in listed if e != external]
            connection.execute(
                update(Conversation).where(col(Conversation.id) == conversation_id).values(experts=kept)
            )
            experts += 1
    groups = connection.execute(
        delete(SlackGroupMember).where(
            col(SlackGroupMember.tenant_id) == tenant_id, col(SlackGroupMember.user_external_id) == external
        )
    )
    for what, count in (
        ("verified_answer answerers", written.rowcount),
        ("conversation experts", experts),
        (str(SlackGroupMember.__tablename__), groups.rowcount),
    ):
        if count:
            found[what] = int(count)
    return found
