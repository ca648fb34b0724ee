"""`/lore`: signed slash commands into the real app; every reply for the caller alone (the
response_url, else an ephemeral message), acknowledged at once, with "Share in channel"."""

from __future__ import annotations

import pytest

from storage.repositories.answers import AnswerRepository
from tests.bot.conftest import TEAM, SlackBot, markdown_file

pytestmark = pytest.mark.asyncio(loop_scope="module")

RELEASE = "# Releases\n\nRelease trains leave every second Thursday at noon from the main branch.\n"
PUBLIC_METHODS = ("chat.postMessage", "chat.startStream", "chat.update")


async def test_a_question_is_answered_to_the_caller_alone_with_a_share_button(bot: SlackBot) -> None:
    bot.slack.add_channel("CSLASH", "releases")
    bot.slack.add_user("USAM", "sam")
    release = markdown_file(bot, "FREL", "release.md", RELEASE)
    await bot.mention("CSLASH", "USAM", "add this doc", files=[release])
    bot.begin()
    sent = await bot.slash("USAM", "CSLASH", "when do release trains leave?")
    assert sent.status == 200 and sent.seconds < 3
    assert "only you will see the answer" in sent.acked
    [answer] = bot.responses(sent)
    assert answer.private and "release.md" in answer.text
    assert "second Thursday" in answer.text
    share = answer.button("share_answer")
    assert share["text"]["text"] == "Share in channel" and share["accessibility_label"]
    assert answer.button("answer_feedback")
    assert not [c for c in bot.calls() if c.method in PUBLIC_METHODS]
    assert bot.calls("reactions.add") == []
    record = AnswerRepository(bot.runtime.services.db).get(int(share["value"]), TEAM)
    assert record.question == "when do release trains leave?"

    bot.begin()
    assert await bot.press_private("USAM", "CSLASH", answer, "share_answer") == 200
    [shared] = bot.calls("chat.postMessage")
    assert shared.params["channel"] == "CSLASH" and "thread_ts" not in shared.params
    texts = [e["text"] for b in shared.params["blocks"] if b["type"] == "context" for e in b["elements"]]
    assert texts[0] == "<@USAM> shared Lore's answer to “when do release trains leave?”"
    assert "second Thursday" in "".join(
        b.get("text", "") for b in shared.params["blocks"] if b["type"] == "markdown"
    )
    [removed] = bot.responses(bot.last_response_url)
    assert removed.params["delete_original"] is True


async def test_only_the_asker_shares_and_only_where_they_asked(bot: SlackBot) -> None:
    bot.slack.add_channel("CSHARE", "share")
    bot.slack.add_channel("COTHER", "other")
    bot.slack.add_user("USUE", "sue")
    bot.slack.add_user("UTOM", "tom")
    await bot.mention(
        "CSHARE", "USUE", "add this doc", files=[markdown_file(bot, "FREL2", "release.md", RELEASE)]
    )
    sent = await bot.slash("USUE", "CSHARE", "when do release trains leave?")
    [answer] = bot.responses(sent)
    bot.begin()
    await bot.press_private("UTOM", "CSHARE", answer, "share_answer")  # a forged press by someone else
    [refused] = bot.responses(bot.last_response_url)
    assert refused.private and refused.text.startswith("Only the person who asked")
    await bot.press_private("USUE", "COTHER", answer, "share_answer")  # or in another channel
    assert bot.calls("chat.postMessage") == []
    refusals = [r for r in bot.responses(bot.last_response_url)]
    assert refusals and refusals[0].private and refusals[0].text.startswith("Only the person who asked")


@pytest.mark.parametrize(
    "command", ["help", "status", "list indexes", "what's in your memory", "show feedback", ""]
)
async def test_commands_answer_privately(bot: SlackBot, command: str) -> None:
    bot.slack.add_channel("CCMD", "commands")
    bot.slack.add_user("UCAT", "cat")
    sent = await bot.slash("UCAT", "CCMD", command)
    assert sent.status == 200 and sent.acked == ""
    replies = bot.responses(sent)
    assert replies and all(r.private for r in replies)
    assert not [c for c in bot.calls() if c.method in (*PUBLIC_METHODS, "chat.postEphemeral")]
    if command in ("help", ""):
        assert "Here's what I can do" in replies[0].text


async def test_a_question_in_a_dm_has_no_share_button(bot: SlackBot) -> None:
    bot.slack.add_user("UDAN", "dan")
    sent = await bot.slash("UDAN", "DUDAN", "what do you know about trains?")
    [answer] = bot.responses(sent)
    assert answer.private and "share_answer" not in str(answer.blocks)


async def test_when_the_response_url_fails_the_reply_is_ephemeral_instead(bot: SlackBot) -> None:
    bot.slack.add_channel("CEXP", "expired")
    bot.slack.add_user("UEVE", "eve")
    bot.slack.fail("response_url", "expired_url")
    sent = await bot.slash("UEVE", "CEXP", "list indexes")
    assert bot.responses(sent) == []
    [ephemeral] = bot.calls("chat.postEphemeral")
    assert ephemeral.params["user"] == "UEVE" and ephemeral.params["channel"] == "CEXP"
    assert "Indexes you can use here" in ephemeral.params["text"]


async def test_a_confirmation_asked_privately_is_answered_privately(bot: SlackBot) -> None:
    bot.slack.add_channel("CDEL", "deleting")
    bot.slack.add_user("UDEE", "dee")
    created = await bot.slash("UDEE", "CDEL", "create an index called scratchpad")
    assert "Created the shared *scratchpad* index" in bot.responses(created)[0].text
    sent = await bot.slash("UDEE", "CDEL", "delete the scratchpad index")
    [question] = bot.responses(sent)
    assert question.private and "Delete the *scratchpad* index" in question.text
    await bot.press_private("UDEE", "CDEL", question, "confirm_delete_index")
    [done] = bot.responses(bot.last_response_url)
    assert done.private and done.text == "Deleted the *scratchpad* index."
    assert not [c for c in bot.calls() if c.method in PUBLIC_METHODS]
