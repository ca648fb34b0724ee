"""`python -m bench.claims` judges every hand-written claim and names the ones it gets wrong."""

from __future__ import annotations

import json
from pathlib import Path

from openai import AsyncOpenAI

from bench.claims import BLIND, CLAIMS, Claim, judge, load, run
from knowledge.backends.llm import OpenAIChatModel
from tests.fakes.openai_server import FakeOpenAI, Reply


def test_the_claims_are_counted_by_kind_and_the_misjudged_named(tmp_path: Path) -> None:
    for path in (CLAIMS, BLIND):
        claims = load(path)
        assert len(claims) >= 30 and any(c.agrees for c in claims) and not all(c.agrees for c in claims)
    passage = "By default, Requests does not retry failed connections."
    mine = [
        Claim(passage, "By default, Requests never retries failed connections [1].", agrees=True),
        Claim(passage, "By default, Requests retries failed connections [1].", agrees=False),
        Claim(
            passage,
            "Requests retries failed connections by default, unless told otherwise [1].",
            agrees=False,
        ),
    ]
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(c.__dict__) + "\n" for c in mine))
    report = run(load(path))
    assert report["agreeing_refused"] == "0 of 1" and report["opposite_refused"] == "1 of 2"
    assert report["judged_wrongly"] == [{"claim": mine[2].claim, "agrees": False, "problem": None}], (
        "'unless' denies too, so the check sees two claims that both deny and leaves them alone"
    )


async def test_the_model_judges_what_the_check_passes() -> None:
    passage = "Hooks registered on a Session are called in the order they are added."
    claims = [
        Claim(passage, "A Session calls its hooks in the reverse order they are added [1].", agrees=False),
        Claim(passage, "A Session calls its hooks in the order they were registered [1].", agrees=True),
        Claim(passage, "Hooks run in parallel threads with kubectl rollouts [1].", agrees=False),
    ]
    async with FakeOpenAI() as llm:
        llm.enqueue(Reply("1: CONTRADICTED"), Reply("Claim 1 - supported"))
        async with AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=0) as client:
            report = await judge(claims, OpenAIChatModel(client, "small-model"))
    assert report["opposite_refused"] == "2 of 2" and report["agreeing_refused"] == "0 of 1"
    assert report["no_verdict"] == 0 and report["judged_wrongly"] == []
    assert len(llm.chat_requests) == 2, "the claim the check refuses is not sent"
    shown = llm.chat_requests[0].json["messages"][1]["content"]
    assert (
        '<claim n="1" cites="1">A Session calls its hooks in the reverse order they are added.</claim>'
        in shown
    )
