"""Issue 35, finding 1: the feedback review showed other people's private questions and
answers. An answer was filed under every index it searched and where it was asked was never
checked, so a 👎 with a comment on an answer given in someone's DM (from their personal
index, with #general's enabled there) was listed to #general's members in App Home and
`show feedback`, and to an admin's key in `GET /v1/feedback`.

Now where an answer was given decides (`storage.access.FEEDBACK`, tested here as a table):
a DM's answer is read by its asker alone (an admin counts it), a private channel's by its
members from there, and no text is shown of an answer that searched or quoted an index the
reviewer may not search. Then the same attack through signed Slack requests and the API.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storage.access import AnswerFacts, Given, IndexFacts, Place, Sight, sight
from storage.repositories.answers import AnswerRepository
from storage.repositories.api_keys import ApiKeyRepository
from storage.values import Scope
from tests.bot.conftest import TEAM, markdown_file, only_reply
from tests.security.conftest import running_lore

T = "T1"
ASKER, OTHER, ADMIN = 1, 2, 3
GENERAL, SECRET, ELSEWHERE = 10, 20, 30

personal = IndexFacts(T, Scope.PERSONAL, owner_user_id=ASKER, channel_id=None, channel_is_private=False)
general = IndexFacts(T, Scope.CHANNEL, owner_user_id=None, channel_id=GENERAL, channel_is_private=False)
secret = IndexFacts(T, Scope.CHANNEL, owner_user_id=None, channel_id=SECRET, channel_is_private=True)
shared = IndexFacts(T, Scope.SHARED, owner_user_id=OTHER, channel_id=None, channel_is_private=False)

in_dm = AnswerFacts(T, Given.DM, ASKER, None)
in_secret = AnswerFacts(T, Given.PRIVATE_CHANNEL, ASKER, SECRET)
in_general = AnswerFacts(T, Given.PUBLIC_CHANNEL, ASKER, GENERAL)

asker_dm = Place(T, ASKER)
asker_in_general = Place(T, ASKER, channel_id=GENERAL)
other_dm = Place(T, OTHER)
other_in_general = Place(T, OTHER, channel_id=GENERAL)
other_in_secret = Place(T, OTHER, channel_id=SECRET, channel_is_private=True)
admin_dm = Place(T, ADMIN, user_is_admin=True)
admin_in_general = Place(T, ADMIN, channel_id=GENERAL, user_is_admin=True)
admin_in_secret = Place(T, ADMIN, channel_id=SECRET, channel_is_private=True, user_is_admin=True)
partner_in_general = Place(T, OTHER, channel_id=GENERAL, partner=True, external=True)
other_tenant = Place("T2", ASKER)

TEXT, COUNT, NOTHING = Sight.TEXT, Sight.COUNT, None

# (where the answer was given, the indexes it searched or quoted, the reviewer, what they see)
TABLE = [
    # a DM's answer: its asker alone, in a private place; an admin counts it
    (in_dm, [personal, general], asker_dm, TEXT),
    (in_dm, [personal, general], asker_in_general, NOTHING),  # a DM's is read in private places
    (in_dm, [general], asker_in_general, NOTHING),
    (in_dm, [personal, general], other_in_general, NOTHING),
    (in_dm, [general], other_in_general, NOTHING),
    (in_dm, [general], other_dm, NOTHING),
    (in_dm, [personal, general], admin_dm, COUNT),
    (in_dm, [general], admin_in_general, COUNT),
    (in_dm, [personal], other_tenant, NOTHING),
    # a private channel's answer: its members, from there; an admin elsewhere counts it
    (in_secret, [secret], other_in_secret, TEXT),
    (in_secret, [secret, shared], other_in_secret, TEXT),
    (in_secret, [secret], admin_in_secret, TEXT),
    (in_secret, [secret], other_dm, NOTHING),
    (in_secret, [secret], asker_dm, NOTHING),  # its asker too reads it from the channel
    (in_secret, [secret], other_in_general, NOTHING),
    (in_secret, [secret], admin_dm, COUNT),
    (in_secret, [secret], admin_in_general, COUNT),
    # a public channel's answer: anyone of the workspace who reviews one of its indexes
    (in_general, [general], other_in_general, TEXT),
    (in_general, [general, shared], other_dm, TEXT),
    (in_general, [general], admin_dm, TEXT),
    (in_general, [general], partner_in_general, NOTHING),
    (in_general, [general], other_tenant, NOTHING),
    # never the text of an answer that searched or quoted an index the reviewer can't read
    (in_general, [general, secret], other_in_general, COUNT),
    (in_general, [general, personal], other_in_general, COUNT),
    (in_general, [general, None], other_in_general, COUNT),  # an index since deleted
]


@pytest.mark.parametrize(("answer", "indexes", "place", "expected"), TABLE)
def test_who_sees_what_of_an_answer(
    answer: AnswerFacts, indexes: list[IndexFacts | None], place: Place, expected: Sight | None
) -> None:
    assert sight(answer, indexes, place) == expected


PAYSLIP = "# Payslip\n\nNet pay for March: 4,312.55 EUR, bonus code PEARLFISH.\n"
HOLIDAYS = "# Holidays\n\nThe office closes on the 24th of December.\n"
QUESTION = "what was my net pay for march"
COMMENT = "this quoted my whole payslip, wrong month KUMQUAT"


@pytest.mark.asyncio
async def test_a_dm_answers_feedback_stays_with_its_asker(tmp_path: Path) -> None:
    async with running_lore(tmp_path / "lore") as lore:
        slack = lore.slack
        slack.add_channel("CGENERAL", "general")
        slack.add_user("UASKER", "asker")
        slack.add_user("UREVIEW", "reviewer")
        slack.add_user("UBOSS", "boss", is_admin=True)
        slack.join("CGENERAL", "UASKER", "UREVIEW", "UBOSS")
        holidays = markdown_file(lore, "FHOL", "holidays.md", HOLIDAYS)
        await lore.mention("CGENERAL", "UREVIEW", "add this doc", files=[holidays])
        payslip = markdown_file(lore, "FPAY", "payslip-march.md", PAYSLIP)
        await lore.dm("UASKER", files=[payslip])
        await lore.dm("UASKER", "enable the general index")

        asked = await lore.dm("UASKER", QUESTION)
        answer = only_reply(lore, "DUASKER", asked)
        assert "4,312.55" in answer.text or "4,312.55" in json.dumps(answer.blocks)
        assert await lore.press_feedback("UASKER", "DUASKER", answer, helpful=False) == 200
        [form] = [c.params["view"] for c in lore.calls("views.open")][-1:]
        values = {
            "reason": {"value": {"type": "radio_buttons", "selected_option": {"value": "wrong"}}},
            "comment": {"value": {"type": "plain_text_input", "value": COMMENT}},
        }
        await lore.submit_view("UASKER", form, values)
        answers = AnswerRepository(lore.runtime.services.db)
        answer_id = int(answer.button("answer_feedback")["negative_button"]["value"].split(":")[1])
        assert answers.get(answer_id, TEAM).given == Given.DM
        [verdict] = answers.verdicts(answer_id)
        assert verdict.comment == COMMENT

        def leaked(text: str) -> list[str]:
            return [s for s in ("KUMQUAT", "4,312.55", "PEARLFISH", "net pay", "payslip") if s in text]

        lore.begin()
        home = {"type": "app_home_opened", "user": "UREVIEW", "channel": "DUREVIEW", "tab": "home"}
        assert await lore.deliver({**home, "event_ts": lore.next_ts()}) == 200
        [published] = [c for c in lore.calls("views.publish") if c.params["user_id"] == "UREVIEW"]
        assert leaked(json.dumps(published.params)) == []

        lore.begin()
        asked = await lore.mention("CGENERAL", "UREVIEW", "show feedback")
        shown = lore.said("CGENERAL", asked)
        assert leaked(shown) == [] and "Nothing to review" in shown

        lore.begin()
        asked = await lore.mention("CGENERAL", "UBOSS", "show feedback")
        shown = lore.said("CGENERAL", asked)
        assert leaked(shown) == [] and "1 more answer was given where you can't read it" in shown

        services = lore.runtime.services
        boss = services.directory.ensure_user(TEAM, "UBOSS", "boss", is_admin=True)
        admin_key = ApiKeyRepository(services.db).create(TEAM, "boss", user_id=boss.id).secret
        status, body = await lore.api("GET", "/v1/feedback", key=admin_key)
        assert status == 200 and leaked(json.dumps(body)) == []
        [general] = [i for i in body["indexes"] if i["index"] == "general"]
        assert (general["unhelpful"], general["withheld_unhelpful"]) == ([], 1)

        lore.begin()  # the asker still reads their own, in their DM
        asked = await lore.dm("UASKER", "show feedback")
        mine = lore.said("DUASKER", asked)
        assert "KUMQUAT" in mine and QUESTION in mine
