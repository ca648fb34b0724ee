"""The Home tab through signed requests: `app_home_opened` publishes the viewer's Home (their
personal index, what they may use, documents added lately, jobs, their channels with Lore
and their settings, feedback, and for admins connectors and settings); its buttons add a
page, turn indexes on and off in the viewer's channels, and refresh or stop jobs, each
checked by the use cases; the Home is published again with what happened."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import pytest
import pytest_asyncio

from tests.bot.conftest import TEAM, SlackBot, markdown_file, running_bot
from tests.support.site import Site

pytestmark = pytest.mark.asyncio(loop_scope="module")
Json = dict[str, Any]

ENG = "# Engineering\n\nThe build farm compiles every branch within twelve minutes.\n"
SECRET = "# Secret\n\nThe acquisition of Quillfeather closes in June.\n"
ELSEWHERE = "# Elsewhere\n\nThe marketing offsite is in Lisbon.\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def home_bot(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SlackBot]:
    home = tmp_path_factory.mktemp("lore-home")
    async with running_bot(
        home, lore_crawl_allow="127.0.0.1", lore_crawl_delay_seconds=0, lore_crawl_concurrency=1
    ) as bot:
        slack = bot.slack
        slack.add_channel("CENG", "eng")
        slack.add_channel("CSECRET", "secret", is_private=True)
        slack.add_channel("CAWAY", "away", is_private=True)
        slack.add_user("UHAL", "hal")
        slack.add_user("UOLA", "ola")
        slack.add_user("UBOSS", "boss", is_admin=True)
        await bot.mention("CENG", "UHAL", "add this doc", files=[markdown_file(bot, "FENG", "eng.md", ENG)])
        await bot.mention(
            "CSECRET", "UHAL", "add this doc", files=[markdown_file(bot, "FSEC", "secret.md", SECRET)]
        )
        await bot.mention(
            "CAWAY", "UOLA", "add this doc", files=[markdown_file(bot, "FAWAY", "away.md", ELSEWHERE)]
        )
        await bot.dm("UHAL", "create an index called runbooks")
        yield bot


@pytest.fixture
def bot(home_bot: SlackBot) -> SlackBot:
    home_bot.begin()
    return home_bot


async def open_home(bot: SlackBot, user: str) -> Json | None:
    """Open the tab as Slack reports it; the view Lore published (None if it published none)."""
    event = {
        "type": "app_home_opened",
        "user": user,
        "channel": f"D{user}",
        "tab": "home",
        "event_ts": bot.next_ts(),
    }
    assert await bot.deliver(event) == 200
    return last_view(bot, user)


def last_view(bot: SlackBot, user: str) -> Json | None:
    published = [c for c in bot.calls("views.publish") if c.params["user_id"] == user]
    return dict(published[-1].params["view"]) if published else None


def text_of(view: Json) -> str:
    texts = []
    for block in view["blocks"]:
        if "text" in block:
            texts.append(block["text"]["text"])
        texts.extend(f["text"] for f in block.get("fields", []))
        texts.extend(e.get("text", "") for e in block.get("elements", []) if block["type"] == "context")
    return "\n".join(texts)


def element(view: Json, action_id: str, block_id: str | None = None) -> Json:
    for block in view["blocks"]:
        if block_id is not None and block.get("block_id") != block_id:
            continue
        for candidate in [block.get("accessory") or {}, *block.get("elements", [])]:
            if candidate.get("action_id") == action_id:
                return dict(candidate)
    raise AssertionError(f"no {action_id} in {view['blocks']}")


async def press(bot: SlackBot, user: str, action: Json) -> None:
    """A signed `block_actions` payload from the Home tab (a view, no channel)."""
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "lore-test"},
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "container": {"type": "view", "view_id": "VHOME"},
        "trigger_id": f"{bot.next_ts()}.trigger",
        "view": {"id": "VHOME", "type": "home"},
        "actions": [{**action, "action_ts": bot.next_ts()}],
    }
    status, _ = await bot.post(
        urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
    )
    assert status == 200
    await bot.settle()


async def choose(bot: SlackBot, user: str, action_id: str, value: str) -> None:
    await press(
        bot,
        user,
        {
            "type": "static_select",
            "action_id": action_id,
            "block_id": "b",
            "selected_option": {"value": value},
        },
    )


async def test_opening_the_home_tab_publishes_what_the_viewer_may_see(bot: SlackBot) -> None:
    view = await open_home(bot, "UHAL")
    assert view is not None and view["type"] == "home" and len(view["blocks"]) <= 100
    text = text_of(view)
    assert "*Your personal index* (*personal*): 0 documents" in text
    assert "• *runbooks* (shared)" in text and "• *eng* (channel)" in text
    assert "*secret* (channel)" not in text  # a private channel's index is seen from that channel only
    assert "*eng.md* — in *eng*" in text and "*secret.md* — in *secret*" in text  # hal is in both
    assert "away.md" not in text and "#away" not in text  # a channel hal is not in
    assert (
        "*#eng* — searches *eng*; new documents go to *eng*" in text
        and "*#secret* — searches *secret*" in text
    )
    assert "For admins" not in text
    add = element(view, "home_add_url")
    assert add["accessibility_label"]


async def test_an_admin_sees_connectors_and_settings(bot: SlackBot) -> None:
    view = await open_home(bot, "UBOSS")
    assert view is not None
    text = text_of(view)
    assert "For admins" in text and "No connector yet" in text
    assert "*Answers*\nquoted from the documents" in text and "*Stored credentials*" in text


async def test_indexes_are_turned_on_and_off_in_the_viewers_own_channels_only(bot: SlackBot) -> None:
    view = await open_home(bot, "UHAL")
    assert view is not None
    enable = element(view, "home_enable", "channel:CENG")
    [runbooks] = [o["value"] for o in enable["options"] if o["text"]["text"] == "runbooks"]
    index_id = runbooks.split(":")[1]
    await choose(bot, "UHAL", "home_enable", runbooks)
    view = last_view(bot, "UHAL")
    assert view is not None and "#eng now searches the *runbooks* index." in text_of(view)
    assert "*#eng* — searches *eng* and *runbooks*" in text_of(view)

    await choose(bot, "UHAL", "home_enable", f"CAWAY:{index_id}")  # forged: hal is not in #away
    view = last_view(bot, "UHAL")
    assert view is not None and "only for channels you are in" in text_of(view)
    away = bot.runtime.services.directory.channel_conversations(TEAM, ["CAWAY"])[0][1]
    assert [i.name for i in bot.runtime.services.indexes.enabled(away.id)] == ["away"]

    await choose(bot, "UHAL", "home_disable", runbooks)
    view = last_view(bot, "UHAL")
    assert view is not None and "#eng no longer searches the *runbooks* index." in text_of(view)


async def test_a_page_added_from_the_home_lands_in_the_chosen_index(bot: SlackBot) -> None:
    view = await open_home(bot, "UHAL")
    assert view is not None
    await press(bot, "UHAL", {"type": "button", "action_id": "home_add_url", "value": "home_add_url"})
    [opened] = bot.calls("views.open")
    form = opened.params["view"]
    options = form["blocks"][1]["element"]["options"]
    labels = [o["text"]["text"] for o in options]
    assert labels[0] == "personal (your personal index)" and "#eng (the channel's index)" in labels
    assert "runbooks (shared)" in labels and not any("away" in label for label in labels)

    status, body = await bot.submit_view(
        "UHAL", form, {"url": {"value": {"type": "url_text_input", "value": "not a url"}}}
    )
    assert status == 200 and json.loads(body)["response_action"] == "errors"

    async with Site(pages=2) as site:
        values = {
            "url": {"value": {"type": "url_text_input", "value": site.url("/docs/page-1")}},
            "index": {"value": {"type": "static_select", "selected_option": options[0]}},
            "site": {"value": {"type": "checkboxes", "selected_options": []}},
        }
        await bot.submit_view("UHAL", form, values)
    view = last_view(bot, "UHAL")
    assert view is not None
    text = text_of(view)
    assert text.splitlines()[1].startswith("Added *") and "to the *personal* index (1 passage)" in text
    assert "*Your personal index* (*personal*): 1 document" in text


async def test_a_crawl_shows_its_progress_and_can_be_stopped_and_refreshed(bot: SlackBot) -> None:
    view = await open_home(bot, "UHAL")
    assert view is not None
    await press(bot, "UHAL", {"type": "button", "action_id": "home_add_url", "value": "home_add_url"})
    form = bot.calls("views.open")[-1].params["view"]
    options = form["blocks"][1]["element"]["options"]
    [eng] = [o for o in options if o["text"]["text"].startswith("#eng")]
    async with Site(pages=30, slow_seconds=5.0) as site:
        values = {
            "url": {"value": {"type": "url_text_input", "value": site.url("/docs/")}},
            "index": {"value": {"type": "static_select", "selected_option": eng}},
            "site": {"value": {"type": "checkboxes", "selected_options": [{"value": "site"}]}},
        }
        await bot.submit_view("UHAL", form, values)
        view = last_view(bot, "UHAL")
        assert view is not None and "Crawling *127.0.0.1/docs* into the *eng* index" in text_of(view)
        stop = element(view, "home_job_stop")
        assert element(view, "home_job_refresh")["value"] == stop["value"]
        job_id = int(stop["value"])

        await open_home(bot, "UOLA")  # ola is not in #eng: she sees no buttons for its crawl
        ola = last_view(bot, "UOLA")
        assert ola is not None and "home_job_stop" not in json.dumps(ola)

        await press(bot, "UHAL", {"type": "button", "action_id": "home_job_stop", "value": str(job_id)})
        view = last_view(bot, "UHAL")
        assert view is not None and f"Stopping the indexing of *job {job_id}*" in text_of(view)
        jobs = bot.runtime.services.jobs
        for _ in range(200):
            if (await jobs.get_indexing_job_status(job_id)).finished:
                break
            await asyncio.sleep(0.05)
        assert (await jobs.get_indexing_job_status(job_id)).state.value == "cancelled"

        await press(bot, "UHAL", {"type": "button", "action_id": "home_job_refresh", "value": str(job_id)})
        view = last_view(bot, "UHAL")
        assert view is not None and "Refreshing *127.0.0.1/docs*" in text_of(view)
        running = element(view, "home_job_stop")
        assert int(running["value"]) != job_id
        await press(bot, "UHAL", {"type": "button", "action_id": "home_job_stop", "value": running["value"]})
        for _ in range(200):
            if (await jobs.get_indexing_job_status(int(running["value"]))).finished:
                break
            await asyncio.sleep(0.05)


async def test_the_feedback_section_shows_what_did_not_help(bot: SlackBot) -> None:
    asked = await bot.mention("CENG", "UHAL", "how fast is the build farm?")
    [answer] = bot.replies("CENG", asked)
    await bot.press_feedback("UOLA", "CENG", answer, helpful=False)
    form = bot.calls("views.open")[-1].params["view"]
    values = {
        "reason": {"value": {"type": "radio_buttons", "selected_option": {"value": "wrong"}}},
        "comment": {"value": {"type": "plain_text_input", "value": "It takes twenty minutes now."}},
    }
    await bot.submit_view("UOLA", form, values)
    view = await open_home(bot, "UHAL")
    assert view is not None
    text = text_of(view)
    assert "Feedback on the indexes you look after" in text
    assert "*eng*: 1 unhelpful answer" in text and "“It takes twenty minutes now.”" in text
