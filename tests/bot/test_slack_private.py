"""What Lore says to the asker alone: listings, errors and refusals triggered by a mention
are ephemeral in the thread (a failed question leaves a one-line public note), in a DM they
are simply said; "show feedback" shows an index's keepers what did not help."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.conftest import SlackBot, markdown_file, only_reply, running_bot

pytestmark = pytest.mark.asyncio(loop_scope="module")

GUIDE = "# Style guide\n\nHeadlines use sentence case and never end with a full stop.\n"


async def test_listings_errors_and_refusals_go_to_the_asker_alone(bot: SlackBot) -> None:
    bot.slack.add_channel("CPRIV1", "quiet")
    bot.slack.add_user("UQUI", "quinn")
    await bot.mention(
        "CPRIV1", "UQUI", "add this doc", files=[markdown_file(bot, "FSTYLE", "style.md", GUIDE)]
    )
    for said in (
        "list indexes",
        "what's in your memory",
        "status",
        "help",
        "show feedback",
        "enable the nowhere index",
        "use llm only mode here",
        "",
    ):
        bot.begin()
        asked = await bot.mention("CPRIV1", "UQUI", said)
        reply = only_reply(bot, "CPRIV1", asked)
        assert reply.private, (said, reply.method)
        [ephemeral] = bot.calls("chat.postEphemeral")
        assert ephemeral.params["user"] == "UQUI" and ephemeral.params["channel"] == "CPRIV1"
        assert "thread_ts" not in ephemeral.params  # no thread yet: Slack would hide it there
        assert bot.calls("chat.postMessage") == [], said
    bot.begin()  # asked inside a thread, the private reply is in that thread
    parent = await bot.mention("CPRIV1", "UQUI", "enable the quiet index")
    asked = await bot.mention("CPRIV1", "UQUI", "list indexes", thread_ts=parent)
    [ephemeral] = bot.calls("chat.postEphemeral")
    assert ephemeral.params["thread_ts"] == parent and ephemeral.params["user"] == "UQUI"
    bot.begin()
    asked = await bot.mention("CPRIV1", "UQUI", "enable the quiet index")  # news for the channel
    assert not only_reply(bot, "CPRIV1", asked).private


async def test_a_question_that_fails_tells_the_asker_why_and_leaves_the_thread_a_note(tmp_path: Path) -> None:
    async with running_bot(tmp_path, llm_context_window=1024) as small:  # a question can't fit
        small.slack.add_channel("CFAIL", "fails")
        small.slack.add_user("UFRED", "fred")
        asked = await small.mention("CFAIL", "UFRED", "why " * 1500 + "?")
        private, public = small.replies("CFAIL", asked)
    assert private.private and "longer than the model's 1024-token window" in private.text
    assert not public.private and public.text == "I couldn't answer this one; I've told the asker why."


async def test_in_a_dm_what_is_private_is_simply_said(bot: SlackBot) -> None:
    bot.slack.add_user("UDMO", "demo")
    asked = await bot.dm("UDMO", "list indexes")
    reply = only_reply(bot, "DUDMO", asked)
    assert reply.method == "chat.postMessage" and "personal" in reply.text
    assert bot.calls("chat.postEphemeral") == []


async def test_when_slack_refuses_the_ephemeral_reply_it_goes_to_the_askers_dm(bot: SlackBot) -> None:
    bot.slack.add_channel("CLEFT", "left")
    bot.slack.add_user("ULEFT", "lefty")
    bot.slack.fail("chat.postEphemeral", "user_not_in_channel")
    await bot.mention("CLEFT", "ULEFT", "list indexes")
    [dm] = bot.calls("chat.postMessage")
    assert dm.params["channel"] == "ULEFT" and "Indexes you can use here" in dm.params["text"]


async def test_show_feedback_lists_what_did_not_help_for_the_channel_members(bot: SlackBot) -> None:
    bot.slack.add_channel("CREV", "review")
    bot.slack.add_user("UREX", "rex")
    bot.slack.add_user("URAY", "ray")
    await bot.mention("CREV", "UREX", "add this doc", files=[markdown_file(bot, "FREV", "style.md", GUIDE)])
    asked = await bot.mention("CREV", "UREX", "how do headlines end?")
    answer = only_reply(bot, "CREV", asked)
    await bot.press_feedback("URAY", "CREV", answer, helpful=False)
    [opened] = bot.calls("views.open")
    values = {
        "reason": {"value": {"type": "radio_buttons", "selected_option": {"value": "missing source"}}},
        "comment": {"value": {"type": "plain_text_input", "value": "Link the brand book."}},
    }
    await bot.submit_view("URAY", opened.params["view"], values)
    unanswered = await bot.mention("CREV", "UREX", "zyxxy quorble frimp?")
    assert bot.replies("CREV", unanswered)

    bot.begin()
    shown = await bot.mention("CREV", "UREX", "show feedback")
    text = only_reply(bot, "CREV", shown).text
    assert "*review* — 1 unhelpful answer" in text
    assert "“how do headlines end?”" in text and "cited *style.md*" in text
    assert "missing source: “Link the brand book.”" in text

    bot.begin()  # elsewhere, the review index is not theirs to review
    bot.slack.add_channel("CELSE", "elsewhere")
    shown = await bot.mention("CELSE", "UREX", "show feedback for the review index")
    assert "review" in only_reply(bot, "CELSE", shown).text and only_reply(bot, "CELSE", shown).private
    assert "Link the brand book" not in only_reply(bot, "CELSE", shown).text
