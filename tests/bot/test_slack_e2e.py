"""Slack end to end: signed HTTP requests into Lore's real Bolt app, the fake Slack Web API
(and the fake OpenAI server) on loopback; assertions on the Web API calls Slack would see.

Two runtimes serve the whole module: `bot` without a language model (extractive answers),
`gpt` with the fake model. Each test works in its own channels and with its own users.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer

from knowledge import VISIBLE_LINES, display_lines
from storage.repositories.answers import AnswerRepository
from storage.repositories.history import AnswerHistory
from tests.bot.conftest import BOT, TEAM, Reply, SlackBot, markdown_file, only_reply
from tests.fakes.openai_server import Reply as LLMReply

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEPLOY = "# Deploying\n\nWe deploy the billing service every Tuesday with the blue-green pipeline.\n"
ONCALL = "# On-call\n\nThe on-call engineer carries the pager for one week, from Monday to Monday.\n"
SALARY = "# Compensation\n\nAlice's salary is 181,000 zorkmids per year, paid by the Zorkmid bank.\n"
PLANS = "# Project Nightjar\n\nProject Nightjar launches the lunar relay satellite in March from Kourou.\n"
RUNBOOK = (
    "<html><head><title>Incident runbook</title></head><body><h1>Incident runbook</h1>"
    "<p>During an incident the incident commander pages the database team through the escalation tree.</p>"
    "</body></html>"
)
SIGN_IN = (
    '<!DOCTYPE html><html lang="en"><head><title>Slack</title></head><body>'
    "<h1>Sign in to your workspace</h1></body></html>"
)


# --- the HTTP door --------------------------------------------------------------------


async def test_url_verification_gets_its_challenge_back(bot: SlackBot) -> None:
    body = json.dumps(
        {
            "token": "legacy",
            "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
            "type": "url_verification",
        }
    )
    status, answer = await bot.post(body)
    assert status == 200
    assert json.loads(answer) == {"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}
    assert bot.calls() == []


async def test_a_bad_signature_or_a_stale_timestamp_is_refused_and_nothing_happens(bot: SlackBot) -> None:
    bot.slack.add_channel("CDOOR", "door")
    bot.slack.add_user("UDOOR", "dora")
    forged = bot.mention_event("CDOOR", "UDOOR", "help")
    assert await bot.deliver(forged, secret="not-the-signing-secret") == 401
    stale = bot.mention_event("CDOOR", "UDOOR", "help")
    assert await bot.deliver(stale, timestamp=int(time.time()) - 6 * 60) == 401
    unsigned = await bot.http.post(
        "/slack/events", data=json.dumps({"type": "event_callback", "event": stale})
    )
    assert unsigned.status == 401
    challenge = json.dumps({"type": "url_verification", "challenge": "c"})
    assert (await bot.post(challenge, secret="wrong"))[0] == 401
    await bot.settle()
    assert bot.calls() == []
    control = bot.mention_event("CDOOR", "UDOOR", "help")
    assert (await bot.deliver(control)) == 200
    assert "Here's what I can do" in bot.said("CDOOR", control["ts"])


# --- adding documents and asking ------------------------------------------------------


async def test_a_mention_adds_the_attached_doc_then_answers_in_the_thread_citing_it(bot: SlackBot) -> None:
    bot.slack.add_channel("CDOCS", "docs")
    bot.slack.add_user("UADA", "ada")
    deploy = markdown_file(bot, "FDEPLOY", "deploy.md", DEPLOY)
    added = await bot.mention("CDOCS", "UADA", "add this doc to your memory", files=[deploy])

    [download] = bot.downloads()
    assert download.name == "deploy.md" and download.authorized
    assert download.headers["Authorization"] == "Bearer xoxb-test"
    assert "Added *deploy.md* to the *docs* index (1 passage)" in only_reply(bot, "CDOCS", added).text

    bot.begin()
    asked = await bot.mention("CDOCS", "UADA", "When do we deploy the billing service?")
    answer = only_reply(bot, "CDOCS", asked)
    assert answer.method == "chat.postMessage" and answer.thread_ts == asked
    assert answer.markdown == "", "quotes, not a sentence Lore seems to have written"
    assert (
        "From *deploy.md*: We deploy the billing service every Tuesday with the blue-green pipeline."
        in answer.text
    )
    assert "Sources: [1] *deploy.md*" in answer.text
    assert answer.button("answer_feedback")["positive_button"]["value"].startswith("helpful:")
    [post] = bot.calls("chat.postMessage")
    assert post.params["unfurl_links"] is False and post.params["unfurl_media"] is False
    assert post.params["text"] == (  # what a notification and a screen reader say: the answer
        "From deploy.md: We deploy the billing service every Tuesday with the blue-green pipeline."
        "\nSources: deploy.md"
    )

    methods = bot.methods()
    assert methods.index("assistant.threads.setStatus") < methods.index("chat.postMessage")
    [status] = bot.calls("assistant.threads.setStatus")
    assert status.params["channel_id"] == "CDOCS" and status.params["thread_ts"] == asked
    assert status.params["status"] and status.params["loading_messages"]
    assert "reactions.add" not in methods  # the reply clears the status; no reaction needed

    listed = await bot.mention("CDOCS", "UADA", "list indexes")
    assert "⭐ *docs* (channel) — 1 document, 1 passage" in only_reply(bot, "CDOCS", listed).text.splitlines()


async def test_a_question_is_marked_as_being_worked_on_before_anything_else(bot: SlackBot) -> None:
    bot.slack.add_channel("CFIRST", "first-contact")
    bot.slack.add_user("UNEW", "newcomer")
    asked = await bot.mention("CFIRST", "UNEW", "who reviews the quarterly budget?")
    methods = [m for m in bot.methods() if m != "auth.test"]  # Bolt's, on its first request
    signal = "assistant.threads.setStatus"
    assert methods[0] == signal, methods  # before the user and channel are looked up
    assert methods.index(signal) < methods.index("users.info") < methods.index("chat.postMessage")
    assert methods[-1] == "chat.postMessage" and only_reply(bot, "CFIRST", asked).thread_ts == asked

    bot.begin()
    await bot.mention("CFIRST", "UNEW", "help")
    assert signal not in bot.methods(), "a command answered at once gets no working signal"

    bot.begin()  # where Slack refuses a status, a reaction shows the work instead
    bot.slack.fail(signal, "missing_scope")
    asked = await bot.mention("CFIRST", "UNEW", "who signs off the travel budget?")
    methods = [m for m in bot.methods() if m != "auth.test"]
    assert methods[:2] == [signal, "reactions.add"], methods
    assert methods[-1] == "reactions.remove" and bot.calls("reactions.add")[0].params["timestamp"] == asked


async def test_a_file_dropped_in_a_dm_goes_into_the_personal_index_without_a_command(bot: SlackBot) -> None:
    bot.slack.add_user("UCARL", "carl")
    oncall = markdown_file(bot, "FONCALL", "oncall.md", ONCALL)
    dropped = await bot.dm("UCARL", files=[oncall])
    [download] = bot.downloads()
    assert download.name == "oncall.md" and download.authorized
    reply = only_reply(bot, "DUCARL", dropped)
    assert reply.text == "I added oncall.md to your personal index. Ask me about it here any time."

    asked = await bot.dm("UCARL", "who carries the pager, and for how long?")
    answer = only_reply(bot, "DUCARL", asked)
    assert "Sources: [1] *oncall.md*" in answer.text and "From *oncall.md*:" in answer.text


async def test_a_sign_in_page_instead_of_the_file_gets_a_polite_answer(bot: SlackBot) -> None:
    bot.slack.add_channel("CLOGIN", "login")
    bot.slack.add_user("ULOGIN", "lou")
    bot.slack.add_file("FLOGIN", "q3-report.pdf", SIGN_IN.encode(), "application/pdf", "pdf")
    asked = await bot.mention("CLOGIN", "ULOGIN", "please add this file to your memory", files=["FLOGIN"])
    reply = only_reply(bot, "CLOGIN", asked)
    assert reply.text == (
        "I couldn't download q3-report.pdf: Slack sent a sign-in page instead of the file. "
        "Check that I have the files:read scope and am a member of this channel."
    )
    assert bot.calls("assistant.threads.setStatus")  # the working signal, cleared by the reply


async def test_remember_this_under_a_message_adds_the_parent_files(bot: SlackBot) -> None:
    bot.slack.add_channel("CPARENT", "parent")
    bot.slack.add_user("UPAT", "pat")
    oncall = markdown_file(bot, "FPARENT", "rota.md", ONCALL)
    parent = bot.next_ts()
    bot.slack.add_message("CPARENT", parent, "here is the rota", "UPAT", files=[oncall])
    asked = await bot.mention("CPARENT", "UPAT", "remember this", thread_ts=parent)
    assert "Added *rota.md* to the *parent* index" in only_reply(bot, "CPARENT", parent).text
    assert asked != parent


# --- delivery: once, and never to itself -------------------------------------------------


async def test_retries_and_double_deliveries_are_answered_once(bot: SlackBot) -> None:
    bot.slack.add_channel("CRETRY", "retry")
    bot.slack.add_user("URAY", "ray")
    event = bot.mention_event("CRETRY", "URAY", "who approves the budget?")
    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert await bot.deliver(event, event_id="EvRetry1", settle=False) == 200
    assert await bot.deliver(event, event_id="EvRetry1", settle=False, headers=retry) == 200
    as_message = {**event, "type": "message", "channel_type": "channel"}
    assert await bot.deliver(as_message, event_id="EvRetry2", settle=False) == 200
    await bot.settle()
    assert await bot.deliver(event, event_id="EvRetry1", headers={**retry, "X-Slack-Retry-Num": "2"}) == 200
    only_reply(bot, "CRETRY", event["ts"])
    assert len(bot.calls("chat.postMessage")) == 1

    bot.begin()
    dm = bot.dm_event("URAY", "what's in your memory?")
    assert await bot.deliver(dm, event_id="EvDm1", settle=False) == 200
    assert await bot.deliver(dm, event_id="EvDm2", settle=False) == 200  # same ts, another id
    await bot.settle()
    only_reply(bot, "DURAY", dm["ts"])


async def test_its_own_messages_and_other_bots_are_ignored(bot: SlackBot) -> None:
    bot.slack.add_channel("CBOTS", "bots")
    bot.slack.add_user("UOTHERBOT", "deploybot", is_bot=True)
    ts = bot.next_ts
    events = [
        {"type": "message", "channel_type": "im", "channel": "DUBOT", "user": BOT, "bot_id": "B0001", "text": "help", "ts": ts()},
        {"type": "app_mention", "channel": "CBOTS", "user": BOT, "bot_id": "B0001", "text": f"<@{BOT}> help", "ts": ts()},
        {"type": "app_mention", "channel": "CBOTS", "user": "UOTHERBOT", "bot_id": "B0777", "text": f"<@{BOT}> list indexes", "ts": ts()},
        {"type": "message", "subtype": "bot_message", "channel_type": "channel", "channel": "CBOTS", "bot_id": "B0777", "text": f"<@{BOT}> help", "ts": ts()},
        {"type": "message", "subtype": "bot_message", "channel_type": "im", "channel": "DUOTHERBOT", "bot_id": "B0777", "text": "help", "ts": ts()},
        {"type": "message", "channel_type": "im", "channel": "DUOTHERBOT", "user": "UOTHERBOT", "bot_id": "B0777", "text": "help", "ts": ts()},
        {"type": "message", "subtype": "message_changed", "channel_type": "im", "channel": "DUX", "message": {"user": "UX", "text": "help"}, "ts": ts()},
    ]  # fmt: skip
    for event in events:
        assert await bot.deliver({**event, "event_ts": event["ts"], "team": TEAM}) == 200
    assert set(bot.methods()) <= {"auth.test"}


async def test_joining_a_channel_prepares_its_index(bot: SlackBot) -> None:
    bot.slack.add_channel("CJOIN", "newcomers")
    bot.slack.add_channel("CJOINED", "elsewhere")
    bot.slack.add_user("UJOE", "joe")
    joined = {
        "type": "member_joined_channel",
        "user": BOT,
        "channel": "CJOIN",
        "channel_type": "C",
        "team": TEAM,
    }
    someone = {**joined, "user": "UJOE", "channel": "CJOINED"}
    assert await bot.deliver(joined) == 200
    assert await bot.deliver(someone) == 200
    [info] = bot.calls("conversations.info")
    assert info.params == {"channel": "CJOIN"}
    listed = await bot.mention("CJOINED", "UJOE", "list indexes")
    listing = only_reply(bot, "CJOINED", listed).text
    assert "▫️ *newcomers* (channel) — 0 documents, 0 passages" in listing.splitlines()


# --- the chat commands ----------------------------------------------------------------


async def test_index_commands_list_create_enable_disable_default_and_delete(bot: SlackBot) -> None:
    bot.slack.add_channel("COPS", "ops")
    bot.slack.add_user("UOLGA", "olga")
    bot.slack.add_user("UBORIS", "boris")

    async def say(text: str, user: str = "UOLGA") -> Reply:
        asked = await bot.mention("COPS", user, text)
        return only_reply(bot, "COPS", asked)

    assert "⭐ *ops* (channel) — 0 documents" in (await say("list indexes")).text
    assert (await say("create an index called handbook")).text == (
        "Created the shared *handbook* index and enabled it here. Anyone in the workspace can enable it too."
    )
    assert "✅ *handbook* (shared)" in (await say("which indexes can I use?")).text
    assert (await say("create index handbook")).text == "There is already an index called 'handbook'."
    assert (
        await say("disable the handbook index")
    ).text == "Disabled the *handbook* index (a shared index you created) here."
    assert (
        await say("disable the handbook index")
    ).text == "The *handbook* index (a shared index you created) wasn't enabled here."
    assert "▫️ *handbook* (shared)" in (await say("list indexes")).text
    assert (
        (await say("enable the handbook index")).text
        == "Enabled the *handbook* index (a shared index you created) here. I'll search it for every question."
    )
    assert (
        await say("Use the HANDBOOK index too, please")
    ).text == "The *handbook* index (a shared index you created) is already enabled here."
    assert (await say("enable the hand book index")).text.startswith(
        "I don't know an index called 'hand book'"
    )
    assert (
        await say("make handbook the default")
    ).text == "New documents here now go into the *handbook* index (a shared index you created)."
    listing = (await say("list indexes")).text
    assert listing.index("⭐ *handbook*") < listing.index("✅ *ops*")

    confirm = await say("delete the handbook index")
    assert confirm.text == "Delete the *handbook* index and its 0 documents? This cannot be undone."
    assert await bot.press("UBORIS", "COPS", confirm, "confirm_delete_index") == 200
    refused = bot.replies("COPS", confirm.thread_ts)[-1]
    assert refused.text == "Only the person who created the handbook index (or an admin) can delete it."
    bot.begin()
    assert await bot.press("UOLGA", "COPS", confirm, "confirm_delete_index") == 200
    assert only_reply(bot, "COPS", confirm.thread_ts).text == "Deleted the *handbook* index."
    bot.begin()
    assert await bot.press("UOLGA", "COPS", confirm, "confirm_delete_index") == 200  # pressed twice
    assert only_reply(bot, "COPS", confirm.thread_ts).text == "That index no longer exists."
    assert "handbook" not in (await say("list indexes")).text

    await say("create an index called scratch")
    keep = await say("drop the scratch index")
    await bot.press("UOLGA", "COPS", keep, "cancel_delete_index")
    assert bot.replies("COPS", keep.thread_ts)[-1].text == "Kept the *scratch* index."
    assert "*scratch*" in (await say("list indexes")).text


@pytest_asyncio.fixture(loop_scope="module")
async def website() -> AsyncIterator[str]:
    """A web page on loopback (the offline bot may fetch from 127.0.0.1)."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=RUNBOOK, content_type="text/html")

    app = web.Application()
    app.router.add_get("/runbook", page)
    async with TestServer(app, host="127.0.0.1") as server:
        yield str(server.make_url("/runbook"))


async def test_document_commands_add_list_and_forget(bot: SlackBot, website: str) -> None:
    bot.slack.add_channel("CLIB", "library")
    bot.slack.add_user("ULIB", "libby")
    runbook = markdown_file(bot, "FRUNBOOK", "deploys.md", DEPLOY)

    async def say(text: str, files: tuple[str, ...] = ()) -> str:
        asked = await bot.mention("CLIB", "ULIB", text, files=files)
        return "\n".join(r.text for r in bot.replies("CLIB", asked))

    assert (await say("what's in your memory?")).startswith("The *library* index is empty.")
    assert (await say("remember this")).startswith("I don't see any files on this message")
    assert (await say("remember this", (runbook,))) == (
        "Added *deploys.md* to the *library* index (1 passage). Ask me about it any time."
    )
    assert (await say("add this doc to your memory", (runbook,))) == (
        "*deploys.md* is already in memory (the *library* index); nothing to do."
    )
    assert (await say(f"add <{website}> to your memory")).startswith(
        "Added *Incident runbook* to the *library* index"
    )
    refused = await say("add http://169.254.169.254/latest/meta-data to your memory")
    assert refused.startswith("I couldn't read http://169.254.169.254/latest/meta-data: ")
    listed = await say("What is in your memory")
    assert listed.startswith("Documents in the *library* index:")
    assert "• deploys.md — text/markdown, added just now" in listed
    assert f"• <{website}|Incident runbook> — text/html, added just now" in listed

    answer = await say("who does the incident commander page during an incident?")
    assert website in answer and "database team" in answer

    assert (await say("forget q3-report.pdf")).startswith(
        "I couldn't find a document matching “q3-report.pdf”"
    )
    assert (await say("forget deploys.md")) == "Forgot *deploys.md* (from the *library* index)."
    assert (await say(f"forget <{website}>")) == "Forgot *Incident runbook* (from the *library* index)."
    assert (await say("list docs")).startswith("The *library* index is empty.")


async def test_help_status_mode_and_strategy_commands(bot: SlackBot) -> None:
    bot.slack.add_channel("CMISC", "misc")
    bot.slack.add_user("UMAX", "max", is_admin=True)
    bot.slack.add_user("UMIA", "mia")

    async def say(text: str) -> str:
        asked = await bot.mention("CMISC", "UMAX", text)
        return only_reply(bot, "CMISC", asked).text

    assert (await say("help")).startswith("Here's what I can do:")
    assert (await say("what can you do?")).startswith("Here's what I can do:")
    assert (await say("status")).startswith("Nothing has been indexed here yet.")
    assert (await say("stop indexing https://example.com")) == (
        "I'm not indexing a site called “https://example.com” here. Say “status” to see the sites I know."
    )
    assert (await say("refresh <https://example.com>")).startswith("I'm not indexing a site called")
    assert (await say("use rag only mode here")) == "Answers here now use *RAG_ONLY* mode."
    assert (await say("switch to hybrid mode")) == "Answers here now use *HYBRID* mode."
    assert (await say("use the strategy smart")) == "Retrieval strategy here is now *smart*."
    for change in ("use llm only mode here", "use the strategy always", "lock this channel's settings"):
        asked = await bot.mention("CMISC", "UMIA", change)  # how a channel answers is for its admins
        assert only_reply(bot, "CMISC", asked).text.startswith(
            "Only workspace admins change how Lore answers"
        )
    assert (await say("lock this channel's settings")).startswith("Locked this channel's settings")
    asked = await bot.mention("CMISC", "UMIA", "disable the misc index")
    assert only_reply(bot, "CMISC", asked).text.startswith("An admin locked this channel's settings")
    assert (await say("unlock settings")).startswith("Unlocked this channel's settings")
    asked = await bot.mention("CMISC", "UMIA", "disable the misc index")
    assert only_reply(bot, "CMISC", asked).text == "Disabled the *misc* index (this channel's index) here."
    assert (await say("")) == "What would you like to know? Ask me a question, or say “help”."


async def test_feedback_is_stored_per_person_and_says_who_will_see_it(bot: SlackBot) -> None:
    bot.slack.add_channel("CFEED", "feedback")
    bot.slack.add_user("UFAY", "fay")
    bot.slack.add_user("UGUS", "gus")
    await bot.mention(
        "CFEED", "UFAY", "add this doc", files=[markdown_file(bot, "FFEED", "deploy.md", DEPLOY)]
    )
    asked = await bot.mention("CFEED", "UFAY", "which pipeline do billing deploys use?")
    answer = only_reply(bot, "CFEED", asked)
    [buttons] = [b for b in answer.blocks if b["type"] == "context_actions"]
    feedback = buttons["elements"][0]
    assert feedback["type"] == "feedback_buttons"
    assert (
        feedback["positive_button"]["accessibility_label"]
        and feedback["negative_button"]["accessibility_label"]
    )
    answer_id = int(feedback["positive_button"]["value"].removeprefix("helpful:"))
    answers = AnswerRepository(bot.runtime.services.db)
    assert answers.verdicts(answer_id) == []
    record = answers.get(answer_id, TEAM)
    assert record.question == "which pipeline do billing deploys use?"
    assert record.cited[0]["name"] == "deploy.md" and "blue-green" in (record.text or "")

    bot.begin()
    assert await bot.press_feedback("UFAY", "CFEED", answer, helpful=True) == 200
    [verdict] = answers.verdicts(answer_id)
    assert verdict.helpful
    [thanks] = bot.calls("chat.postEphemeral")
    assert thanks.params["user"] == "UFAY" and thanks.params["thread_ts"] == asked
    assert thanks.params["text"] == (
        "Thanks! Glad it helped. The people who look after the *feedback* index and workspace "
        "admins will see it (“show feedback”)."
    )
    assert "do better" not in thanks.params["text"]
    history, model = AnswerHistory(bot.runtime.services.db), bot.runtime.services.embedder.model_id
    assert history.vectors([answer_id], model) == {}  # answered and helpful: no coverage gap

    bot.begin()
    assert await bot.press_feedback("UGUS", "CFEED", answer, helpful=False) == 200
    [opened] = bot.calls("views.open")
    form = opened.params["view"]
    assert form["callback_id"] == "feedback_form" and bot.calls("chat.postEphemeral") == []
    reasons = [o["value"] for o in form["blocks"][0]["element"]["options"]]
    assert reasons == ["wrong", "outdated", "missing source", "other"]
    assert [(v.user_id, v.helpful) for v in answers.verdicts(answer_id)][1][1] is False  # kept at once
    assert set(history.vectors([answer_id], model)) == {answer_id}  # a gap now: kept for the job
    await bot.submit_view(
        "UGUS",
        form,
        {
            "reason": {"value": {"type": "radio_buttons", "selected_option": {"value": "outdated"}}},
            "comment": {"value": {"type": "plain_text_input", "value": "We moved to canary deploys."}},
        },
    )
    fay, gus = answers.verdicts(answer_id)
    assert fay.helpful and not gus.helpful
    assert (gus.reason, gus.comment) == ("outdated", "We moved to canary deploys.")
    [thanks] = bot.calls("chat.postEphemeral")
    assert thanks.params["user"] == "UGUS" and thanks.params["text"].startswith("Thanks for telling me.")

    bot.begin()
    forged = Reply(
        answer.ts,
        answer.thread_ts,
        answer.method,
        "",
        [{"type": "context_actions", "elements": [{"type": "feedback_buttons", "action_id": "answer_feedback",
          "positive_button": {"value": "helpful:987654"}, "negative_button": {"value": "not_helpful:987654"}}]}],
    )  # fmt: skip
    assert await bot.press_feedback("UFAY", "CFEED", forged, helpful=True) == 200
    assert bot.calls("chat.postEphemeral") == [] and bot.calls("views.open") == []


# --- the access policy ----------------------------------------------------------------

ENABLE_PERSONAL = [
    "enable the personal index",
    "enable personal",
    "use the personal index too",
    "enable alice's personal index",
    "enable <@UALICE> personal index",
    "enable the personal index of alice",
    "make personal the default",
    "turn on the PERSONAL index!",
]
ENABLE_SECRET = [
    "enable the secret-plans index",
    "enable secret-plans",
    "enable <#GSECRET|secret-plans>",
    "enable the <#GSECRET> index",
    "please use the #secret-plans index as well",
    "turn on secret-plans",
    "activate the SECRET-PLANS index!",
    "make secret-plans the default",
    "search the secret-plans index too",
]


async def test_a_personal_index_is_reached_only_by_its_owner_in_private(bot: SlackBot) -> None:
    bot.slack.add_channel("CPUBLIC", "public")
    bot.slack.add_user("UALICE", "alice")
    bot.slack.add_user("UBOB", "bob")
    salary = markdown_file(bot, "FSALARY", "alice-salary.md", SALARY)
    await bot.dm("UALICE", files=[salary])
    question = "how many zorkmids is alice's salary?"
    asked = await bot.dm("UALICE", question)
    assert "alice-salary.md" in bot.said("DUALICE", asked)  # the control: the owner, in private

    bot.begin()
    for text in ENABLE_PERSONAL:
        await bot.dm("UBOB", text)  # at most Bob's own personal index
        for user in ("UBOB", "UALICE"):
            reply = only_reply(bot, "CPUBLIC", await bot.mention("CPUBLIC", user, text))
            assert reply.text.startswith("I don't know an index called") or "alice" in text, reply.text
    await bot.dm("UBOB", question)
    await bot.mention("CPUBLIC", "UBOB", question)
    await bot.mention("CPUBLIC", "UALICE", question)
    await bot.mention("CPUBLIC", "UALICE", "list indexes")
    everything = [c.params for c in bot.calls() if c.method.startswith("chat.")]
    assert everything and not [
        p for p in everything if "alice-salary" in json.dumps(p) or "181,000" in json.dumps(p)
    ]
    assert not [p for p in everything if "Enabled the" in json.dumps(p)]


async def test_a_private_channel_index_is_reached_only_from_its_channel(bot: SlackBot) -> None:
    bot.slack.add_channel("GSECRET", "secret-plans", is_private=True)
    bot.slack.add_channel("CLOBBY", "lobby")
    bot.slack.add_user("UCLEO", "cleo")
    plans = markdown_file(bot, "FPLANS", "plans.md", PLANS)
    await bot.mention("GSECRET", "UCLEO", "add this doc to your memory", files=[plans])
    question = "when does project nightjar launch the lunar relay?"
    asked = await bot.mention("GSECRET", "UCLEO", question)
    assert "plans.md" in bot.said("GSECRET", asked)  # the control: from its own channel

    bot.begin()
    for text in ENABLE_SECRET:
        for reply in [
            only_reply(bot, "CLOBBY", await bot.mention("CLOBBY", "UCLEO", text)),
            only_reply(bot, "DUCLEO", await bot.dm("UCLEO", text)),
        ]:
            assert reply.text.startswith("I don't know an index called"), (text, reply.text)
            assert "secret-plans' that you can use here." in reply.text.lower()
    await bot.mention("CLOBBY", "UCLEO", question)
    await bot.dm("UCLEO", question)
    listed = await bot.mention("CLOBBY", "UCLEO", "list indexes")
    assert "*lobby*" in only_reply(bot, "CLOBBY", listed).text
    everything = [c.params for c in bot.calls() if c.method.startswith("chat.")]
    leaks = [p for p in everything if "plans.md" in json.dumps(p) or "Kourou" in json.dumps(p)]
    assert everything and not leaks
    assert not [p for p in everything if "secret-plans" in json.dumps(p) and "Enabled" in json.dumps(p)]


# --- with a language model ------------------------------------------------------------


async def test_a_follow_up_in_a_thread_sends_the_thread_to_the_model(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CTHREAD", "thread")
    gpt.slack.add_user("UTESS", "tess")
    gpt.llm.enqueue(
        LLMReply("Dana approves billing deploys."),
        LLMReply("Who approves billing deploys on weekends?"),  # the follow-up made standalone
        LLMReply("On weekends Sam approves them."),
    )
    first = await gpt.mention("CTHREAD", "UTESS", "who approves billing deploys?")
    assert only_reply(gpt, "CTHREAD", first).markdown == "Dana approves billing deploys."
    methods = gpt.methods()
    assert methods.index("assistant.threads.setStatus") < methods.index("chat.startStream")

    gpt.begin()
    await gpt.mention("CTHREAD", "UTESS", "and on weekends?", thread_ts=first)
    [replies] = gpt.calls("conversations.replies")
    assert replies.params["channel"] == "CTHREAD" and replies.params["ts"] == first
    rewrite, request = gpt.chat_requests
    assert "Last question: and on weekends?" in rewrite.messages[-1]["content"]
    assert request.messages[1:] == [
        {"role": "user", "content": "who approves billing deploys?"},
        {"role": "assistant", "content": "Dana approves billing deploys."},
        {"role": "user", "content": "and on weekends?"},
    ]
    answers = gpt.replies("CTHREAD", first)
    assert [a.markdown for a in answers] == ["On weekends Sam approves them."]


async def test_a_long_thread_sends_its_latest_messages_and_other_bots_speak_as_users(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CBUSY", "busy")
    gpt.slack.add_user("UBUSY", "bea")
    first = await gpt.mention("CBUSY", "UBUSY", "what changed in the release?")
    for n in range(230):  # more than one page of conversations.replies
        gpt.slack.add_message("CBUSY", gpt.next_ts(), f"remark {n}", "UBUSY", thread_ts=first)
    deploybot = {"type": "message", "bot_id": "B0777", "user": "UDEPLOYBOT", "text": "deploy 42 finished", "ts": gpt.next_ts(), "thread_ts": first}  # fmt: skip
    gpt.slack.add_message("CBUSY", deploybot["ts"], deploybot["text"], "UDEPLOYBOT", thread_ts=first)

    gpt.begin()
    gpt.llm.enqueue(LLMReply("Deploy 42 shipped the release."))
    await gpt.mention("CBUSY", "UBUSY", "so is it live?", thread_ts=first)
    assert len(gpt.calls("conversations.replies")) == 2
    [request] = gpt.chat_requests
    # the latest 30 messages, all users'; the engine asks everything said since its last answer
    latest = [*(f"remark {n}" for n in range(201, 230)), "deploy 42 finished", "so is it live?"]
    assert request.messages[1:] == [{"role": "user", "content": "\n\n".join(latest)}]


def long_text(paragraphs: int = 60) -> str:
    sentence = "The billing service is deployed with the blue-green pipeline on Tuesdays. "
    return "\n\n".join(f"Step {n}: " + sentence * 3 for n in range(paragraphs))


async def test_a_long_answer_is_streamed_whole_then_cut_to_a_glance(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CLONG", "long")
    gpt.slack.add_user("ULEN", "len")
    text = long_text()
    assert len(text) > 13_000
    gpt.llm.enqueue(LLMReply(text))
    asked = await gpt.mention("CLONG", "ULEN", "walk me through every deploy step")
    answer = only_reply(gpt, "CLONG", asked)
    streamed = [
        c for c in gpt.calls() if c.method in ("chat.startStream", "chat.appendStream", "chat.stopStream")
    ]
    assert answer.method == "chat.startStream"
    pieces = [
        str(c.params.get("markdown_text") or "")
        + "".join(
            chunk["text"] for chunk in c.params.get("chunks", []) if chunk.get("type") == "markdown_text"
        )
        for c in streamed
    ]
    assert "".join(pieces) == text
    for call in streamed:
        assert sum(len(c["text"]) for c in call.params.get("chunks", [])) <= 12_000
    # once complete, it is cut to a glance; "Show more" gives it whole
    [cut] = gpt.calls("chat.update")
    glance = "".join(b["text"] for b in cut.params["blocks"] if b["type"] == "markdown")
    assert display_lines(glance) <= VISIBLE_LINES and text.startswith(glance.removesuffix("…").strip())
    assert answer.button("answer_feedback") and answer.button("answer_more")


async def test_without_streaming_a_long_answer_is_a_glance_and_show_more_gives_it_whole(
    gpt: SlackBot,
) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CSPLIT", "split")
    gpt.slack.add_user("USPLIT", "sid")
    text = long_text(80)
    gpt.llm.enqueue(LLMReply(text))
    gpt.slack.fail("chat.startStream", "not_allowed_token_type")
    asked = await gpt.mention("CSPLIT", "USPLIT", "list every deploy step in detail")
    [answer] = gpt.replies("CSPLIT", asked)
    assert answer.method == "chat.postMessage" and display_lines(answer.markdown) <= VISIBLE_LINES
    assert answer.button("answer_feedback")
    gpt.begin()
    await gpt.press("USPLIT", "CSPLIT", answer, "answer_more")
    pages = [c for c in gpt.calls("chat.postEphemeral") if c.params.get("user") == "USPLIT"]
    assert len(pages) >= 2 and all(c.params["thread_ts"] == asked for c in pages)
    shown = "".join(b["text"] for c in pages for b in c.params["blocks"] if b["type"] == "markdown")
    assert "".join(shown.split()) == "".join(text.split()), "Show more gives the whole answer"
    for call in gpt.calls():
        blocks = call.params.get("blocks") or []
        assert len(blocks) <= 50
        assert sum(len(b["text"]) for b in blocks if b["type"] == "markdown") <= 12_000

    gpt.begin()
    gpt.llm.enqueue(LLMReply("Short and sweet."))
    gpt.slack.fail("chat.startStream", "not_allowed_token_type")
    asked = await gpt.mention("CSPLIT", "USPLIT", "summarise the deploy steps")
    assert only_reply(gpt, "CSPLIT", asked).markdown == "Short and sweet."


async def test_rag_only_mode_abstains_without_the_model(gpt: SlackBot) -> None:
    gpt.slack.add_channel("CRAG", "rag")
    gpt.slack.add_channel("CFREE", "free")
    gpt.slack.add_user("URAG", "rags", is_admin=True)
    question = "what is the capital of the moon colony?"
    await gpt.mention("CFREE", "URAG", question)
    assert len(gpt.chat_requests) == 1  # the control: by default the model answers

    gpt.begin()
    set_mode = await gpt.mention("CRAG", "URAG", "use rag only mode here")
    assert only_reply(gpt, "CRAG", set_mode).text == "Answers here now use *RAG_ONLY* mode."
    asked = await gpt.mention("CRAG", "URAG", question)
    assert gpt.chat_requests == []
    assert only_reply(gpt, "CRAG", asked).text.startswith(
        "I couldn't find anything about that in the rag index."
    )


async def test_the_function_strategy_lets_the_model_call_tools(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CTOOLS", "tools")
    gpt.slack.add_user("UTOOL", "tula", is_admin=True)
    said = await gpt.mention("CTOOLS", "UTOOL", "use function retrieval here")
    assert only_reply(gpt, "CTOOLS", said).text == "Retrieval strategy here is now *function*."
    gpt.llm.enqueue(LLMReply("I looked it up."))
    asked = await gpt.mention("CTOOLS", "UTOOL", "what do the release notes say?")
    [request] = gpt.chat_requests
    assert "search_knowledge" in [t["function"]["name"] for t in request.json["tools"]]
    assert only_reply(gpt, "CTOOLS", asked).markdown == "I looked it up."
