"""FakeSlack speaks the Web API wire format that slack_sdk's clients expect."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from .slack_server import FakeSlack

CHANNEL = "C0001"
PARENT_TS = "1690000000.000100"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(bot_token="xoxb-test", team_id="T0001", bot_user_id="UBOT") as server:
        yield server


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=slack.api_url)


async def test_auth_test_describes_the_bot(slack: FakeSlack, client: AsyncWebClient) -> None:
    response = await client.auth_test()

    assert response["ok"] is True
    assert response["team_id"] == "T0001"
    assert response["user_id"] == "UBOT"
    assert response["bot_id"] == "B0001"
    assert response["is_enterprise_install"] is False
    assert response["url"].startswith("https://")
    [call] = slack.calls
    assert call.method == "auth.test"
    assert call.headers["Authorization"] == "Bearer xoxb-test"
    assert call.ok


async def test_posted_reply_shows_up_in_conversations_replies(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_message(CHANNEL, PARENT_TS, "How do we deploy?", "U0001")

    posted = await client.chat_postMessage(channel=CHANNEL, thread_ts=PARENT_TS, text="See [1].")
    replies = await client.conversations_replies(channel=CHANNEL, ts=PARENT_TS)

    assert posted["channel"] == CHANNEL
    assert posted["message"]["text"] == "See [1]."
    messages = replies["messages"]
    assert [m["text"] for m in messages] == ["How do we deploy?", "See [1]."]
    assert messages[0]["reply_count"] == 1
    assert messages[1]["user"] == "UBOT"
    assert messages[1]["thread_ts"] == PARENT_TS
    assert slack.calls_to("chat.postMessage")[0].params["thread_ts"] == PARENT_TS


async def test_timestamps_increase(client: AsyncWebClient) -> None:
    first = await client.chat_postMessage(channel=CHANNEL, text="one")
    second = await client.chat_postMessage(channel=CHANNEL, text="two")

    assert first["ts"] == "1700000000.000100"
    assert float(second["ts"]) > float(first["ts"])


async def test_replies_are_paginated_with_cursors(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.add_message(CHANNEL, PARENT_TS, "parent", "U0001")
    for i in range(4):
        slack.add_message(CHANNEL, f"169000000{i + 1}.000100", f"reply {i}", "U0002", PARENT_TS)

    first = await client.conversations_replies(channel=CHANNEL, ts=PARENT_TS, limit=2)
    assert first["has_more"] is True
    # Iterating an AsyncSlackResponse fetches the next pages into the same object.
    pages = [page["messages"] async for page in first]

    assert [len(p) for p in pages] == [2, 2, 1]
    assert pages[-1][-1]["text"] == "reply 3"
    assert [c.params.get("cursor") is None for c in slack.calls] == [True, False, False]


async def test_unknown_thread_is_an_error(client: AsyncWebClient) -> None:
    with pytest.raises(SlackApiError) as caught:
        await client.conversations_replies(channel=CHANNEL, ts=PARENT_TS)

    assert caught.value.response["error"] == "thread_not_found"


async def test_chat_update_changes_the_message(slack: FakeSlack, client: AsyncWebClient) -> None:
    posted = await client.chat_postMessage(channel=CHANNEL, text="Thinking…")

    updated = await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="Done.")

    assert updated["text"] == "Done."
    assert (slack.message(CHANNEL, posted["ts"]) or {})["text"] == "Done."
    with pytest.raises(SlackApiError, match="message_not_found"):
        await client.chat_update(channel=CHANNEL, ts="1.000000", text="x")


async def test_chat_delete_removes_the_message(slack: FakeSlack, client: AsyncWebClient) -> None:
    posted = await client.chat_postMessage(channel=CHANNEL, text="oops")

    await client.chat_delete(channel=CHANNEL, ts=posted["ts"])

    assert slack.message(CHANNEL, posted["ts"]) is None


async def test_wrong_token_is_invalid_auth(slack: FakeSlack) -> None:
    client = AsyncWebClient(token="xoxb-wrong", base_url=slack.api_url)

    with pytest.raises(SlackApiError) as caught:
        await client.auth_test()

    assert caught.value.response.status_code == 200
    assert caught.value.response["error"] == "invalid_auth"


async def test_form_encoded_bodies_are_read(slack: FakeSlack, client: AsyncWebClient) -> None:
    blocks = '[{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]'

    await client.api_call("chat.postMessage", data={"channel": CHANNEL, "blocks": blocks})

    [call] = slack.calls
    assert call.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert call.params["blocks"][0]["type"] == "section"


async def test_registries_answer_info_methods(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.add_channel(CHANNEL, "eng", is_private=True)
    slack.add_user("U0001", "ada", is_admin=True)

    channel = (await client.conversations_info(channel=CHANNEL))["channel"]
    user = (await client.users_info(user="U0001"))["user"]
    bot = (await client.users_info(user="UBOT"))["user"]

    assert (channel["name"], channel["is_private"], channel["is_im"]) == ("eng", True, False)
    assert (user["name"], user["is_admin"], user["is_bot"]) == ("ada", True, False)
    assert bot["is_bot"] is True
    with pytest.raises(SlackApiError, match="channel_not_found"):
        await client.conversations_info(channel="C404")
    with pytest.raises(SlackApiError, match="user_not_found"):
        await client.users_info(user="U404")


async def test_users_info_tells_partners_strangers_and_grid_members_apart(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_user("U0002", "pat", team_id="T0PARTNER")
    slack.add_user("U0003", "sol", is_stranger=True)
    slack.add_user("U0004", "gil", team_id="T0OTHERWS", enterprise_teams=["T0OTHERWS", "T0001"])
    slack.add_user("U0005", "u0bob", display_name="", real_name="")

    partner = (await client.users_info(user="U0002"))["user"]
    assert (partner["team_id"], partner["profile"]["team"]) == ("T0PARTNER", "T0PARTNER")
    assert "is_admin" not in partner and "tz" not in partner and "email" not in partner["profile"]
    assert (await client.users_info(user="U0003"))["user"]["is_stranger"] is True
    grid = (await client.users_info(user="U0004"))["user"]
    assert grid["team_id"] == "T0OTHERWS" and "T0001" in grid["enterprise_user"]["teams"]
    bare = (await client.users_info(user="U0005"))["user"]
    assert (bare["name"], bare["real_name"], bare["profile"]["display_name"]) == ("u0bob", "", "")


async def test_private_file_needs_the_bot_token(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.add_file("F0001", "notes.md", b"# Deploys\nTuesdays.", "text/markdown", "markdown")
    file = (await client.files_info(file="F0001"))["file"]

    async with aiohttp.ClientSession() as http:
        headers = {"Authorization": "Bearer xoxb-test"}
        async with http.get(file["url_private_download"], headers=headers) as response:
            content, content_type = await response.read(), response.content_type
        async with http.get(file["url_private"]) as response:
            page, page_status, page_type = (
                await response.text(),
                response.status,
                response.content_type,
            )

    assert (content, content_type) == (b"# Deploys\nTuesdays.", "text/markdown")
    assert (page_status, page_type) == (200, "text/html")
    assert page.startswith("<!DOCTYPE html>")
    assert "Sign in" in page
    assert [(d.file_id, d.authorized) for d in slack.downloads] == [
        ("F0001", True),
        ("F0001", False),
    ]


async def test_workspace_can_be_filled_before_the_server_starts() -> None:
    slack = FakeSlack()
    slack.add_file("F0001", "notes.md", b"x")
    slack.add_message(CHANNEL, PARENT_TS, "see file", "U0001", files=["F0001"])

    async with slack:
        client = AsyncWebClient(token="xoxb-test", base_url=slack.api_url)
        [message] = (await client.conversations_replies(channel=CHANNEL, ts=PARENT_TS))["messages"]

        assert message["files"][0]["url_private"] == f"{slack.base_url}/files/F0001/notes.md"


async def test_chat_stream_helper_starts_appends_and_stops(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.add_message(CHANNEL, PARENT_TS, "How do we deploy?", "U0001")
    streamer = await client.chat_stream(
        channel=CHANNEL,
        thread_ts=PARENT_TS,
        recipient_team_id="T0001",
        recipient_user_id="U0001",
        buffer_size=10,
    )

    await streamer.append(markdown_text="Deploys happen ")
    await streamer.append(markdown_text="on Tuesdays ")
    await streamer.append(markdown_text="[1]")
    await streamer.stop()

    methods = [c.method for c in slack.calls]
    assert methods == ["chat.startStream", "chat.appendStream", "chat.stopStream"]
    start = slack.calls[0].params
    assert (start["thread_ts"], start["recipient_user_id"]) == (PARENT_TS, "U0001")
    assert start["chunks"] == [{"type": "markdown_text", "text": "Deploys happen "}]
    assert streamer.ts is not None
    final = slack.message(CHANNEL, streamer.ts) or {}
    assert final["text"] == "Deploys happen on Tuesdays [1]"
    assert [m["text"] for m in slack.thread(CHANNEL, PARENT_TS)][-1] == final["text"]


async def test_short_stream_starts_empty_then_stops_with_the_text(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    streamer = await client.chat_stream(channel=CHANNEL, thread_ts=PARENT_TS)

    await streamer.append(markdown_text="short")
    assert slack.calls == []
    await streamer.stop()

    start, stop = slack.calls
    assert "chunks" not in start.params
    assert stop.params["chunks"] == [{"type": "markdown_text", "text": "short"}]
    with pytest.raises(SlackApiError, match="message_not_in_streaming_state"):
        await client.chat_appendStream(channel=CHANNEL, ts=stop.params["ts"], markdown_text="x")


async def test_wait_for_wakes_on_a_later_call(slack: FakeSlack, client: AsyncWebClient) -> None:
    async def post_later() -> None:
        await asyncio.sleep(0.05)
        await client.chat_postMessage(channel=CHANNEL, text="late")

    task = asyncio.create_task(post_later())
    [call] = await slack.wait_for("chat.postMessage", count=1, timeout=5)
    await task

    assert call.params["text"] == "late"
    with pytest.raises(TimeoutError, match=r"chat\.update"):
        await slack.wait_for("chat.update", timeout=0.05)


async def test_rate_limit_answers_429(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.rate_limit("chat.update", times=1)

    with pytest.raises(SlackApiError) as caught:
        await client.chat_update(channel=CHANNEL, ts="1.0", text="x")

    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["Retry-After"] == "0"
    assert caught.value.response["error"] == "ratelimited"


async def test_rate_limit_retry_handler_retries(slack: FakeSlack) -> None:
    client = AsyncWebClient(
        token="xoxb-test",
        base_url=slack.api_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)],
    )
    slack.rate_limit("chat.postMessage")

    await client.chat_postMessage(channel=CHANNEL, text="eventually")

    assert [c.status for c in slack.calls_to("chat.postMessage")] == [429, 200]


async def test_scripted_failure(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.fail("chat.postMessage", "not_in_channel")

    with pytest.raises(SlackApiError, match="not_in_channel"):
        await client.chat_postMessage(channel=CHANNEL, text="x")
    assert (await client.chat_postMessage(channel=CHANNEL, text="x"))["ok"]


async def test_reactions_status_ephemeral_and_unknown_methods(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_message(CHANNEL, PARENT_TS, "question", "U0001")
    slack.add_channel(CHANNEL, "general")

    await client.reactions_add(channel=CHANNEL, timestamp=PARENT_TS, name="eyes")
    with pytest.raises(SlackApiError, match="already_reacted"):
        await client.reactions_add(channel=CHANNEL, timestamp=PARENT_TS, name="eyes")
    await client.reactions_remove(channel=CHANNEL, timestamp=PARENT_TS, name="eyes")
    await client.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts=PARENT_TS, status="is thinking…")
    ephemeral = await client.chat_postEphemeral(channel=CHANNEL, user="U0001", text="psst")
    with pytest.raises(SlackApiError, match="channel_not_found"):  # not a member there
        await client.chat_postEphemeral(channel="DOTHERS", user="U0001", text="psst")
    unknown = await client.api_call("bookmarks.list", params={"channel_id": CHANNEL})

    assert ephemeral["message_ts"]
    assert unknown["ok"] is True
    assert (slack.message(CHANNEL, PARENT_TS) or {})["reactions"] == []
    assert slack.calls_to("assistant.threads.setStatus")[0].params["status"] == "is thinking…"
    assert slack.calls[-1].method == "bookmarks.list"


async def test_views_open_update_publish(slack: FakeSlack, client: AsyncWebClient) -> None:
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Ask"}, "blocks": []}

    opened = (await client.views_open(trigger_id="123.abc", view=modal))["view"]
    updated = await client.views_update(view_id=opened["id"], view={**modal, "blocks": [1]})
    home = await client.views_publish(user_id="U0001", view={"type": "home", "blocks": []})

    assert opened["id"].startswith("V")
    assert opened["title"]["text"] == "Ask"
    assert updated["view"]["id"] == opened["id"]
    assert updated["view"]["blocks"] == [1]
    assert slack.views[home["view"]["id"]]["type"] == "home"
    with pytest.raises(SlackApiError, match="not_found"):
        await client.views_update(view_id="V404", view=modal)


def test_runs_in_a_thread_for_synchronous_callers() -> None:
    with FakeSlack() as slack:
        client = WebClient(token="xoxb-test", base_url=slack.api_url)

        client.chat_postMessage(channel=CHANNEL, text="from a sync client")

        [call] = slack.wait_for_sync("chat.postMessage", timeout=1)
        assert call.params["text"] == "from a sync client"


async def test_a_response_url_takes_five_messages_then_refuses(slack: FakeSlack) -> None:
    from slack_sdk.webhook.async_client import AsyncWebhookClient

    url = slack.response_url()
    webhook = AsyncWebhookClient(url)
    for n in range(5):
        sent = await webhook.send(text=f"reply {n}", response_type="ephemeral")
        assert (sent.status_code, sent.body) == (200, "ok")
    refused = await webhook.send(text="one too many")
    assert (refused.status_code, refused.body) == (404, "used_url")
    calls = slack.calls_to("response_url")
    assert [c.params["text"] for c in calls if c.ok] == [f"reply {n}" for n in range(5)]
    assert calls[0].params["response_type"] == "ephemeral" and calls[0].params["url"] == url.rsplit("/", 1)[1]
    unknown = await AsyncWebhookClient(url.rsplit("/", 1)[0] + "/R999999").send(text="late")
    assert (unknown.status_code, unknown.body) == (404, "expired_url")


async def test_users_conversations_lists_a_members_channels_by_kind_in_pages(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    for n in range(3):
        slack.add_channel(f"CPUB{n}", f"public-{n}")
    slack.add_channel("CPRIV", "private", is_private=True)
    slack.add_channel("CNOT", "not-a-member")
    slack.join("CPUB0", "UMEM")
    slack.join("CPUB1", "UMEM")
    slack.add_message("CPUB2", "1690000000.000900", "hi", "UMEM")  # posting makes a member
    slack.join("CPRIV", "UMEM")
    first = await client.users_conversations(user="UMEM", types="public_channel,private_channel", limit=2)
    cursor = first["response_metadata"]["next_cursor"]
    rest = await client.users_conversations(
        user="UMEM", types="public_channel,private_channel", cursor=cursor
    )
    ids = [c["id"] for c in first["channels"] + rest["channels"]]
    assert ids == ["CPRIV", "CPUB0", "CPUB1", "CPUB2"] and rest["response_metadata"]["next_cursor"] == ""
    public = await client.users_conversations(user="UMEM")
    assert [c["id"] for c in public["channels"]] == ["CPUB0", "CPUB1", "CPUB2"]


async def test_auth_test_reports_the_granted_scopes_when_told(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    assert "x-oauth-scopes" not in (await client.auth_test()).headers
    slack.granted_scopes = ("chat:write", "users:read")
    assert (await client.auth_test()).headers["x-oauth-scopes"] == "chat:write,users:read"


async def test_history_lists_top_level_messages_newest_first_in_pages(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_channel(CHANNEL, "general")
    for n in range(5):
        slack.add_message(CHANNEL, f"16900000{n + 1}0.000100", f"message {n}", "U0001")
    slack.add_message(CHANNEL, "1690000015.000100", "a reply", "U0002", thread_ts="1690000010.000100")

    first = await client.conversations_history(channel=CHANNEL, limit=3)
    second = await client.conversations_history(
        channel=CHANNEL, limit=3, cursor=first["response_metadata"]["next_cursor"]
    )
    window = await client.conversations_history(
        channel=CHANNEL, oldest="1690000020.000100", latest="1690000040.000100", inclusive=True
    )

    assert [m["text"] for m in first["messages"]] == ["message 4", "message 3", "message 2"]
    assert first["has_more"] is True
    assert [m["text"] for m in second["messages"]] == ["message 1", "message 0"]
    assert second["messages"][1]["reply_count"] == 1  # the reply stays in its thread
    assert second["has_more"] is False and second["response_metadata"]["next_cursor"] == ""
    assert [m["text"] for m in window["messages"]] == ["message 3", "message 2", "message 1"]
    with pytest.raises(SlackApiError, match="channel_not_found"):
        await client.conversations_history(channel="CNOPE")


async def test_permalinks_edits_and_deletions(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.add_message(CHANNEL, PARENT_TS, "parent", "U0001")
    slack.add_message(CHANNEL, "1690000001.000200", "reply", "U0002", thread_ts=PARENT_TS)

    parent = await client.chat_getPermalink(channel=CHANNEL, message_ts=PARENT_TS)
    reply = await client.chat_getPermalink(channel=CHANNEL, message_ts="1690000001.000200")
    edited = slack.edit_message(CHANNEL, "1690000001.000200", "reply, edited")
    gone = slack.delete_message(CHANNEL, PARENT_TS)

    assert parent["permalink"] == "https://lore-test.slack.com/archives/C0001/p1690000000000100"
    assert reply["permalink"].endswith(f"/p1690000001000200?thread_ts={PARENT_TS}&cid={CHANNEL}")
    assert edited["text"] == "reply, edited" and edited["edited"]["user"] == "U0002"
    assert gone["text"] == "parent" and slack.message(CHANNEL, PARENT_TS) is None
    with pytest.raises(SlackApiError, match="message_not_found"):
        await client.chat_getPermalink(channel=CHANNEL, message_ts=PARENT_TS)


async def test_assistant_methods_check_their_arguments(slack: FakeSlack, client: AsyncWebClient) -> None:
    prompts = [{"title": "Ask", "message": "What do you know?"}]
    await client.assistant_threads_setSuggestedPrompts(channel_id="D0001", prompts=prompts, title="Try")
    await client.assistant_threads_setTitle(channel_id="D0001", thread_ts=PARENT_TS, title="Deploys")
    await client.assistant_threads_setStatus(channel_id="D0001", thread_ts=PARENT_TS, status="")
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        await client.assistant_threads_setSuggestedPrompts(channel_id="D0001", prompts=[{"title": "x"}])
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        await client.assistant_threads_setSuggestedPrompts(channel_id="D0001", prompts=prompts * 5)

    [call] = slack.calls_to("assistant.threads.setSuggestedPrompts")[:1]
    assert call.params["prompts"] == prompts and call.params["title"] == "Try"


async def test_a_slow_download_is_held(slack: FakeSlack) -> None:
    slack.add_file("FSLOW", "big.csv", b"a,b\n1,2\n", "text/csv", "csv")
    slack.slow_download("FSLOW", 0.3)
    url = slack.file("FSLOW")["url_private_download"]
    async with aiohttp.ClientSession() as http:
        started = asyncio.get_running_loop().time()
        async with http.get(url, headers={"Authorization": "Bearer xoxb-test"}) as response:
            assert await response.read() == b"a,b\n1,2\n"
        assert (await slack.wait_for_download("FSLOW")).name == "big.csv"
        assert asyncio.get_running_loop().time() - started >= 0.3


async def test_conversations_members_pages_a_channels_members_as_slack_documents(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_channel("CENG", "eng")
    slack.join("CENG", "U0003", "U0001", "U0002")
    first = await client.conversations_members(channel="CENG", limit=2)
    assert first["ok"] is True and first["members"] == ["U0001", "U0002"]
    cursor = first["response_metadata"]["next_cursor"]
    assert isinstance(cursor, str) and cursor  # an opaque cursor, "" on the last page
    rest = await client.conversations_members(channel="CENG", cursor=cursor, limit=2)
    assert rest["members"] == ["U0003"] and rest["response_metadata"]["next_cursor"] == ""
    with pytest.raises(SlackApiError) as unknown:
        await client.conversations_members(channel="CNOPE")
    assert unknown.value.response["error"] == "channel_not_found"


async def test_usergroups_users_list_gives_a_groups_member_ids(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_usergroup("S0ENG", ["U0001", "U0002"])
    found = await client.usergroups_users_list(usergroup="S0ENG")
    assert found["ok"] is True and found["users"] == ["U0001", "U0002"]
    with pytest.raises(SlackApiError) as unknown:
        await client.usergroups_users_list(usergroup="S0NOPE")
    assert unknown.value.response["error"] == "no_such_subteam"
