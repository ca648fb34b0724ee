"""The console's rules that need no server: who reads which question (the feedback review's
rule), and exports that a spreadsheet cannot turn into formulas."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from bot.app.exports import csv_line
from storage.access import IndexFacts, Place, Sight, given_now, sight
from storage.repositories.history import Asked
from storage.values import ConversationKind, Scope

T = "T0001"
SHARED = IndexFacts(T, Scope.SHARED, owner_user_id=9, channel_id=None, channel_is_private=False)
PRIVATE_INDEX = IndexFacts(T, Scope.CHANNEL, owner_user_id=None, channel_id=5, channel_is_private=True)


def asked(
    kind: ConversationKind, *, channel: int | None = None, private: bool = True, asker: int = 1
) -> Asked:
    in_channel = kind == ConversationKind.CHANNEL and channel is not None
    return Asked(
        answer_id=1, tenant_id=T, at=datetime.now(UTC), question="q", answer="a", abstained=True, latency_ms=1,
        asker_id=asker, asker="U1", conversation_kind=kind, channel_id=channel, channel_name="c",
        channel_is_private=private, index_ids=(1,), helpful=0, unhelpful=0, comments=(),
        given=given_now(None, in_channel=in_channel, channel_is_private=private),
    )  # fmt: skip


ADMIN = Place(T, 2, user_is_admin=True)
MEMBER = Place(T, 3)
ASKER = Place(T, 1)
IN_THE_CHANNEL = Place(T, 3, channel_id=5, channel_is_private=True)
PARTNER = Place(T, 4, partner=True)
DM = asked(ConversationKind.DM)
PRIVATE = asked(ConversationKind.CHANNEL, channel=5, private=True)
PUBLIC = asked(ConversationKind.CHANNEL, channel=6, private=False)


@pytest.mark.parametrize(
    ("place", "question", "indexes", "seen"),
    [
        (ASKER, DM, [SHARED], Sight.TEXT),  # a DM's question is its asker's
        (ADMIN, DM, [SHARED], Sight.COUNT),  # …an admin counts it
        (MEMBER, DM, [SHARED], None),  # …nobody else sees it at all
        (IN_THE_CHANNEL, PRIVATE, [PRIVATE_INDEX], Sight.TEXT),  # read from its channel
        (ADMIN, PRIVATE, [PRIVATE_INDEX], Sight.COUNT),  # the console is no channel
        (MEMBER, PRIVATE, [SHARED], None),
        (MEMBER, PUBLIC, [SHARED], Sight.TEXT),
        (ADMIN, PUBLIC, [SHARED], Sight.TEXT),
        (ADMIN, PUBLIC, [PRIVATE_INDEX], Sight.COUNT),  # it drew on an index the reader can't search
        (ADMIN, PUBLIC, [None], Sight.COUNT),  # …or on one that is gone
        (PARTNER, PUBLIC, [SHARED], None),
    ],
)
def test_who_reads_which_question(
    place: Place, question: Asked, indexes: list[IndexFacts | None], seen: Sight | None
) -> None:
    assert sight(question.facts, indexes, place) is seen


def test_csv_cells_never_start_a_formula() -> None:
    line = csv_line(['=HYPERLINK("http://evil")', "+1", "-2", "@SUM(A1)", "plain", "a,b"])
    assert next(csv.reader(io.StringIO(line))) == [
        "'=HYPERLINK(\"http://evil\")", "'+1", "'-2", "'@SUM(A1)", "plain", "a,b",
    ]  # fmt: skip
