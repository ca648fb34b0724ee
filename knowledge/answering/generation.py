"""Answers a model writes: the prompt under a `Rule`, streaming, the citation check, the
labels general knowledge carries, and the documents' own words when the model fails.

`knowledge.engine` decides whether to call a model and under which rule (a `Plan`); this
module carries the plan out. A model's answer under a checked rule (`Rule.checked`) is shown
only once every sentence rests on a cited passage (and, with `verify`, the model judged no
claim contradicted or unsupported by what it cites, `knowledge.answering.verification`); when it does
not, or when the model is
down or says nothing, the answer is quoted from the documents (`extractive.quote`) with a notice
saying why. It never raises for a model outage.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace

from knowledge.answering.answer import (
    Answer,
    Citation,
    Fallback,
    ResponseMode,
    Rule,
    build_prompt,
    map_citations,
)
from knowledge.answering.citations import GENERAL_MARK, attribute, check_answer, says_it_does_not_know
from knowledge.answering.extractive import abstention, quote
from knowledge.answering.verification import verify
from knowledge.backends.llm import ChatModel, Completion, Delta
from knowledge.errors import LLMUnavailable
from knowledge.judging.judge import Verdict
from knowledge.search.context import Budget, Message, select_hits
from knowledge.search.notices import HEDGED, Notice, NoticeKind
from knowledge.search.retrieval import Hit, Retrieval

log = logging.getLogger(__name__)


def own_knowledge(reply: str, hits: Sequence[Hit], question: str) -> list[Notice]:
    """The label of a reply the model wrote from its own knowledge first, shown the passages
    `hits`: none when every claim of it rests on a passage it cites (`check_answer`)."""
    return [] if check_answer(reply, hits, asked=question).ok else [Notice(NoticeKind.MODEL_FIRST)]


@dataclass(frozen=True)
class Plan:
    """A generation decided on: the prompt's parts and how to label the result."""

    question: str
    history: list[Message]
    retrieval: Retrieval
    rule: Rule
    mode: ResponseMode
    budget: Budget
    verdict: Verdict | None = None
    """The judge's verdict on the passages (after the model's rerank); None when nothing was
    looked for."""
    fallback: Fallback | None = None
    notices: list[Notice] = field(default_factory=list)
    """Said above the model's answer (whose project the passages found are for)."""
    instructions: str = ""
    verify: bool = False
    """The model also judges each claim (`knowledge.answering.verification`), whatever the
    writer's default: where Lore speaks unasked."""


class Writer:
    """Has `chat` write the answer a `Plan` calls for; the documents are quoted instead
    (`knowledge.answering.extractive.quote`) when the model's answer cannot be shown."""

    def __init__(self, chat: ChatModel, *, verify: bool = False) -> None:
        self._chat = chat
        self._verify = verify  # an answer that passed the citation check goes to the model's judgement too

    async def write(self, plan: Plan, stream: bool) -> AsyncIterator[Delta | Answer]:
        """Yield the answer's text as the model writes it (when `stream`, and the rule's
        answer needs no check before it is shown), then the `Answer`."""
        hits = select_hits(plan.retrieval.hits, plan.budget.context_tokens) if plan.rule.with_sources else []
        prompt = build_prompt(plan.question, plan.history, hits, plan.rule, plan.instructions)
        completion: Completion | None = None
        try:
            if stream and not plan.rule.checked:
                async for event in self._chat.stream(prompt, max_tokens=plan.budget.max_tokens):
                    if isinstance(event, Delta):
                        yield event
                    else:
                        completion = event
            else:
                completion = await self._chat.complete(prompt, max_tokens=plan.budget.max_tokens)
        except LLMUnavailable as exc:
            yield self._degraded(plan, Notice(NoticeKind.MODEL_FAILED, str(exc)))
            return
        assert completion is not None
        yield await self._finish(plan, completion, hits)

    async def _finish(self, plan: Plan, completion: Completion, hits: list[Hit]) -> Answer:
        problem = completion.problem
        if not completion.text.strip():
            return self._degraded(plan, Notice(NoticeKind.MODEL_SILENT, problem or ""))
        reply = completion.text
        if plan.rule.checked:
            if says_it_does_not_know(reply):
                answer = abstention(plan.retrieval, plan.mode, plan.verdict)
                return replace(answer, model=completion.model)
            general = plan.rule == Rule.FILL_GAPS
            reply = attribute(reply, hits, general_allowed=general, asked=plan.question)
            problems = check_answer(reply, hits, general_allowed=general, asked=plan.question).problems
            if not problems and (self._verify or plan.verify):
                problems = await verify(self._chat, reply, hits, general_allowed=general)
            if problems:
                log.info("generated answer failed the check: %s", "; ".join(problems))
                said = (
                    [Notice(NoticeKind.MODEL_PROBLEM, problem)] if problem else []
                )  # why it may have failed
                return self._degraded(plan, Notice(NoticeKind.UNVERIFIED), Fallback.UNVERIFIED, said)
        text, citations = map_citations(reply, hits)
        labels = self._labels(plan, reply, hits)
        hedged = plan.rule.checked and plan.verdict is not None and plan.verdict.hedged
        return Answer(
            text=text,
            citations=citations,
            mode=plan.mode,
            fallback=plan.fallback,
            notices=[
                *([HEDGED] if hedged else []),
                *plan.retrieval.notices,
                *plan.notices,
                *labels,
                *([Notice(NoticeKind.MODEL_PROBLEM, problem)] if problem else []),
            ],
            searched=[i.name for i in plan.retrieval.searched],
            model=completion.model,
            context=[Citation.from_hit(n, hit) for n, hit in enumerate(hits, start=1)],
            confidence=plan.verdict.confidence if plan.verdict is not None else None,
        )

    @staticmethod
    def _labels(plan: Plan, reply: str, hits: list[Hit]) -> list[Notice]:
        """What the answer says of where its words come from: the model's general knowledge
        (`Rule.GENERAL`, `Rule.MODEL_ONLY`), sentences it marked so (`Rule.FILL_GAPS`), or its
        own knowledge first, unless every claim of that rests on a cited passage
        (`Rule.MODEL_FIRST`)."""
        if plan.rule in (Rule.GENERAL, Rule.MODEL_ONLY):
            return [Notice(NoticeKind.GENERAL_KNOWLEDGE)]
        if plan.rule == Rule.FILL_GAPS and GENERAL_MARK in reply.lower():
            return [Notice(NoticeKind.PARTLY_GENERAL)]
        return own_knowledge(reply, hits, plan.question) if plan.rule == Rule.MODEL_FIRST else []

    @staticmethod
    def _degraded(
        plan: Plan,
        notice: Notice,
        fallback: Fallback = Fallback.LLM_UNAVAILABLE,
        more: Sequence[Notice] = (),
    ) -> Answer:
        """What the documents say, with `notice` (and `more`) saying why the model's answer
        is not shown."""
        return quote(
            plan.verdict or Verdict.nothing(plan.question),
            plan.retrieval,
            plan.mode,
            fallback=fallback,
            notices=[notice, *more],
        )
