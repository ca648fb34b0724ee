"""Slack's own knowledge, through signed requests into the real Bolt app: "remember this
thread" (saved with its permalink, cited by it, updated when saved again), the "Add to
Lore's memory" message shortcut (private confirmation, another index through a form), and
"learn this channel" (history read by an indexing job with progress, kept fresh by message
events, edits and deletions, forgotten on request; a private channel's history only in its
own index).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.slack.shortcut import FORM, PICK, SHORTCUT
from tests.bot.conftest import SlackBot, markdown_file, only_reply, running_bot
from tests.bot.slack_payloads import delete, edit, press_ephemeral, say, shortcut, submit_view
from tests.security.test_places import shared_channel_mention

pytestmark = pytest.mark.asyncio(loop_scope="module")
PERMALINK = re.compile(r"https://lore-test\.slack\.com/archives/(\w+)/p(\d+)")
ROTA = "# On-call rota\n\nThe on-call engineer carries the pager for one week, Monday to Monday.\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def memory_bot(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SlackBot]:
    async with running_bot(
        tmp_path_factory.mktemp("lore-memory"), lore_slack_freshen_seconds=0, lore_progress_seconds=0.05
    ) as bot:
        yield bot


@pytest.fixture
def bot(memory_bot: SlackBot) -> SlackBot:
    memory_bot.begin()
    return memory_bot


def thread_in(bot: SlackBot, channel: str, said: list[tuple[str, str]]) -> str:
    """A thread of (user, text) messages in the fake; its ts."""
    parent = bot.next_ts()
    bot.slack.add_message(channel, parent, said[0][1], said[0][0])
    for user, text in said[1:]:
        bot.slack.add_message(channel, bot.next_ts(), text, user, thread_ts=parent)
    return parent


def permalink(channel: str, ts: str) -> str:
    return f"https://lore-test.slack.com/archives/{channel}/p{ts.replace('.', '')}"


# --- remember this thread ----------------------------------------------------------------


async def test_remember_this_thread_saves_it_with_its_permalink_and_answers_cite_it(bot: SlackBot) -> None:
    bot.slack.add_channel("CINC", "incidents")
    bot.slack.add_user("UAMY", "amy")
    bot.slack.add_user("UBEN", "ben")
    thread = thread_in(
        bot,
        "CINC",
        [
            ("UAMY", "The payments outage on Friday: what was the root cause?"),
            ("UBEN", "An expired TLS certificate on the <@UAMY> gateway, renewed at 14:05 UTC."),
            ("UAMY", "Action item: the certificate renewal moves to cert-manager by March."),
        ],
    )
    asked = await bot.mention("CINC", "UBEN", "remember this thread", thread_ts=thread)
    reply = only_reply(bot, "CINC", thread)
    assert reply.text == (
        "Saved this thread to the *incidents* index: 3 messages from amy and ben (1 passage). "
        "Ask me about it any time; I'll link back here."
    )
    [link] = bot.calls("chat.getPermalink")
    assert link.params == {"channel": "CINC", "message_ts": thread}
    assert asked not in json_of(bot)  # the request itself is not saved

    bot.begin()
    question = await bot.mention("CINC", "UBEN", "which expired certificate took the gateway down?")
    answer = only_reply(bot, "CINC", question).text
    title = "Thread in #incidents: The payments outage on Friday: what was the root cause?"
    assert f"From <{permalink('CINC', thread)}|{title}>:" in answer
    assert f"Sources: [1] <{permalink('CINC', thread)}|{title}>" in answer
    assert "An expired TLS certificate on the @amy gateway, renewed at 14:05 UTC." in answer

    bot.begin()  # saving again after the thread grew updates the one document
    bot.slack.add_message(
        "CINC", bot.next_ts(), "Postmortem is published in the wiki.", "UBEN", thread_ts=thread
    )
    await bot.mention("CINC", "UAMY", "remember this thread", thread_ts=thread)
    assert bot.replies("CINC", thread)[-1].text.startswith(
        "Updated this thread in the *incidents* index: now 4 messages from amy and ben"
    )
    await bot.mention("CINC", "UAMY", "please remember this conversation", thread_ts=thread)
    assert bot.replies("CINC", thread)[-1].text == (
        "This thread is already in the *incidents* index as it is now; nothing to do."
    )
    listed = await bot.mention("CINC", "UAMY", "what's in your memory?")
    assert only_reply(bot, "CINC", listed).text.count("Thread in #incidents") == 1


def json_of(bot: SlackBot) -> str:
    """Every document text Lore stored, as one string (to check what was saved)."""
    services = bot.runtime.services
    documents = services.documents.ready_in([i.id for i in services.indexes.list_all()])
    return "\n".join(services.documents.opening_text([d.id for d in documents]).values())


async def test_remember_this_in_a_thread_saves_the_thread_and_its_files(bot: SlackBot) -> None:
    bot.slack.add_channel("CFILES", "oncall")
    bot.slack.add_user("UCAT", "cat")
    rota = markdown_file(bot, "FROTA", "rota.md", ROTA)
    parent = bot.next_ts()
    bot.slack.add_message("CFILES", parent, "here is the rota for next quarter", "UCAT", files=[rota])
    bot.slack.add_message(
        "CFILES", bot.next_ts(), "swaps go through the #oncall channel", "UCAT", thread_ts=parent
    )
    await bot.mention("CFILES", "UCAT", "remember this", thread_ts=parent)
    reply = only_reply(bot, "CFILES", parent).text.splitlines()
    assert reply[0].startswith("Saved this thread to the *oncall* index: 2 messages from cat")
    assert reply[1] == "Added *rota.md* to the *oncall* index (1 passage). Ask me about it any time."


async def test_remember_this_thread_outside_a_thread_says_how(bot: SlackBot) -> None:
    bot.slack.add_channel("CTOP", "top")
    bot.slack.add_user("UDEE", "dee")
    asked = await bot.mention("CTOP", "UDEE", "remember this thread")
    assert only_reply(bot, "CTOP", asked).text.startswith(
        "Say “remember this thread” as a reply in the thread"
    )


# --- the message shortcut ----------------------------------------------------------------


async def test_the_message_shortcut_saves_a_thread_privately_and_offers_another_index(bot: SlackBot) -> None:
    bot.slack.add_channel("CDESIGN", "design")
    bot.slack.add_user("UEVE", "eve")
    bot.slack.add_user("UFIN", "fin")
    thread = thread_in(
        bot,
        "CDESIGN",
        [
            ("UEVE", "Decision: the mobile app keeps the teal palette."),
            ("UFIN", "Agreed, signed off by brand."),
        ],
    )
    await bot.mention("CDESIGN", "UEVE", "create an index called decisions")
    await bot.mention("CDESIGN", "UEVE", "make design the default")

    bot.begin()
    message = bot.slack.message("CDESIGN", thread) or {}
    assert await shortcut(bot, SHORTCUT, "UEVE", "CDESIGN", message) == 200
    [note] = bot.calls("chat.postEphemeral")
    assert note.params["user"] == "UEVE" and note.params["channel"] == "CDESIGN"
    assert note.params["text"] == (
        "Saved that thread (2 messages) to the *design* index (this channel's index). Only you can see this note."
    )
    assert not bot.calls("chat.postMessage"), "nothing is posted for everyone"
    [button] = [e for b in note.params["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert button["action_id"] == PICK and button["accessibility_label"]

    asked = await bot.mention("CDESIGN", "UFIN", "which palette does the mobile app keep?")
    assert f"<{permalink('CDESIGN', thread)}|Thread in #design" in only_reply(bot, "CDESIGN", asked).text

    bot.begin()
    assert await press_ephemeral(bot, "UEVE", "CDESIGN", button) == 200
    [opened] = bot.calls("views.open")
    view = opened.response["view"]
    assert view["callback_id"] == FORM
    options = view["blocks"][0]["element"]["options"]
    names = [o["text"]["text"] for o in options]
    assert names[0].startswith("design (") and any(n.startswith("decisions (") for n in names)
    assert not any("personal" in n for n in names), "a personal index is never offered in a channel"
    decisions = next(o for o in options if o["text"]["text"].startswith("decisions"))
    chosen = {"index": {"value": {"type": "static_select", "selected_option": decisions}}}
    assert await submit_view(bot, "UEVE", view, chosen) == 200
    [saved] = bot.calls("chat.postEphemeral")
    assert saved.params["text"].startswith("Saved that thread (2 messages) to the *decisions* index")


async def test_the_shortcut_saves_the_message_even_where_lore_cannot_read_the_thread(bot: SlackBot) -> None:
    bot.slack.add_user("UGIA", "gia")
    message = {"type": "message", "user": "UGIA", "text": "The bike shed code is 4417.", "ts": bot.next_ts()}
    assert await shortcut(bot, SHORTCUT, "UGIA", "DSOMEONEELSE", message) == 200
    [told] = bot.calls("chat.postMessage")  # ephemeral there fails: said in Lore's DM instead
    assert told.params["channel"] == "UGIA"
    assert told.params["text"].startswith("Saved that thread (1 message) to the *personal* index")
    assert "couldn't read the rest of its thread (Slack said thread_not_found)" in told.params["text"]
    asked = await bot.dm("UGIA", "what is the bike shed code?")
    assert "4417" in only_reply(bot, "DUGIA", asked).text

    bot.slack.add_channel("CNOTIN", "not-in")
    bot.slack.join("CNOTIN", "UGIA")
    ts = bot.next_ts()
    message = bot.slack.add_message("CNOTIN", ts, "Parking moves to level -2 from May.", "UGIA")
    bot.slack.fail("conversations.replies", "not_in_channel")
    bot.begin()
    assert await shortcut(bot, SHORTCUT, "UGIA", "CNOTIN", message) == 200
    [told] = bot.calls("chat.postEphemeral")
    assert "it has no text" not in told.params["text"]
    assert "Saved that thread (1 message)" in told.params["text"] and "not_in_channel" in told.params["text"]
    asked = await bot.mention("CNOTIN", "UGIA", "where is parking from May?")
    assert "level -2" in bot.said("CNOTIN", asked)


# --- learning a channel ------------------------------------------------------------------


async def test_learn_this_channel_reads_its_history_with_progress_and_keeps_it_fresh(bot: SlackBot) -> None:
    bot.slack.add_channel("CHIST", "platform")
    bot.slack.add_user("UHUGO", "hugo")
    bot.slack.add_user("UIRIS", "iris")
    for n in range(230):  # two pages of conversations.history, in the hours of the day before
        bot.slack.add_message("CHIST", f"{1_699_900_000 + 60 * n}.000100", f"standup {n}: all green", "UHUGO")
    fact = thread_in(
        bot,
        "CHIST",
        [
            ("UIRIS", "Which region hosts the search cluster?"),
            ("UHUGO", "The search cluster runs in eu-north-1."),
        ],
    )
    bot.slack.rate_limit("conversations.history")  # waited out, not lost
    asked = await bot.mention("CHIST", "UIRIS", "learn this channel")
    queued, progress, summary = bot.replies("CHIST", asked)
    assert queued.text == (
        "Reading *#platform's history* into the *platform* index. I'll show progress here, then keep it "
        "up to date as people write, edit and delete messages."
    )
    assert re.fullmatch(r"Reading #platform's history… (\d+)/\1 threads and hours of chat", progress.text)
    assert summary.text.startswith("Done reading *#platform's history* in ")
    # five hours of standups the day before, this hour's top-level messages, and the thread
    assert "7 threads and hours of chat (7 new, 0 updated, 0 unchanged)" in summary.text
    history = bot.calls("conversations.history")
    assert [c.status for c in history] == [429, 200, 200]

    bot.begin()
    status = only_reply(bot, "CHIST", await bot.mention("CHIST", "UIRIS", "status")).text
    assert "• *#platform's history* refreshes daily (last refreshed just now)" in status
    asked = await bot.mention("CHIST", "UIRIS", "which region hosts the search cluster?")
    answer = only_reply(bot, "CHIST", asked).text
    assert "eu-north-1" in answer and f"<{permalink('CHIST', fact)}|Thread in #platform" in answer

    bot.begin()  # new messages, edits and deletions reach the index from their events
    posted = await say(bot, "CHIST", "UHUGO", "Heads up: the billing database moved to Frankfurt.")
    asked = await bot.mention("CHIST", "UIRIS", "where did the billing database move?")
    assert "Frankfurt" in only_reply(bot, "CHIST", asked).text
    await edit(bot, "CHIST", posted, "Heads up: the billing database moved to Dublin.")
    asked = await bot.mention("CHIST", "UIRIS", "where did the billing database move?")
    moved = only_reply(bot, "CHIST", asked).text
    assert "Dublin" in moved and "Frankfurt" not in moved
    await say(bot, "CHIST", "UIRIS", "And the search cluster gets a replica in us-east-2.", thread_ts=fact)
    asked = await bot.mention("CHIST", "UHUGO", "where does the search cluster get a replica?")
    assert "us-east-2" in only_reply(bot, "CHIST", asked).text
    await delete(bot, "CHIST", posted)
    asked = await bot.mention("CHIST", "UIRIS", "where did the billing database move?")
    assert "Dublin" not in only_reply(bot, "CHIST", asked).text

    bot.begin()
    asked = await bot.mention("CHIST", "UIRIS", "forget this channel's history")
    assert only_reply(bot, "CHIST", asked).text.startswith(
        "Forgot *#platform's history*: removed 7 documents"
    )
    asked = await bot.mention("CHIST", "UIRIS", "which region hosts the search cluster?")
    assert "eu-north-1" not in only_reply(bot, "CHIST", asked).text
    asked = await bot.mention("CHIST", "UIRIS", "forget this channel's history")
    assert only_reply(bot, "CHIST", asked).text.startswith("I haven't learned this channel's history")


async def test_a_private_channels_history_stays_in_its_own_index(bot: SlackBot) -> None:
    bot.slack.add_channel("GLEGAL", "legal", is_private=True)
    bot.slack.add_channel("CLOUNGE", "lounge")
    bot.slack.add_user("UJAY", "jay")
    bot.slack.add_message("GLEGAL", bot.next_ts(), "The Zephyr acquisition closes on 30 June.", "UJAY")
    await bot.mention("GLEGAL", "UJAY", "make legal the default")  # the channel's own index anyway
    await bot.mention("GLEGAL", "UJAY", "learn this channel")
    asked = await bot.mention("GLEGAL", "UJAY", "when does the zephyr acquisition close?")
    assert "30 June" in only_reply(bot, "GLEGAL", asked).text  # the control

    bot.begin()
    for ask in (
        lambda q: bot.mention("CLOUNGE", "UJAY", q),
        lambda q: bot.dm("UJAY", q),
    ):
        await ask("when does the zephyr acquisition close?")
    everything = [c.params for c in bot.calls() if c.method.startswith("chat.")]
    assert everything and not [p for p in everything if "Zephyr" in str(p) or "30 June" in str(p)]
    from_dm = await bot.dm("UJAY", "learn this channel")
    assert only_reply(bot, "DUJAY", from_dm).text.startswith(
        "I can learn a channel's history only from that channel"
    )


async def test_partners_cannot_make_lore_learn_a_shared_channel(bot: SlackBot) -> None:
    bot.slack.add_channel("CSHARED", "with-acme", is_ext_shared=True)
    bot.slack.add_user("UACME", "wile", team_id="TACME")
    asked = await shared_channel_mention(bot, "UACME", "TACME", "learn this channel")
    assert "other organisations" in only_reply(bot, "CSHARED", asked).text
    assert not bot.calls("conversations.history")


async def test_saved_threads_name_people_by_their_names_and_notifications_bold_them_slacks_way(
    bot: SlackBot,
) -> None:
    bot.slack.add_channel("CJOINTNAMES", "joint-names", is_ext_shared=True)
    bot.slack.add_user("UHOSTN", "hostie")
    bot.slack.add_user("U0PATN", "u0patn", team_id="T0OTHER", display_name="", real_name="Pat Doe")
    parent = thread_in(
        bot,
        "CJOINTNAMES",
        [("UHOSTN", "Where do the quarterly figures live?"), ("U0PATN", "In the ledger vault, shelf 12.")],
    )
    asked = await bot.mention("CJOINTNAMES", "UHOSTN", "remember this thread", thread_ts=parent)
    assert "from hostie and Pat Doe" in bot.said("CJOINTNAMES", parent) + bot.said("CJOINTNAMES", asked)

    bot.begin()
    asked = await bot.mention("CJOINTNAMES", "UHOSTN", "where do the quarterly figures live?")
    [answer] = [c for c in bot.calls("chat.postMessage") if c.params.get("thread_ts") == asked]
    assert "*Pat Doe*" in answer.params["text"] and "**" not in answer.params["text"]
    quotes = " ".join(b["text"]["text"] for b in answer.params["blocks"] if b["type"] == "section")
    assert "u0patn" not in quotes and "**" not in quotes
