"""Issue 35, finding 8: interactive payloads trusted their own hidden values. The shortcut's
form trusted the channel in its `private_metadata` (and the button its value), and feedback
accepted any answer id: with the signing secret, anyone could save a private channel's
thread, or someone's DM with Lore, into their own index, and file feedback on answers they
never saw. Now the conversation a payload names is checked with Slack (a channel or group
DM the person is in; their own DM with Lore, by who wrote its messages) and an answer is
judged only by who could see it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from storage.repositories.answers import AnswerRepository
from tests.bot.conftest import TEAM, Reply, markdown_file, only_reply
from tests.bot.slack_payloads import press_ephemeral, shortcut, submit_view
from tests.security.conftest import Lore, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")

SALARIES = "# Salaries\n\nThe CTO's salary is 212,000 EUR a year.\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-forged")) as running:
        slack = running.slack
        for user, name in (("UVIC", "victor"), ("UEVE", "eve"), ("USAM", "sam")):
            slack.add_user(user, name)
        slack.add_channel("CGENERAL", "general")
        slack.add_channel("GSECRET", "secret", is_private=True)
        slack.join("CGENERAL", "UVIC", "UEVE", "USAM")
        slack.join("GSECRET", "USAM")
        await running.mention("CGENERAL", "UEVE", "hello")
        yield running


def documents_of(lore: Lore, user: str) -> str:
    services = lore.runtime.services
    owner = services.directory.find_user(TEAM, user)
    assert owner is not None
    found = [i for i in services.indexes.list_for_tenant(TEAM) if i.owner_user_id == owner.id]
    documents = [d for i in found for d in services.documents.list_ready(i.id)]
    return json.dumps(services.documents.opening_text([d.id for d in documents]))


async def test_the_shortcut_form_cannot_name_a_channel_its_sender_is_not_in(lore: Lore) -> None:
    ts = lore.next_ts()
    lore.slack.add_message("GSECRET", ts, "The merger partner is Pelican Holdings.", "USAM")
    where = {"channel": "GSECRET", "thread_ts": ts}
    await lore.dm("UEVE", "hello")  # eve's personal index exists
    personal = next(
        i
        for i in lore.runtime.services.indexes.list_for_tenant(TEAM)
        if i.owner_user_id == lore.runtime.services.directory.find_user(TEAM, "UEVE").id  # type: ignore[union-attr]
    )
    lore.begin()
    form = {"type": "modal", "callback_id": "lore_memory_other_index", "private_metadata": json.dumps(where)}
    chosen = {"index": {"value": {"type": "static_select", "selected_option": {"value": str(personal.id)}}}}
    assert await submit_view(lore, "UEVE", form, chosen) == 200
    button = {"action_id": "lore_memory_pick_index", "value": json.dumps(where)}
    assert await press_ephemeral(lore, "UEVE", "CGENERAL", button) == 200
    assert lore.calls("views.open") == []
    assert "Pelican" not in documents_of(lore, "UEVE")
    told = [c.params["text"] for c in lore.calls("chat.postEphemeral")]
    assert told and all("conversations you are in" in t for t in told), told


async def test_a_forged_shortcut_cannot_read_someone_elses_dm_with_lore(lore: Lore) -> None:
    lore.slack.add_channel("DUVIC", "", is_im=True, user="UVIC")
    ts = lore.next_ts()
    message = lore.slack.add_message("DUVIC", ts, "My locker code is 9-9-1-4.", "UVIC")
    lore.begin()
    assert await shortcut(lore, "add_to_memory", "UEVE", "DUVIC", message) == 200
    assert "9-9-1-4" not in documents_of(lore, "UEVE")
    [told] = lore.calls("chat.postEphemeral") or lore.calls("chat.postMessage")
    assert "conversations you are in" in told.params["text"]


async def test_feedback_reaches_only_answers_the_presser_could_see(lore: Lore) -> None:
    salaries = markdown_file(lore, "FSAL", "salaries.md", SALARIES)
    await lore.dm("UVIC", files=[salaries])
    asked = await lore.dm("UVIC", "what is the CTO's salary?")
    in_dm = only_reply(lore, "DUVIC", asked)
    await lore.mention("GSECRET", "USAM", "add this doc", files=[salaries])
    secret = await lore.mention("GSECRET", "USAM", "what is the CTO's salary?")
    in_secret = lore.replies("GSECRET", secret)[-1]
    answers = AnswerRepository(lore.runtime.services.db)

    def answer_id(reply: Reply) -> int:
        return int(reply.button("answer_feedback")["negative_button"]["value"].split(":")[1])

    lore.begin()
    assert await lore.press_feedback("UEVE", "CGENERAL", in_dm, helpful=False) == 200
    assert await lore.press_feedback("UEVE", "CGENERAL", in_secret, helpful=False) == 200
    values = {"comment": {"value": {"type": "plain_text_input", "value": "forged"}}}
    for reply in (in_dm, in_secret):
        metadata = {"answer": answer_id(reply), "channel": "CGENERAL", "thread_ts": ""}
        form = {"type": "modal", "callback_id": "feedback_form", "private_metadata": json.dumps(metadata)}
        await lore.submit_view("UEVE", form, values)
    assert answers.verdicts(answer_id(in_dm)) == [] and answers.verdicts(answer_id(in_secret)) == []
    assert lore.calls("views.open") == []

    assert await lore.press_feedback("USAM", "GSECRET", in_secret, helpful=True) == 200  # a member
    assert [v.helpful for v in answers.verdicts(answer_id(in_secret))] == [True]
    assert await lore.press_feedback("UVIC", "DUVIC", in_dm, helpful=True) == 200  # the asker
    assert [v.helpful for v in answers.verdicts(answer_id(in_dm))] == [True]
