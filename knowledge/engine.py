"""`Knowledge`: the one entry point of the RAG engine, used by Slack, the shell, the CLI
and the HTTP API alike. It decides, per request and response mode, whether to retrieve,
whether to call the model and under which `Rule`, and what to fall back to; it never raises
for a model outage. Whether the passages found answer is the `Judge`'s to say
(`knowledge.judging.judge`); a model's answer is written and checked by `knowledge.answering.generation`.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cachetools import TTLCache

from knowledge.answering.answer import Answer, Fallback, FallbackStrategy, ResponseMode, Rule
from knowledge.answering.extractive import MOST_QUOTED, abstention, quote
from knowledge.answering.generation import Plan, Writer
from knowledge.answering.tools import ToolHost, answer_with_tools
from knowledge.answering.verified import VerifiedAnswers, VerifiedMatch
from knowledge.backends.llm import ChatModel, Delta
from knowledge.judging.abstain import Calibration
from knowledge.judging.judge import Judge, Verdict
from knowledge.judging.ranking import Ranker
from knowledge.judging.rerank import rerank
from knowledge.judging.triage import triage
from knowledge.search.context import DEFAULT_RATIO, Budget, Message, plan_budget, split_conversation
from knowledge.search.filters import Filter
from knowledge.search.followup import rewrite, standalone_question
from knowledge.search.notices import HEDGED, Notice, NoticeKind
from knowledge.search.retrieval import Retrieval, Retriever
from storage.document_access import PUBLIC_ONLY, AccessFilter
from storage.records import IndexRef
from storage.values import Strategy as Strategy  # stored as chosen

ANSWERS_KEPT = 512  # recent answers kept for a repeated question: bounds memory, not hit rate
ANSWERS_TTL_SECONDS = 600.0
"""An answer is asked again within minutes (a retry, a colleague); its key holds each index's
content version, so a document added or removed changes the key of every answer it could change."""
CONFIDENCE_MARGIN = 0.15
"""How much more similar than the relevance floor the `confidence` strategy demands."""
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
    looking further. Above it, the calibrated confidence (`knowledge.judging.abstain`) decides."""
    confident_similarity: float = 0.55
    """The similarity at which retrieval confidence reaches 1.0."""
    min_confidence: float = 0.7
    """SMART_FALLBACK answers from the documents alone from this retrieval closeness on; under
    it, a model fills the gaps (a closeness of 0.7 is a passage plainly on the question)."""
    generative_top_k: int = 12
    """Passages retrieved for a model's context: as many as the second stage ranks."""
    extractive_top_k: int = 12
    """Passages retrieved for the second stage to rank when answering without a model."""
    llm_rerank: int = 0
    """With a model: how many of the second stage's best passages it reorders before
    answering (`knowledge.judging.rerank`); 0 leaves the order to the second stage."""
    llm_verify: bool = False
    """With a model: whether it also judges each claim of an answer that passed the citation
    check against what the claim cites (`knowledge.answering.verification`)."""
    mode: ResponseMode = ResponseMode.SMART_FALLBACK


_NOT_TOOLS = {ResponseMode.LLM_ONLY, ResponseMode.RAG_ONLY}
"""Modes the `function` strategy does not apply to: no documents to search, or nothing but
the documents, checked (`knowledge.answering.generation`), to answer from."""

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
    unasked: bool = False
    """Lore speaks without being asked (a help channel): the documents alone (RAG_ONLY, never
    general knowledge), every claim a model writes verified by it too, and the model (when
    there is one) judges first whether the message asks something the passages answer
    (`knowledge.judging.triage`)."""
    access: AccessFilter = PUBLIC_ONLY
    """Which documents restricted by their source the answer may use: the asker's, for a
    private answer; none (public documents only) for one a channel reads."""

    def __post_init__(self) -> None:
        # An index locked to its documents answers from them alone, whoever asks and however;
        # so does Lore wherever it speaks unasked.
        if self.unasked or any(index.documents_only for index in self.indexes):
            object.__setattr__(self, "mode", ResponseMode.RAG_ONLY)


class Knowledge:
    """Answers requests over indexes; `judge` ranks what was found and says whether it answers."""

    def __init__(
        self,
        retriever: Retriever,
        chat: ChatModel | None,
        *,
        window: int,
        spec: AnswerSpec | None = None,
        ranker: Ranker | None = None,
        calibration: Calibration | None = None,
        verified: VerifiedAnswers | None = None,
    ) -> None:
        self._retriever = retriever
        self.verified = verified
        self._chat = chat
        self._window = window
        self._spec = spec or AnswerSpec()
        self.judge = Judge(
            retriever,
            ranker or Ranker(retriever.embedder, retriever.term_frequencies),
            relevance_floor=self._spec.relevance_floor,
            confident_similarity=self._spec.confident_similarity,
            calibration=calibration,
        )
        self._writer = Writer(chat, verify=self._spec.llm_verify) if chat is not None else None
        self._answers: TTLCache[str, Answer] = TTLCache(maxsize=ANSWERS_KEPT, ttl=ANSWERS_TTL_SECONDS)

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
        """Yield answer text as the model writes it (when it does), then the `Answer`; a
        verified answer the question matches (`knowledge.answering.verified`) comes with it,
        to be shown first (the answer is then not streamed)."""
        match = await self._verified_match(request)
        async for event in self._answer(request, stream=stream and match is None):
            yield replace(event, verified=match) if isinstance(event, Answer) and match is not None else event

    async def _verified_match(self, request: Request) -> VerifiedMatch | None:
        if self.verified is None or not request.indexes:
            return None
        question = split_conversation(request.messages).question
        return await self.verified.match(request.indexes, question, access=request.access)

    async def _answer(self, request: Request, *, stream: bool) -> AsyncIterator[Delta | Answer]:
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
            assert self._writer is not None
            final = None
            async for event in self._writer.write(decided, stream):
                if isinstance(event, Answer):
                    final = event
                yield event
        if final is not None and set(final.notices) <= {HEDGED} and request.strategy != Strategy.FUNCTION:
            self._answers[key] = final

    async def _plan(self, request: Request) -> Plan | Answer:
        conversation = split_conversation(request.messages)
        mode = request.mode or self._spec.mode
        # Documents only (RAG_ONLY, or an index locked to them) is never left to the model's choice.
        if request.strategy == Strategy.FUNCTION and self._chat is not None and mode not in _NOT_TOOLS:
            return await answer_with_tools(
                self._chat,
                self._retriever,
                request.indexes,
                conversation.question,
                conversation.history,
                request.tools,
                mode,
                request.access,
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
            return Plan(
                conversation.question,
                conversation.history,
                empty,
                Rule.MODEL_ONLY,
                mode,
                budget,
                instructions=request.instructions,
            )
        query = await self._standalone(conversation.question, conversation.history)
        retrieval = await self._search(request, query, budget)
        verdict = await self.judge(query, retrieval)
        fallback = Fallback.KEYWORD_ONLY if retrieval.notices else None
        if self._chat is None:
            return self._offline(verdict, retrieval, mode, fallback)
        rule = self._rule(mode, verdict, request)
        if rule is not None and request.unasked and not await self._speaks(conversation.question, verdict):
            rule = None
        if rule is None:
            return abstention(retrieval, mode, verdict, fallback=fallback)
        if rule == Rule.GENERAL:
            fallback = Fallback.GENERAL_KNOWLEDGE
        # Passages found for another project lead only to general knowledge, or to the model's
        # own answer first (LLM_PRIORITY): either way the answer says whose the passages are.
        notices = [verdict.elsewhere.notice] if verdict.elsewhere else []
        verdict = await self._reranked(rule, verdict, budget)
        return Plan(
            conversation.question,
            conversation.history,
            replace(retrieval, hits=verdict.ranking.hits or retrieval.hits),
            rule,
            mode,
            budget,
            verdict,
            fallback,
            notices,
            instructions=request.instructions,
            verify=request.unasked,
        )

    async def _speaks(self, message: str, verdict: Verdict) -> bool:
        """Where Lore speaks unasked: whether the model judges that the message asks
        something the passages answer (`knowledge.judging.triage`); yes when it cannot say."""
        assert self._chat is not None
        judged = await triage(self._chat, message, verdict.ranking.hits[:MOST_QUOTED])
        return judged is None or judged.speak

    async def _standalone(self, question: str, history: list[Message]) -> str:
        """The question as a search query of its own (`knowledge.search.followup`)."""
        if self._chat is not None:
            return await rewrite(self._chat, question, history)
        return standalone_question(question, history)

    async def _reranked(self, rule: Rule, verdict: Verdict, budget: Budget) -> Verdict:
        """The verdict with its ranking as the model orders it (`knowledge.judging.rerank`),
        when the answer is to be made from the documents; the passages it is shown fit the
        answer's context."""
        if rule == Rule.GENERAL or self._chat is None:
            return verdict
        return await rerank(self._chat, verdict, self._spec.llm_rerank, budget.context_tokens)

    async def _search(self, request: Request, question: str, budget: Budget) -> Retrieval:
        """Retrieve for the question; the `confidence` strategy keeps only confident hits."""
        retrieval = await self._retriever.search(
            request.indexes,
            question,
            top_k=self._spec.generative_top_k if self._chat else self._spec.extractive_top_k,
            candidates=budget.candidates,
            where=request.where,
            context=request.context,
            access=request.access,
        )
        if request.strategy == Strategy.CONFIDENCE:
            floor = self._spec.relevance_floor + CONFIDENCE_MARGIN
            if len(question.split()) < 3 or (retrieval.best_similarity or 0.0) < floor:
                return replace(retrieval, hits=[])
        return retrieval

    def _rule(self, mode: ResponseMode, verdict: Verdict, request: Request) -> Rule | None:
        """Which knowledge the model may use; None means abstain without calling it. SMART_FALLBACK
        lets a close enough passage through whatever the confidence, unless the passages answer
        for another project than the question names (`Verdict.elsewhere`)."""
        relevant = verdict.answers
        general = None if request.fallback == FallbackStrategy.NONE else Rule.GENERAL
        if mode == ResponseMode.RAG_ONLY:
            return Rule.DOCUMENTS if relevant else None
        if mode == ResponseMode.LLM_PRIORITY:
            return Rule.MODEL_FIRST
        if mode == ResponseMode.RAG_PRIORITY:
            return Rule.FILL_GAPS if relevant else general
        if mode == ResponseMode.SMART_FALLBACK:
            threshold = request.min_confidence
            close = verdict.closeness >= (self._spec.min_confidence if threshold is None else threshold)
            if close and verdict.elsewhere is None:
                return Rule.DOCUMENTS
            if relevant and request.fallback == FallbackStrategy.HYBRID:
                return Rule.FILL_GAPS
        return Rule.DOCUMENTS if relevant else general  # HYBRID, and SMART_FALLBACK when unsure

    def _offline(
        self, verdict: Verdict, retrieval: Retrieval, mode: ResponseMode, fallback: Fallback | None
    ) -> Answer:
        notices = []
        if mode in NEEDS_MODEL:
            fallback = fallback or Fallback.NO_LLM
            notices.append(Notice(NoticeKind.NO_MODEL, mode.value))
        return quote(verdict, retrieval, mode, fallback=fallback, notices=notices)

    def _cache_key(self, request: Request) -> str:
        messages = [
            {"role": m.get("role"), "content": " ".join(str(m.get("content", "")).lower().split())}
            for m in request.messages
        ]
        parts = (
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
            request.unasked,
            sorted(request.access.principals),
        )
        # JSON of the parts: dict order and whitespace in the text do not matter
        return json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
