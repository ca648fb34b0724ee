"""Conversations that flow, through signed requests into the real Bolt app: follow-ups in
Lore's threads without a mention (and the ones it leaves alone), the per-channel
"require mentions" setting, the thread status and the agent surfaces (suggested prompts,
thread titles, the channel in view searched from a DM), and what notifications say.
"""

from __future__ import annotations

import pytest

from tests.bot.conftest import BOT, TEAM, SlackBot, markdown_file, only_reply
from tests.bot.slack_payloads import edit, message_event, say
from tests.fakes.openai_server import Reply as LLMReply

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEPLOY = "# Deploying\n\nWe deploy the billing service every Tuesday with the blue-green pipeline.\n"
ROTA = "# Rota\n\nThe release captain for November is Priya; she signs off every hotfix.\n"
LAUNCH = "# Launch\n\nProject Heron launches from the Andøya spaceport in April.\n"


async def _answered_thread(bot: SlackBot, channel: str, user: str, doc: tuple[str, str, str]) -> str:
    """A channel with a document, and a thread in which Lore answered a question; its ts."""
    await bot.mention(channel, user, "add this doc", files=[markdown_file(bot, *doc)])
    asked = await bot.mention(channel, user, "when do we deploy the billing service?")
    assert "deploy.md" in bot.said(channel, asked)
    return asked


async def test_a_follow_up_without_a_mention_in_lores_thread_is_answered_there(bot: SlackBot) -> None:
    bot.slack.add_channel("CFOLLOW", "follow")
    bot.slack.add_user("UFAE", "fae")
    thread = await _answered_thread(bot, "CFOLLOW", "UFAE", ("FFOLLOW", "deploy.md", DEPLOY))

    bot.begin()
    follow = await say(bot, "CFOLLOW", "UFAE", "which pipeline do we use for it?", thread_ts=thread)
    answers = bot.replies("CFOLLOW", thread)
    assert len(answers) == 1 and "blue-green pipeline" in answers[0].text
    [status] = bot.calls("assistant.threads.setStatus")
    assert status.params["thread_ts"] == thread
    assert bot.calls("chat.postMessage")[0].params["thread_ts"] == thread
    assert follow != thread


async def test_messages_lore_should_leave_alone_get_nothing(bot: SlackBot) -> None:
    bot.slack.add_channel("CALONE", "alone")
    bot.slack.add_user("UGUS", "gus")
    bot.slack.add_user("UHAL", "hal")
    thread = await _answered_thread(bot, "CALONE", "UGUS", ("FALONE", "deploy.md", DEPLOY))
    other = bot.next_ts()
    bot.slack.add_message("CALONE", other, "lunch plans?", "UHAL")

    bot.begin()
    await say(bot, "CALONE", "UGUS", "anyone free on friday?", thread_ts=other)  # not Lore's thread
    await say(bot, "CALONE", "UGUS", "a new topic, not in a thread")
    await say(bot, "CALONE", "UGUS", "<@UHAL> can you check the pipeline?", thread_ts=thread)
    await say(bot, "CALONE", "UGUS", "thanks!", thread_ts=thread)
    await say(bot, "CALONE", "UGUS", ":+1:", thread_ts=thread)
    bot_post = message_event(bot, "CALONE", "UGUS", "deploy finished", thread_ts=thread)
    assert await bot.deliver({**bot_post, "subtype": "bot_message", "bot_id": "B0777"}) == 200
    await edit(bot, "CALONE", thread, "when do we deploy the billing service, again?")
    assert not [c for c in bot.calls() if c.method.startswith(("chat.", "assistant.", "reactions."))]
    assert [c.params["ts"] for c in bot.calls("conversations.replies")] == [other]  # asked once

    bot.begin()  # a "no" is remembered: the next message in that thread costs no call
    await say(bot, "CALONE", "UHAL", "sure, friday works", thread_ts=other)
    assert bot.calls() == []


async def test_a_mention_in_a_thread_is_answered_once(bot: SlackBot) -> None:
    bot.slack.add_channel("CONCE", "once")
    bot.slack.add_user("UIDA", "ida")
    thread = await _answered_thread(bot, "CONCE", "UIDA", ("FONCE", "deploy.md", DEPLOY))

    bot.begin()
    mention = bot.mention_event("CONCE", "UIDA", "and which pipeline?", thread_ts=thread)
    as_message = {**mention, "type": "message", "channel_type": "channel"}
    assert await bot.deliver(as_message, settle=False) == 200
    assert await bot.deliver(mention) == 200
    assert len(bot.replies("CONCE", thread)) == 1


async def test_require_mentions_is_an_admins_setting_that_stops_follow_ups(bot: SlackBot) -> None:
    bot.slack.add_channel("CQUIET", "quiet")
    bot.slack.add_user("UJON", "jon")
    bot.slack.add_user("UKIM", "kim", is_admin=True)
    thread = await _answered_thread(bot, "CQUIET", "UJON", ("FQUIET", "deploy.md", DEPLOY))

    refused = await bot.mention("CQUIET", "UJON", "require mentions here")
    assert only_reply(bot, "CQUIET", refused).text.startswith("Only workspace admins change how Lore answers")
    done = await bot.mention("CQUIET", "UKIM", "require mentions here")
    assert only_reply(bot, "CQUIET", done).text == (
        "From now on I answer here only when mentioned, also in threads I've answered in."
    )
    bot.begin()
    await say(bot, "CQUIET", "UJON", "and which pipeline is it?", thread_ts=thread)
    assert bot.replies("CQUIET", thread) == []
    asked = await bot.mention("CQUIET", "UJON", "and which pipeline is it?", thread_ts=thread)
    assert "blue-green" in bot.said("CQUIET", thread) and asked

    await bot.mention("CQUIET", "UKIM", "answer follow-ups without a mention")
    bot.begin()
    await say(bot, "CQUIET", "UJON", "which day do we deploy billing again?", thread_ts=thread)
    assert "Tuesday" in bot.said("CQUIET", thread)


async def test_a_follow_up_carries_the_thread_to_the_model(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CCHAT", "chat")
    gpt.slack.add_user("ULEO", "leo")
    gpt.llm.enqueue(
        LLMReply("Dana approves billing deploys."),
        LLMReply("Who approves billing deploys on weekends?"),  # the follow-up, made standalone
        LLMReply("On weekends Sam does."),
    )
    first = await gpt.mention("CCHAT", "ULEO", "who approves billing deploys?")

    gpt.begin()
    await say(gpt, "CCHAT", "ULEO", "and on weekends?", thread_ts=first)
    rewrite, request = gpt.chat_requests
    assert "and on weekends?" in str(rewrite.messages) and "who approves billing deploys?" in str(
        rewrite.messages
    )
    assert request.messages[1:] == [
        {"role": "user", "content": "who approves billing deploys?"},
        {"role": "assistant", "content": "Dana approves billing deploys."},
        {"role": "user", "content": "and on weekends?"},
    ]
    assert [a.markdown for a in gpt.replies("CCHAT", first)] == ["On weekends Sam does."]


async def test_a_group_dm_follow_up_is_answered(bot: SlackBot) -> None:
    bot.slack.add_channel("GMPIM", "mpdm-ann--bo-1", is_mpim=True)
    bot.slack.add_user("UANN", "ann")
    thread = await _answered_thread(bot, "GMPIM", "UANN", ("FMPIM", "deploy.md", DEPLOY))
    bot.begin()
    await say(bot, "GMPIM", "UANN", "what day do we deploy billing?", thread_ts=thread, channel_type="mpim")
    assert "Tuesday" in bot.said("GMPIM", thread)


# --- the agent surfaces -----------------------------------------------------------------


async def test_opening_the_messages_tab_suggests_prompts(bot: SlackBot) -> None:
    bot.slack.add_user("UMAE", "mae")
    opened = {
        "type": "app_home_opened",
        "user": "UMAE",
        "channel": "DUMAE",
        "tab": "messages",
        "event_ts": bot.next_ts(),
    }
    assert await bot.deliver(opened) == 200
    [prompts] = bot.calls("assistant.threads.setSuggestedPrompts")
    assert prompts.ok and prompts.params["channel_id"] == "DUMAE" and "thread_ts" not in prompts.params
    assert {"title": "What can you do?", "message": "help"} in prompts.params["prompts"]

    bot.begin()
    started = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": "UMAE",
            "channel_id": "DUMAE",
            "thread_ts": bot.next_ts(),
            "context": {"channel_id": "CFOLLOW", "team_id": TEAM},
        },
        "event_ts": bot.next_ts(),
    }
    assert await bot.deliver(started) == 200
    [prompts] = bot.calls("assistant.threads.setSuggestedPrompts")
    assert prompts.params["thread_ts"] == started["assistant_thread"]["thread_ts"]


async def test_a_dm_question_is_titled_and_searches_the_channel_in_view(bot: SlackBot) -> None:
    bot.slack.add_channel("CVIEW", "launches")
    bot.slack.add_channel("GHIDDEN", "hidden", is_private=True)
    bot.slack.add_user("UNED", "ned")
    await bot.mention(
        "CVIEW", "UNED", "add this doc", files=[markdown_file(bot, "FVIEW", "launch.md", LAUNCH)]
    )
    await bot.mention("GHIDDEN", "UNED", "add this doc", files=[markdown_file(bot, "FHID", "rota.md", ROTA)])
    question = "where does project heron launch from?"
    before = await bot.dm("UNED", question)
    assert "launch.md" not in bot.said("DUNED", before)  # the control: nothing in view

    bot.begin()
    in_view = {
        "type": "app_context_changed",
        "user": "UNED",
        "context": {"entities": [{"type": "slack#/types/channel_id", "value": "CVIEW", "team_id": TEAM}]},
        "event_ts": bot.next_ts(),
    }
    assert await bot.deliver(in_view) == 200
    asked = await bot.dm("UNED", question)
    assert "launch.md" in bot.said("DUNED", asked) and "Andøya" in bot.said("DUNED", asked)
    [title] = bot.calls("assistant.threads.setTitle")
    assert title.params == {"channel_id": "DUNED", "thread_ts": asked, "title": question}
    assert bot.methods().index("assistant.threads.setStatus") < bot.methods().index(
        "assistant.threads.setTitle"
    )

    bot.begin()  # a private channel in view is never searched from a DM
    hidden = {**in_view, "context": {"entities": [{"type": "slack#/types/channel_id", "value": "GHIDDEN"}]}}
    assert await bot.deliver(hidden) == 200
    asked = await bot.dm("UNED", "who is the release captain for november?")
    assert "rota.md" not in bot.said("DUNED", asked) and "Priya" not in bot.said("DUNED", asked)


async def test_the_notification_text_of_a_posted_generated_answer_is_the_answer(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CNOTE", "notes")
    gpt.slack.add_user("UOLA", "ola")
    await gpt.mention(
        "CNOTE", "UOLA", "add this doc", files=[markdown_file(gpt, "FNOTE", "deploy.md", DEPLOY)]
    )
    gpt.begin()
    gpt.slack.fail("chat.startStream", "not_allowed_token_type")
    gpt.llm.enqueue(LLMReply("Billing deploys go out on Tuesdays [1]."))
    await gpt.mention("CNOTE", "UOLA", "when do billing deploys go out?")
    [post] = [c for c in gpt.calls("chat.postMessage") if c.params.get("blocks")]
    assert post.params["text"] == "Billing deploys go out on Tuesdays [1].\nSources: deploy.md"
    feedback = [e for b in post.params["blocks"] if b["type"] == "context_actions" for e in b["elements"]]
    buttons = [f[side] for f in feedback for side in ("positive_button", "negative_button")]
    assert buttons and all(e["accessibility_label"] for e in buttons)


async def test_a_bot_mention_of_lore_in_a_dm_thread_is_not_a_follow_up(bot: SlackBot) -> None:
    bot.slack.add_user("UPIA", "pia")
    asked = await bot.dm("UPIA", "help")
    bot.begin()
    event = message_event(bot, "DUPIA", BOT, "Here's what I can do", thread_ts=asked, channel_type="im")
    assert await bot.deliver({**event, "bot_id": "B0001"}) == 200
    assert bot.calls() == []
