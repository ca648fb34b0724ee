"""A help channel, simulated through the real `lore run` (HTTP mode, a process of its own)
against the fake Slack Web API: 60 top-level messages to nobody over the docs corpus
(`bench/data/help_channel/README.md` says which), and what Lore did with each.

Reported: how many Lore answered; precision, the share of those answers that hold every
required fact of their question in what Slack shows before "Show more" (goal ≥ 0.9), and in
the whole answer; how many unanswerable questions and chatter got an answer (goal ≤ 1 in
20); recall, the share of answerable questions answered; the private "not sure" offers.

Also the verified answers' measure (`bench.verified`): after 10 verified answers, how many
rewordings of their questions get the verified answer first.

`make bench` runs the held-out half at the configured threshold. The threshold itself
(`LORE_HELP_CONFIDENCE`) is chosen on the tune half: `python -m bench.help_channel --split tune`
posts the tune half's questions and `chatter-tune.txt` with the threshold at 0 (Lore answers
whatever it does not abstain on), reads each message's confidence from `lore run`'s log, and
draws precision and recall against the threshold (`curve`, `choose`);
`python -m bench.help_channel --split heldout` is the held-out run, done once with the chosen
setting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import shutil
import sys
import tempfile
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
DATA = Path(__file__).resolve().parent / "data" / "help_channel"
CHATTER = {"heldout": DATA / "chatter.txt", "tune": DATA / "chatter-tune.txt"}
ANSWERABLE, UNANSWERABLE, QUICK = 30, 15, 3
"""The held-out run's messages of each kind; the tune run posts every single-turn question
of the tune half (69 answerable, 30 unanswerable) and its 30 lines of chatter."""
PACE_SECONDS = 1.5
DECIDE_SECONDS = 30.0
"""How long, on a loaded machine, each message may take Lore to decide on, at most."""
LINE_CHARS = 100
THRESHOLDS = [round(0.40 + 0.025 * n, 3) for n in range(23)] + [0.96, 0.97, 0.98, 0.99, 0.995]
"""The tune curve's thresholds, 0.40 to 0.995 (below the calibrated threshold, about 0.44,
Lore abstains anyway). The points above 0.95 were added after the first tune run showed
its confidences crowding near 1 (the tune half's own data; the held-out half was not run)."""
PRECISION_GOAL, FALSE_GOAL, FEWEST_ANSWERS = 0.9, 0.05, 5
"""The goals, and the fewest answers a threshold must give for its precision to count."""
DECISION = re.compile(
    r"help channel post (?P<ts>\d+\.\d+) \(conversation \d+\): (?P<what>answered|left alone[^(\n]*)"
    r"(?:\s*\((?:abstained|confidence (?P<confidence>[\d.]+)))?"
)
RESULTS_OF = {
    split: Path(__file__).resolve().parent / "results" / f"help_channel_{split}.json"
    for split in ("tune", "heldout")
}


@dataclass(frozen=True)
class Message:
    kind: str
    """answerable, unanswerable or chatter."""
    text: str
    item: QaItem | None = None


def messages(quick: bool, split: str = "heldout") -> list[Message]:
    """The held-out half's 60 messages, or the tune half's 129 (a few with `quick`),
    interleaved as a channel would see them."""
    items = [i for i in load_questions(DOCS_QUESTIONS, split) if not i.history]
    answerable = [i for i in items if i.answerable]
    unanswerable = [i for i in items if not i.answerable]
    chatter = CHATTER[split].read_text().splitlines()
    if quick:
        answerable, unanswerable, chatter = answerable[:QUICK], unanswerable[:QUICK], chatter[:QUICK]
    elif split == "heldout":
        answerable, unanswerable, chatter = (
            answerable[:ANSWERABLE],
            unanswerable[:UNANSWERABLE],
            chatter[:UNANSWERABLE],
        )
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
    """`make bench`'s section: the held-out half at the configured threshold."""
    posted = messages(quick)
    home = workdir / "help-channel"
    prepared = await prepare(home, quick, [m.item for m in posted if m.item is not None])
    simulated = await simulate(home, posted)
    return {**prepared, **simulated, "verified": await verified.run(workdir / "verified", quick)}


async def run_split(
    workdir: Path, split: str, quick: bool, confidence: float | None, prepared: Path | None
) -> dict[str, Any]:
    """One half's simulation (the tune half with its curve); `prepared`: a folder keeping an
    ingested home between runs (the docs corpus takes a quarter of an hour to ingest on a
    loaded machine), filled on first use."""
    posted = messages(quick, split)
    home = workdir / "help-channel"
    if prepared is not None and (prepared / "ready").exists():
        shutil.copytree(prepared, home)
        ingested: dict[str, Any] = json.loads((prepared / "ready").read_text())
    else:
        ingested = await prepare(home, quick, [m.item for m in posted if m.item is not None])
        if prepared is not None:
            shutil.rmtree(prepared, ignore_errors=True)
            shutil.copytree(home, prepared)
            (prepared / "ready").write_text(json.dumps(ingested))
    env = {} if confidence is None else {"LORE_HELP_CONFIDENCE": str(confidence)}
    simulated = await simulate(home, posted, env)
    report = {"split": split, "help_confidence": confidence, **ingested, **simulated}
    if split == "tune":
        report["curve"] = curve(simulated["items"])
        report["chosen"] = choose(report["curve"])
    return report


async def simulate(home: Path, posted: list[Message], env: dict[str, str] | None = None) -> dict[str, Any]:
    port = free_port()
    log = home / "lore-run.log"
    async with FakeSlack("xoxb-bench", TEAM, BOT) as slack:
        slack.add_channel(CHANNEL, "ask-eng")
        slack.add_user(ASKER, "asker")
        async with (
            lore_run(home, port, slack.api_url, None, settings=env),
            aiohttp.ClientSession() as http,
        ):
            start = log.stat().st_size if log.exists() else 0
            threads = []
            for n, message in enumerate(posted):
                threads.append(await _post(http, port, slack, message.text, n))
                await asyncio.sleep(PACE_SECONDS)
            decisions = await _decided(log, start, threads, DECIDE_SECONDS * len(posted))
            results = []
            for message, ts in zip(posted, threads, strict=True):
                decision = decisions.get(ts)
                answer = await _answer(slack, ts) if decision and decision[0] == "answered" else None
                whole = await _show_more(http, port, slack, answer) if answer else ""
                results.append(_scored(message, ts, answer, whole, slack, decision))
    return _report(results)


def curve(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Precision, false answers and recall had Lore answered only at `threshold` or more: from
    a run at threshold 0, where every message Lore did not abstain on was answered."""
    points = []
    for threshold in THRESHOLDS:
        answered = [i for i in items if i["answered"] and (i["confidence"] or 0.0) >= threshold]
        answerable = [i for i in items if i["kind"] == "answerable"]
        other = [i for i in items if i["kind"] != "answerable"]
        false = sum(i["kind"] != "answerable" for i in answered)
        points.append(
            {
                "threshold": threshold,
                "answered": len(answered),
                "precision": _share(sum(i["facts_shown"] for i in answered), len(answered)),
                "precision_whole": _share(sum(i["facts_whole"] for i in answered), len(answered)),
                "false_answers": false,
                "false_answer_rate": _share(false, len(other)),
                "recall": _share(sum(i["kind"] == "answerable" for i in answered), len(answerable)),
            }
        )
    return points


def choose(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The threshold the tune half picks, by a rule fixed before the run: the lowest that meets
    both goals (the most recall); else, among those within the false-answer goal, the one with
    the best precision at a glance (the lowest of equals); a threshold giving fewer than
    `FEWEST_ANSWERS` answers does not count."""
    counted = [p for p in points if p["answered"] >= FEWEST_ANSWERS]
    both = [p for p in counted if p["precision"] >= PRECISION_GOAL and p["false_answer_rate"] <= FALSE_GOAL]
    if both:
        return {**both[0], "why": "the lowest threshold meeting both goals"}
    quiet = [p for p in counted if p["false_answer_rate"] <= FALSE_GOAL] or counted
    if not quiet:
        return {"threshold": None, "why": "no threshold gives enough answers"}
    best = max(quiet, key=lambda p: (p["precision"], -p["threshold"]))
    return {**best, "why": "no threshold meets both goals: the best precision within the false-answer goal"}


def _scored(
    message: Message,
    ts: str,
    answer: dict[str, Any] | None,
    whole: str,
    slack: FakeSlack,
    decision: tuple[str, float | None] | None = None,
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
        "ts": ts,
        "text": message.text,
        "answered": answer is not None,
        "cites_gold": bool(answer and message.item and _cites(answer, message.item.gold)),
        "decision": decision[0] if decision else "undecided",
        "confidence": decision[1] if decision else None,
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
        "undecided": sum(r["decision"] == "undecided" for r in results),
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


def _cites(message: dict[str, Any], gold: tuple[str, ...]) -> bool:
    """Whether the answer's sources line names one of the files that answer its question
    (by file name: why an answer misses its facts, the wrong document or the wrong lines)."""
    sources = " ".join(
        e.get("text", "")
        for b in message.get("blocks") or []
        if b["type"] == "context"
        for e in b["elements"]
        if e.get("text", "").startswith("Sources:")
    )
    return any(Path(g).name in sources for g in gold)


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


async def _decided(
    log: Path, start: int, threads: list[str], within: float
) -> dict[str, tuple[str, float | None]]:
    """What Lore decided on each posted message, as `lore run` logs it (from byte `start` of
    its log): answered or left alone, and its confidence; waits until every message has a
    decision, or `within` seconds. (Lore shows nothing while it decides, and nothing at all
    when it stays silent: a quiet Slack is no sign that it is done.)"""
    wanted, decisions = set(threads), {}
    deadline = time.monotonic() + within
    while True:
        with log.open("rb") as f:
            f.seek(start)
            text = f.read().decode("utf-8", "replace")
        for match in DECISION.finditer(text):
            if match["ts"] in wanted:
                what = "answered" if match["what"] == "answered" else match["what"].strip()
                found = match["confidence"]
                decisions[match["ts"]] = (what, float(found) if found else None)
        if len(decisions) == len(wanted) or time.monotonic() > deadline:
            return decisions
        await asyncio.sleep(1.0)


async def _answer(slack: FakeSlack, ts: str, within: float = 60.0) -> dict[str, Any] | None:
    """Lore's reply in the thread of `ts`, once Slack has it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        answer = next((m for m in slack.thread(CHANNEL, ts) if m.get("user") == BOT), None)
        if answer is not None:
            return answer
        await asyncio.sleep(0.5)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.help_channel")
    parser.add_argument("--split", choices=("tune", "heldout"), default="tune")
    parser.add_argument(
        "--confidence",
        type=float,
        help="LORE_HELP_CONFIDENCE for the run (the tune half: 0 by default, so that its curve covers "
        "every threshold; the held-out half: the configured default)",
    )
    parser.add_argument("--prepared", type=Path, help="a folder keeping the ingested home between runs")
    parser.add_argument("--quick", action="store_true", help="a few messages of each kind")
    parser.add_argument(
        "--keep", type=Path, help="run in this (new) folder and keep it, `lore run`'s log too"
    )
    parser.add_argument(
        "--redraw", action="store_true", help="only redo the tune curve and choice from the saved results"
    )
    args = parser.parse_args()
    if args.redraw:
        report = json.loads(RESULTS_OF["tune"].read_text())
        report["curve"] = curve(report["items"])
        report["chosen"] = choose(report["curve"])
        RESULTS_OF["tune"].write_text(json.dumps(report, indent=2) + "\n")
        _print(report)
        return
    confidence = 0.0 if args.confidence is None and args.split == "tune" else args.confidence
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        report = asyncio.run(run_split(args.keep, args.split, args.quick, confidence, args.prepared))
    else:
        with tempfile.TemporaryDirectory(prefix="lore-bench-help-") as workdir:
            report = asyncio.run(run_split(Path(workdir), args.split, args.quick, confidence, args.prepared))
    if not args.quick:
        RESULTS_OF[args.split].parent.mkdir(parents=True, exist_ok=True)
        RESULTS_OF[args.split].write_text(json.dumps(report, indent=2) + "\n")
    _print(report)


def _print(report: dict[str, Any]) -> None:
    print(json.dumps({k: v for k, v in report.items() if k not in ("items", "curve")}, indent=2))
    for point in report.get("curve", []):
        print(
            f"{point['threshold']:.3f}: answered {point['answered']:3d}  precision {point['precision']:.3f} "
            f"(whole {point['precision_whole']:.3f})  false {point['false_answers']:2d} "
            f"({point['false_answer_rate']:.3f})  recall {point['recall']:.3f}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
