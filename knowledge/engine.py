"""`Knowledge`: the one entry point of the RAG engine, used by Slack, the shell, the CLI
and the HTTP API alike. It decides, per request and response mode, whether to retrieve,
whether to call the model and what to fall back to; it never raises for a model outage.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from knowledge.abstain import CALIBRATION, Calibration, Evidence, elsewhere, evidence
from knowledge.answer import (
    HEDGE_NOTICE,
    Answer,
    Citation,
    Fallback,
    FallbackStrategy,
    ResponseMode,
    build_prompt,
    map_citations,
)
from knowledge.cache import TTLCache, normalise_query, stable_key
from knowledge.citations import GENERAL_MARK, attribute, check_answer, says_it_does_not_know
from knowledge.context import (
    DEFAULT_RATIO,
    Budget,
    Message,
    plan_budget,
    select_hits,
    split_conversation,
)
from knowledge.errors import EmbedderUnavailable, LLMUnavailable
from knowledge.extractive import MOST_QUOTED, abstention, extractive_answer
from knowledge.filters import Filter
from knowledge.followup import rewrite, standalone_question
from knowledge.llm import ChatModel, Completion, Delta
from knowledge.ranking import Ranker, Ranking, Scored
from knowledge.rerank import Reranked, rerank
from knowledge.retrieval import Retrieval, Retriever
from knowledge.tools import ToolHost, answer_with_tools
from storage.records import IndexRef

log = logging.getLogger(__name__)

READ_ON = MOST_QUOTED
"""How many of the best passages an answer may quote on into the passage that follows."""
CONFIDENCE_MARGIN = 0.15
"""How much more similar than the relevance floor the `confidence` strategy demands."""
CHECKED = {"documents", "fill_gaps"}
"""Knowledge rules whose generated answers must cite the documents (`knowledge.citations`)."""
UNVERIFIED_NOTICE = (
    "The model's answer did not rest every claim on a cited document, so here is what the documents say."
)
GENERAL_NOTICE = "Not from your documents: this answer comes from the model's general knowledge."
PARTLY_GENERAL_NOTICE = "Sentences marked (general knowledge) are not from your documents."
NEEDS_MODEL = {
    ResponseMode.LLM_ONLY,
    ResponseMode.HYBRID,
    ResponseMode.RAG_PRIORITY,
    ResponseMode.LLM_PRIORITY,
}


@dataclass(frozen=True)
class AnswerSpec:
    """When documents count as relevant, calibrated for the local MiniLM embedder."""

    relevance_floor: float = 0.30
    """Below this best cosine similarity nothing found is relevant: abstain without
    looking further. Above it, the calibrated confidence (`knowledge.abstain`) decides."""
    confident_similarity: float = 0.55
    """The similarity at which retrieval confidence reaches 1.0."""
    min_confidence: float = 0.7
    generative_top_k: int = 12
    extractive_top_k: int = 12
    """Passages retrieved for the second stage to rank when answering without a model."""
    llm_rerank: int = 0
    """With a model: how many of the second stage's best passages it reorders before
    answering (`knowledge.rerank`); 0 leaves the order to the second stage."""
    mode: ResponseMode = ResponseMode.SMART_FALLBACK


class Strategy(enum.StrEnum):
    """When to retrieve: on every question (`always`), only when retrieval is confident
    (`confidence`), only for questions about knowledge (`smart`), or when the model asks
    for it through tool calls (`function`, needs a model)."""

    ALWAYS = "always"
    CONFIDENCE = "confidence"
    SMART = "smart"
    FUNCTION = "function"


CHIT_CHAT = re.compile(
    r"^\W*(?:hi|hello|hey|thanks|thank you|thx|ok|okay|cool|great|nice|bye|good (?:morning|night))\b[\w\s!.,]*$",
    re.IGNORECASE,
)


def is_knowledge_question(text: str) -> bool:
    """The `smart` strategy's classifier: greetings and thanks are not questions to look up."""
    return not CHIT_CHAT.match(text.strip()) and len(text.split()) >= 2


@dataclass(frozen=True)
class Request:
    indexes: Sequence[IndexRef]
    messages: Sequence[Message]
    mode: ResponseMode | None = None
    strategy: Strategy = Strategy.ALWAYS
    tools: ToolHost | None = None
    max_tokens: int | None = None
    ratio: float = DEFAULT_RATIO
    where: Filter | None = None
    context: Mapping[str, Any] | None = None
    instructions: str = ""
    """The caller's own system instructions, given to the model after Lore's."""
    min_confidence: float | None = None
    """Overrides `AnswerSpec.min_confidence` (SMART_FALLBACK) for this request."""
    fallback: FallbackStrategy = FallbackStrategy.LLM_KNOWLEDGE

    def __post_init__(self) -> None:
        # An index locked to its documents answers from them alone, whoever asks and however.
        if any(index.documents_only for index in self.indexes):
            object.__setattr__(self, "mode", ResponseMode.RAG_ONLY)


@dataclass(frozen=True)
class _Plan:
    """A generation decided on: the prompt's parts and how to label the result."""

    question: str
    history: list[Message]
    retrieval: Retrieval
    rule: str
    mode: ResponseMode
    budget: Budget
    fallback: Fallback | None = None
    notices: list[str] = field(default_factory=list)
    """Said above the model's answer (whose project the passages found are for)."""
    instructions: str = ""
    ranking: Ranking | None = None
    confidence: float | None = None
    doubted: bool = False
    """The model's rerank said none of the passages helps (`knowledge.rerank`)."""


class Knowledge:
    def __init__(
        self,
        retriever: Retriever,
        chat: ChatModel | None,
        *,
        window: int,
        spec: AnswerSpec | None = None,
        ranker: Ranker | None = None,
        calibration: Calibration = CALIBRATION,
    ) -> None:
        self._retriever = retriever
        self._chat = chat
        self._window = window
        self._spec = spec or AnswerSpec()
        self._ranker = ranker or Ranker(retriever.embedder, retriever.term_frequencies)
        self._calibration = calibration
        self._answers: TTLCache[Answer] = TTLCache()

    @property
    def generative(self) -> bool:
        return self._chat is not None

    @property
    def model(self) -> str | None:
        """The chat model answers are generated with; None when answers are extractive."""
        return self._chat.model if self._chat is not None else None

    async def ask(self, request: Request) -> Answer:
        """Answer the conversation's latest question (no streaming)."""
        answer: Answer | None = None
        async for event in self.ask_stream(request, stream=False):
            if isinstance(event, Answer):
                answer = event
        assert answer is not None
        return answer

    async def ask_stream(self, request: Request, *, stream: bool = True) -> AsyncIterator[Delta | Answer]:
        """Yield answer text as the model writes it (when it does), then the `Answer`."""
        key = self._cache_key(request)
        cached = self._answers.get(key)
        if cached is not None:
            yield cached
            return
        decided = await self._plan(request)
        if isinstance(decided, Answer):
            final = decided
            yield final
        else:
            final = None
            async for event in self._generate(decided, stream):
                if isinstance(event, Answer):
                    final = event
                yield event
        if (
            final is not None
            and set(final.notices) <= {HEDGE_NOTICE}
            and request.strategy != Strategy.FUNCTION
        ):
            self._answers.put(key, final)

    def confidence(self, retrieval: Retrieval) -> float:
        """Retrieval confidence in [0, 1] from the best dense similarity."""
        best = retrieval.best_similarity
        if best is None:
            return 0.5 if retrieval.hits else 0.0
        floor, top = self._spec.relevance_floor, self._spec.confident_similarity
        return min(1.0, max(0.0, (best - floor) / (top - floor)))

    def relevant(self, retrieval: Retrieval) -> bool:
        """Whether anything found is close enough to the question to be worth ranking."""
        if not retrieval.hits:
            return False
        best = retrieval.best_similarity
        return best is None or best >= self._spec.relevance_floor

    async def judge(self, question: str, retrieval: Retrieval) -> tuple[Ranking, float]:
        """The second stage's ranking of what was found, and the calibrated confidence that
        it answers the question (0.0 when nothing relevant was found, or when the best
        passage answers for another project than the question names: `elsewhere`)."""
        if not self.relevant(retrieval):
            return Ranking(question, []), 0.0
        ranking, found = await self.weigh(question, retrieval)
        if found is None:
            return ranking, self._calibration.threshold
        confidence = 0.0 if elsewhere(ranking) else self._calibration.confidence(found)
        if self.answers(confidence):
            ranking = await self._read_on(ranking)
        return ranking, confidence

    async def weigh(self, question: str, retrieval: Retrieval) -> tuple[Ranking, Evidence | None]:
        """The second stage's ranking of what was found and the evidence abstention reads
        (`knowledge.abstain`); with nothing to weigh (keyword hits only, the embedder failed),
        the first stage's order and None."""
        unweighed = Ranking(question, [Scored(h, h.score, []) for h in retrieval.hits])
        if retrieval.best_similarity is None:
            return unweighed, None
        before = await self._retriever.preceding(retrieval.hits[: self._ranker.depth])
        try:
            ranking = await self._ranker.rank(question, retrieval.hits, before)
        except EmbedderUnavailable as exc:
            log.warning("second stage skipped, the embedder failed: %s", exc)
            return unweighed, None
        found = evidence(ranking, retrieval.hits)
        return (ranking, found) if found is not None else (unweighed, None)

    async def _read_on(self, ranking: Ranking) -> Ranking:
        """The ranking with its first `READ_ON` passages each read on into the passage that
        follows it in its document (what their quotes may continue into: a passage often
        ends by introducing the list or the example that answers)."""
        passages = list(ranking.passages)
        for i, passage in enumerate(passages[:READ_ON]):
            if not passage.units:
                continue
            following = await self._retriever.following(passage.hit)
            if following is not None:
                passages[i] = self._ranker.read_on(ranking, passage, following)
        return replace(ranking, passages=passages)

    def answers(self, confidence: float) -> bool:
        return confidence >= self._calibration.threshold

    def hedges(self, confidence: float | None) -> bool:
        """Whether an answer at `confidence` comes with a caveat (`Calibration.hedge`)."""
        return confidence is not None and self.answers(confidence) and confidence < self._calibration.hedge

    def _unsure(self, plan: _Plan) -> bool:
        """Whether an answer from the plan's passages carries the hedge: its confidence is
        under `Calibration.hedge`, or the model's rerank found none of them helpful."""
        return plan.doubted or self.hedges(plan.confidence)

    async def _plan(self, request: Request) -> _Plan | Answer:
        conversation = split_conversation(request.messages)
        mode = request.mode or self._spec.mode
        if request.strategy == Strategy.FUNCTION and self._chat is not None and mode != ResponseMode.LLM_ONLY:
            return await answer_with_tools(
                self._chat,
                self._retriever,
                request.indexes,
                conversation.question,
                conversation.history,
                request.tools,
                mode,
            )
        if request.strategy == Strategy.SMART and not is_knowledge_question(conversation.question):
            mode = ResponseMode.LLM_ONLY
        budget = plan_budget(
            request.messages,
            conversation.question,
            window=self._window,
            max_tokens=request.max_tokens,
            ratio=request.ratio,
        )
        if mode == ResponseMode.LLM_ONLY and self._chat is not None:
            empty = Retrieval([], conversation.question, list(request.indexes), None)
            return _Plan(
                conversation.question,
                conversation.history,
                empty,
                "model_only",
                mode,
                budget,
                instructions=request.instructions,
            )
        query = await self._standalone(conversation.question, conversation.history)
        retrieval = await self._search(request, query, budget)
        ranking, confidence = await self.judge(query, retrieval)
        fallback = Fallback.KEYWORD_ONLY if retrieval.notices else None
        if self._chat is None:
            return self._offline(ranking, confidence, retrieval, mode, fallback)
        misplaced = elsewhere(ranking)
        rule = self._rule(mode, retrieval, request, confidence, trusted=misplaced is None)
        if rule is None:
            return abstention(retrieval, mode, ranking=ranking, confidence=confidence, fallback=fallback)
        if rule == "general":
            fallback = Fallback.GENERAL_KNOWLEDGE
        # Passages found for another project lead only to general knowledge, or to the model's
        # own answer first (LLM_PRIORITY): either way the answer says whose the passages are.
        notices = [misplaced.notice] if misplaced else []
        reranked = await self._reranked(rule, query, ranking, budget)
        return _Plan(
            conversation.question,
            conversation.history,
            replace(retrieval, hits=reranked.ranking.hits or retrieval.hits),
            rule,
            mode,
            budget,
            fallback,
            notices,
            instructions=request.instructions,
            ranking=reranked.ranking,
            confidence=confidence,
            doubted=reranked.doubted,
        )

    async def _standalone(self, question: str, history: list[Message]) -> str:
        """The question as a search query of its own (`knowledge.followup`)."""
        if self._chat is not None:
            return await rewrite(self._chat, question, history)
        return standalone_question(question, history)

    async def _reranked(self, rule: str, query: str, ranking: Ranking, budget: Budget) -> Reranked:
        """The ranking as the model orders it (`knowledge.rerank`), when the answer is to
        be made from the documents; the passages it is shown fit the answer's context."""
        if rule == "general" or self._chat is None:
            return Reranked(ranking)
        return await rerank(self._chat, query, ranking, self._spec.llm_rerank, budget.context_tokens)

    async def _search(self, request: Request, question: str, budget: Budget) -> Retrieval:
        """Retrieve for the question; the `confidence` strategy keeps only confident hits."""
        retrieval = await self._retriever.search(
            request.indexes,
            question,
            top_k=self._spec.generative_top_k if self._chat else self._spec.extractive_top_k,
            candidates=budget.candidates,
            where=request.where,
            context=request.context,
        )
        if request.strategy == Strategy.CONFIDENCE:
            floor = self._spec.relevance_floor + CONFIDENCE_MARGIN
            if len(question.split()) < 3 or (retrieval.best_similarity or 0.0) < floor:
                return replace(retrieval, hits=[])
        return retrieval

    def _rule(
        self, mode: ResponseMode, retrieval: Retrieval, request: Request, confidence: float, *, trusted: bool
    ) -> str | None:
        """Which knowledge the model may use; None means abstain without calling it. SMART_FALLBACK
        lets a close enough passage through whatever the confidence, unless the passages are not
        `trusted`: found for another project than the question names (`elsewhere`)."""
        relevant = self.answers(confidence)
        general = None if request.fallback == FallbackStrategy.NONE else "general"
        if mode == ResponseMode.RAG_ONLY:
            return "documents" if relevant else None
        if mode == ResponseMode.LLM_PRIORITY:
            return "model_first"
        if mode == ResponseMode.RAG_PRIORITY:
            return "fill_gaps" if relevant else general
        if mode == ResponseMode.SMART_FALLBACK:
            threshold = request.min_confidence
            close = self.confidence(retrieval) >= (
                self._spec.min_confidence if threshold is None else threshold
            )
            if close and trusted:
                return "documents"
            if relevant and request.fallback == FallbackStrategy.HYBRID:
                return "fill_gaps"
        return "documents" if relevant else general  # HYBRID, and SMART_FALLBACK when unsure

    def _offline(
        self,
        ranking: Ranking,
        confidence: float,
        retrieval: Retrieval,
        mode: ResponseMode,
        fallback: Fallback | None,
    ) -> Answer:
        notices = []
        if mode in NEEDS_MODEL:
            fallback = fallback or Fallback.NO_LLM
            notices.append(f"No language model is configured, so {mode.value} answers quote the documents.")
        if not ranking.passages or not self.answers(confidence):
            return abstention(
                retrieval, mode, ranking=ranking, confidence=confidence, fallback=fallback, notices=notices
            )
        return extractive_answer(
            ranking,
            retrieval,
            mode,
            confidence=confidence,
            fallback=fallback,
            notices=notices,
            relevance_floor=self._spec.relevance_floor,
            hedged=self.hedges(confidence),
        )

    async def _generate(self, plan: _Plan, stream: bool) -> AsyncIterator[Delta | Answer]:
        assert self._chat is not None
        with_sources = plan.rule not in ("general", "model_only")
        hits = select_hits(plan.retrieval.hits, plan.budget.context_tokens) if with_sources else []
        prompt = build_prompt(plan.question, plan.history, hits, plan.rule, plan.instructions)
        completion: Completion | None = None
        stream = stream and plan.rule not in CHECKED  # a checked answer is shown once checked
        try:
            if stream:
                async for event in self._chat.stream(prompt, max_tokens=plan.budget.max_tokens):
                    if isinstance(event, Delta):
                        yield event
                    else:
                        completion = event
            else:
                completion = await self._chat.complete(prompt, max_tokens=plan.budget.max_tokens)
        except LLMUnavailable as exc:
            yield self._degraded(plan, f"{exc}, so here is what the documents say.")
            return
        assert completion is not None
        yield self._finish(plan, completion, hits)

    def _finish(self, plan: _Plan, completion: Completion, hits: list[Any]) -> Answer:
        problem = completion.problem
        if not completion.text.strip():
            return self._degraded(
                plan, f"{problem or 'the model gave no answer'}; here is what the documents say."
            )
        reply = completion.text
        if plan.rule in CHECKED:
            if says_it_does_not_know(reply):
                answer = abstention(
                    plan.retrieval, plan.mode, ranking=plan.ranking, confidence=plan.confidence
                )
                return replace(answer, model=completion.model)
            general = plan.rule == "fill_gaps"
            reply = attribute(reply, hits, general_allowed=general)
            check = check_answer(reply, hits, general_allowed=general)
            if not check.ok:
                log.info("generated answer failed the citation check: %s", "; ".join(check.problems))
                return self._degraded(plan, UNVERIFIED_NOTICE, Fallback.UNVERIFIED)
        text, citations = map_citations(reply, hits)
        labels = [GENERAL_NOTICE] if plan.rule == "general" else []
        hedged = plan.rule in CHECKED and self._unsure(plan)
        if plan.rule == "fill_gaps" and GENERAL_MARK in text.lower():
            labels.append(PARTLY_GENERAL_NOTICE)
        return Answer(
            text=text,
            citations=citations,
            mode=plan.mode,
            fallback=plan.fallback,
            notices=[
                *([HEDGE_NOTICE] if hedged else []),
                *plan.retrieval.notices,
                *plan.notices,
                *labels,
                *([problem.capitalize() + "."] if problem else []),
            ],
            searched=[i.name for i in plan.retrieval.searched],
            model=completion.model,
            context=[Citation.from_hit(n, hit) for n, hit in enumerate(hits, start=1)],
            confidence=plan.confidence,
        )

    def _degraded(self, plan: _Plan, notice: str, fallback: Fallback = Fallback.LLM_UNAVAILABLE) -> Answer:
        notice = notice[0].upper() + notice[1:]
        ranking = plan.ranking or Ranking(plan.question, [])
        confidence = plan.confidence if plan.confidence is not None else 0.0
        if not ranking.passages or not self.answers(confidence):
            answer = abstention(
                plan.retrieval,
                plan.mode,
                ranking=ranking,
                confidence=confidence,
                fallback=fallback,
                notices=[notice],
            )
        else:
            answer = extractive_answer(
                ranking,
                plan.retrieval,
                plan.mode,
                confidence=confidence,
                fallback=fallback,
                notices=[notice],
                relevance_floor=self._spec.relevance_floor,
                hedged=self._unsure(plan),
            )
        return replace(answer, mode=plan.mode)

    def _cache_key(self, request: Request) -> str:
        messages = [
            {"role": m.get("role"), "content": normalise_query(str(m.get("content", "")))}
            for m in request.messages
        ]
        return stable_key(
            messages,
            [(i.id, i.content_version) for i in request.indexes],
            (request.mode or self._spec.mode).value,
            request.strategy.value,
            self._chat.model if self._chat else None,
            request.max_tokens,
            request.ratio,
            request.where,
            request.context,
            request.instructions,
            request.min_confidence,
            request.fallback.value,
        )
