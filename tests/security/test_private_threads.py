"""Issue 35, finding 4: "remember this thread" and the message shortcut copied a private
channel's thread into the conversation's default index, a shared one the whole workspace
reads, without a word. Now a private channel's thread is kept only in that channel's own
index (saying so), the shortcut's form offers only that index, and a forged choice of
another is refused.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from storage.records import IndexRef
from tests.bot.conftest import TEAM
from tests.bot.slack_payloads import press_ephemeral, shortcut, submit_view
from tests.security.conftest import Lore, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-private-threads")) as running:
        slack = running.slack
        slack.add_user("UIVY", "ivy")
        slack.add_user("UOLA", "ola")
        slack.add_channel("CGENERAL", "general")
        slack.add_channel("GBOARD", "board", is_private=True)
        await running.mention("CGENERAL", "UOLA", "create an index called handbook")
        await running.mention("GBOARD", "UIVY", "enable the handbook index")
        await running.mention("GBOARD", "UIVY", "make handbook the default")
        yield running


def index(lore: Lore, name: str) -> IndexRef:
    return next(i for i in lore.runtime.services.indexes.list_for_tenant(TEAM) if i.name == name)


def texts_in(lore: Lore, name: str) -> str:
    services = lore.runtime.services
    documents = services.documents.list_ready(index(lore, name).id)
    return json.dumps(services.documents.opening_text([d.id for d in documents]))


async def test_remember_this_thread_keeps_a_private_thread_in_its_own_index(lore: Lore) -> None:
    parent = lore.next_ts()
    lore.slack.add_message("GBOARD", parent, "We will close the Lyon office in June.", "UIVY")
    lore.slack.add_message("GBOARD", lore.next_ts(), "Codename for it: MARMOT.", "UOLA", thread_ts=parent)
    lore.begin()
    ts = await lore.mention("GBOARD", "UIVY", "remember this thread", thread_ts=parent)
    said = lore.said("GBOARD", parent) + lore.said("GBOARD", ts)
    assert "private" in said and "*board*" in said, said
    assert "MARMOT" not in texts_in(lore, "handbook")
    assert "MARMOT" in texts_in(lore, "board")
    asked = await lore.mention("CGENERAL", "UOLA", "what is the codename for closing the Lyon office?")
    assert "MARMOT" not in lore.said("CGENERAL", asked)


async def test_the_shortcut_keeps_a_private_thread_in_its_own_index(lore: Lore) -> None:
    ts = lore.next_ts()
    message = lore.slack.add_message("GBOARD", ts, "Board bonus pool is 80k, codename OTTER.", "UIVY")
    lore.begin()
    assert await shortcut(lore, "add_to_memory", "UIVY", "GBOARD", message) == 200
    [note] = lore.calls("chat.postEphemeral")
    assert "private" in note.params["text"] and "*board*" in note.params["text"]
    assert "OTTER" not in texts_in(lore, "handbook") and "OTTER" in texts_in(lore, "board")

    [button] = [e for b in note.params["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert await press_ephemeral(lore, "UIVY", "GBOARD", button) == 200
    [opened] = lore.calls("views.open")
    options = opened.params["view"]["blocks"][0]["element"]["options"]
    assert [o["text"]["text"].split(" (")[0] for o in options] == ["board"]

    handbook = {"index": {"value": {"type": "static_select",
                                    "selected_option": {"value": str(index(lore, "handbook").id)}}}}  # fmt: skip
    lore.begin()
    assert await submit_view(lore, "UIVY", opened.params["view"], handbook) == 200
    [refused] = lore.calls("chat.postEphemeral")
    assert "private channel" in refused.params["text"]
    assert "OTTER" not in texts_in(lore, "handbook")
