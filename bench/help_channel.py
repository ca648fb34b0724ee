"""A help channel, simulated through the real `lore run` (HTTP mode, a process of its own)
against the fake Slack Web API: 60 top-level messages to nobody over the docs corpus
(`bench/data/help_channel/README.md` says which), and what Lore did with each.

Reported: how many Lore answered; precision, the share of those answers that hold every
required fact of their question in what Slack shows before "Show more" (goal ≥ 0.9), and in
the whole answer; how many unanswerable questions and chatter got an answer (goal ≤ 1 in
20); recall, the share of answerable questions answered; the private "not sure" offers.

Also the verified answers' measure (`bench.verified`): after 10 verified answers, how many
rewordings of their questions get the verified answer first.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp

from bench import verified
from bench.quality import DOCS_CORPUS, DOCS_QUESTIONS
from bench.slack_path import SECRET, _settings, lore_run
from bot.app.services import build_services
from knowledge.evaluation.qa import QaItem, folder_sources, holds, load_questions
from tests.fakes.slack_server import FakeSlack, signed_headers
from tests.support.ports import free_port

TEAM, BOT, CHANNEL, ASKER = "THELP", "UBOT", "CHELP", "UASK"
CHATTER = Path(__file__).resolve().parent / "data" / "help_channel" / "chatter.txt"
ANSWERABLE, UNANSWERABLE, QUICK = 30, 15, 3
PACE_SECONDS = 1.5
QUIET_SECONDS = 15.0
LINE_CHARS = 100


@dataclass(frozen=True)
class Message:
    kind: str
    """answerable, unanswerable or chatter."""
    text: str
    item: QaItem | None = None


def messages(quick: bool) -> list[Message]:
    """The 60 messages (a few with `quick`), interleaved as a channel would see them."""
    items = [i for i in load_questions(DOCS_QUESTIONS, "heldout") if not i.history]
    answerable = [i for i in items if i.answerable][: QUICK if quick else ANSWERABLE]
    unanswerable = [i for i in items if not i.answerable][: QUICK if quick else UNANSWERABLE]
    chatter = CHATTER.read_text().splitlines()[: QUICK if quick else UNANSWERABLE]
    groups = [
        [Message("answerable", i.question, i) for i in answerable],
        [Message("unanswerable", i.question, i) for i in unanswerable],
        [Message("chatter", line) for line in chatter],
    ]
    mixed: list[Message] = []
    for n in range(max(len(g) for g in groups)):
        mixed += [g[n] for g in groups if n < len(g)]
    return mixed


async def prepare(home: Path, quick: bool, items: list[QaItem]) -> dict[str, Any]:
    """A Lore home whose help channel's own index holds the docs corpus (with `quick`, the
    gold files of the questions asked and a few others)."""
    services = build_services(_settings(home))
    try:
        channel = await asyncio.to_thread(
            services.directory.ensure_channel, TEAM, CHANNEL, "ask-eng", is_private=False
        )
        conversation = await asyncio.to_thread(services.directory.channel_conversation, channel)
        index = await services.catalog.channel_index(channel)
        await services.catalog.enable(conversation, index, as_default=True)
        await asyncio.to_thread(
            services.directory.set_conversation_options, conversation.id, help_channel=True
        )
        sources = list(folder_sources(DOCS_CORPUS))
        if quick:
            gold = {g for i in items for g in i.gold}
            sources = [s for s in sources if s.key in gold] + [s for s in sources if s.key not in gold][:5]
        started = time.perf_counter()
        await services.ingestor.add_many(index, sources)
        return {"files": len(sources), "ingest_seconds": round(time.perf_counter() - started, 1)}
    finally:
        await services.aclose()


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    posted = messages(quick)
    home = workdir / "help-channel"
    prepared = await prepare(home, quick, [m.item for m in posted if m.item is not None])
    simulated = await simulate(home, posted)
    return {**prepared, **simulated, "verified": await verified.run(workdir / "verified", quick)}


async def simulate(home: Path, posted: list[Message]) -> dict[str, Any]:
    port = free_port()
    async with FakeSlack("xoxb-bench", TEAM, BOT) as slack:
        slack.add_channel(CHANNEL, "ask-eng")
        slack.add_user(ASKER, "asker")
        async with lore_run(home, port, slack.api_url, None), aiohttp.ClientSession() as http:
            threads = []
            for n, message in enumerate(posted):
                threads.append(await _post(http, port, slack, message.text, n))
                await asyncio.sleep(PACE_SECONDS)
            await _quiet(slack, QUIET_SECONDS)
            results = []
            for message, ts in zip(posted, threads, strict=True):
                answer = next((m for m in slack.thread(CHANNEL, ts) if m.get("user") == BOT), None)
                whole = await _show_more(http, port, slack, answer) if answer else ""
                results.append(_scored(message, ts, answer, whole, slack))
    return _report(results)


def _scored(
    message: Message, ts: str, answer: dict[str, Any] | None, whole: str, slack: FakeSlack
) -> dict[str, Any]:
    shown = _shown(answer) if answer else ""
    facts = message.item.facts if message.item else ()
    unsure = any(  # the private "not sure" offer carries "Ask an expert" ("Show more"'s reply does not)
        c.method == "chat.postEphemeral"
        and c.params.get("channel") == CHANNEL
        and c.params.get("thread_ts") == ts
        and "answer_escalate" in json.dumps(c.params.get("blocks") or [])
        for c in slack.calls
    )
    return {
        "kind": message.kind,
        "id": message.item.id if message.item else None,
        "text": message.text,
        "answered": answer is not None,
        "lines": _lines(shown) if answer else 0,
        "facts_shown": bool(facts) and all(holds(f, shown) for f in facts),
        "facts_whole": bool(facts) and all(holds(f, f"{shown}\n{whole}") for f in facts),
        "unsure_offer": unsure,
    }


def _report(results: list[dict[str, Any]]) -> dict[str, Any]:
    answered = [r for r in results if r["answered"]]
    answerable = [r for r in results if r["kind"] == "answerable"]
    other = [r for r in results if r["kind"] != "answerable"]
    lines = sorted(r["lines"] for r in answered)
    return {
        "messages": len(results),
        "answered": len(answered),
        "precision": _share(sum(r["facts_shown"] for r in answered), len(answered)),
        "precision_whole": _share(sum(r["facts_whole"] for r in answered), len(answered)),
        "false_answers": sum(r["answered"] for r in other),
        "false_answer_rate": _share(sum(r["answered"] for r in other), len(other)),
        "recall": _share(sum(r["answered"] for r in answerable), len(answerable)),
        "by_kind": {
            kind: {
                "messages": sum(r["kind"] == kind for r in results),
                "answered": sum(r["answered"] for r in results if r["kind"] == kind),
                "unsure_offers": sum(r["unsure_offer"] for r in results if r["kind"] == kind),
            }
            for kind in ("answerable", "unanswerable", "chatter")
        },
        "lines": {"p50": lines[len(lines) // 2] if lines else 0, "max": lines[-1] if lines else 0},
        "items": results,
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def _shown(message: dict[str, Any]) -> str:
    """What a Slack message shows before its sources line and buttons."""
    texts = []
    for block in message.get("blocks") or []:
        if block["type"] == "markdown":
            texts.append(block["text"])
        elif block["type"] == "section":
            texts.append(block["text"]["text"])
        elif block["type"] == "context":
            texts += [
                e.get("text", "") for e in block["elements"] if not e.get("text", "").startswith("Sources:")
            ]
    return "\n".join(texts).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _lines(text: str) -> int:
    return sum(max(1, math.ceil(len(line) / LINE_CHARS)) for line in text.split("\n"))


async def _post(http: aiohttp.ClientSession, port: int, slack: FakeSlack, text: str, n: int) -> str:
    ts = slack._next_ts()
    slack.add_message(CHANNEL, ts, text, ASKER)
    event = {"type": "message", "channel_type": "channel", "user": ASKER, "text": text, "ts": ts,
             "channel": CHANNEL, "event_ts": ts, "team": TEAM}  # fmt: skip
    await _signed(http, port, json.dumps({
        "team_id": TEAM, "api_app_id": "ABENCH", "event": event, "type": "event_callback",
        "event_id": f"EvHELP{n:04d}", "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT, "is_bot": True}],
    }), "application/json")  # fmt: skip
    return ts


async def _show_more(http: aiohttp.ClientSession, port: int, slack: FakeSlack, answer: dict[str, Any]) -> str:
    """Press "Show more" under an answer; the whole answer Lore then shows privately."""
    buttons = [
        e
        for b in answer.get("blocks") or []
        for e in b.get("elements") or []
        if e.get("action_id") == "answer_more"
    ]
    if not buttons:
        return ""
    before, shown = len(slack.calls), len(slack.calls_to("chat.postEphemeral"))
    payload = {
        "type": "block_actions", "team": {"id": TEAM}, "user": {"id": ASKER, "team_id": TEAM}, "api_app_id": "ABENCH",
        "container": {"type": "message", "message_ts": answer["ts"], "channel_id": CHANNEL},
        "trigger_id": "1.t", "channel": {"id": CHANNEL}, "message": answer,
        "actions": [{"type": "button", "action_id": "answer_more", "block_id": "b", "value": buttons[0]["value"],
                     "action_ts": slack._next_ts()}],
    }  # fmt: skip
    await _signed(
        http, port, urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
    )
    await slack.wait_for("chat.postEphemeral", count=shown + 1, timeout=60)
    await asyncio.sleep(0.5)
    return "\n".join(_shown(c.params) for c in slack.calls[before:] if c.method == "chat.postEphemeral")


async def _signed(http: aiohttp.ClientSession, port: int, body: str, kind: str) -> None:
    headers = {"Content-Type": kind, **signed_headers(body, SECRET)}
    async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body, headers=headers) as response:
        assert response.status == 200, response.status


async def _quiet(slack: FakeSlack, seconds: float) -> None:
    """Until Lore has made no Web API call for `seconds`."""
    seen, still = len(slack.calls), 0.0
    while still < seconds:
        await asyncio.sleep(0.5)
        still = still + 0.5 if len(slack.calls) == seen else 0.0
        seen = len(slack.calls)
