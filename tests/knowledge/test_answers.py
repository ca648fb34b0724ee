"""Answers: extractive offline, generative through a fake OpenAI-compatible server, the
response modes, honest abstention, graceful degradation and caching."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from bot.chat.messages import notice as worded
from knowledge.answering.answer import Answer, Citation, Fallback, ResponseMode
from knowledge.answering.extractive import QUOTED_PASSAGES, asks_several, extractive_answer
from knowledge.backends.llm import Delta
from knowledge.engine import Knowledge, Request
from knowledge.errors import EmbedderUnavailable
from knowledge.indexing.ingest import Source
from knowledge.judging.abstain import Calibration
from knowledge.judging.ranking import Ranking, Scored, ScoredUnit
from knowledge.search.notices import HEDGED
from knowledge.search.retrieval import Hit, Retrieval, Retriever
from knowledge.text.quotes import Kind, Unit, units
from tests.fakes.openai_server import Callback, EmptyContent, FakeOpenAI, HttpError, Length, Reply, ToolCall
from tests.knowledge.answering.test_citations import hit
from tests.knowledge.conftest import HANDBOOK, RECIPES, Stack, chat_model, md

ROLLBACK = "How long does a rollback take?"
UNRELATED = "What is the boiling point of liquid nitrogen on Jupiter's moons?"


def ask(question: str, stack: Stack, index_ids: list[int], mode: ResponseMode | None = None) -> Request:
    return Request(
        [stack.indexes.get(i) for i in index_ids], [{"role": "user", "content": question}], mode=mode
    )


SURE = Calibration(50.0, (0.0, 0.0, 0.0, 0.0, 0.0), threshold=0.5)
"""Answers whatever it finds, with confidence 1.0."""


async def answered_surely(stack: Stack, question: str, index_id: int) -> Answer:
    """The answer of a Knowledge whose calibration answers whatever it finds (`SURE`)."""
    return await Knowledge(stack.retriever, None, window=16_000, calibration=SURE).ask(
        ask(question, stack, [index_id])
    )


async def filled(stack: Stack) -> int:
    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK, url="https://wiki.example.com/handbook"))
    await stack.ingestor.add(index, md("kitchen.md", RECIPES))
    return index.id


async def test_extractive_answer_quotes_and_cites(stack: Stack) -> None:
    index_id = await filled(stack)
    answer = await stack.knowledge().ask(ask(ROLLBACK, stack, [index_id]))
    assert not answer.abstained and answer.mode == ResponseMode.SMART_FALLBACK and answer.fallback is None
    first = answer.citations[0]
    assert first.n == 1 and first.name == "handbook.md" and first.url == "https://wiki.example.com/handbook"
    assert "two minutes" in first.text and "[1]" in answer.text
    assert len(first.text) < len(HANDBOOK)  # trimmed to the sentences that answer
    shape = answer.as_json()
    assert set(shape) == {"answer", "short", "mode", "abstained", "fallback", "citations", "confidence"}
    assert shape["short"] and len(str(shape["short"])) <= len(str(shape["answer"])), "the glance form is no longer"
    assert set(shape["citations"][0]) == {"n", "name", "url", "source", "section", "text", "score"}  # type: ignore[index]
    assert first.section == "Deployments", "the heading its passage stands under"
    assert shape["citations"][0]["section"] == "Deployments"  # type: ignore[index]
    assert first.source == "https://wiki.example.com/handbook", "what the document was added from"
    assert 0.0 <= answer.confidence <= 1.0  # type: ignore[operator]
    lead = answer.text.split("\n", 1)[0]
    assert lead.endswith("[1]") and "two minutes" in lead, "the answer leads with the best sentence"


async def test_extractive_answer_leaves_out_documents_off_the_subject(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(
        index, md("deploy.md", "# Deploying\n\nWe deploy the billing service every Tuesday.")
    )
    await stack.ingestor.add(
        index, md("oncall.md", "# On-call\n\nThe on-call engineer carries the pager for a week.")
    )
    question = "When do we deploy billing?"
    retrieval = await stack.retriever.search([index], question)
    oncall = [h for h in retrieval.hits if h.document.name == "oncall.md"]
    assert oncall and all(
        h.similarity is not None and h.similarity < 0.30 for h in oncall
    )  # found, off topic
    answer = await stack.knowledge().ask(ask(question, stack, [index.id]))
    assert [c.name for c in answer.citations] == ["deploy.md"]


async def test_abstains_honestly_and_says_where_it_looked(stack: Stack) -> None:
    index_id = await filled(stack)
    answer = await stack.knowledge().ask(ask(UNRELATED, stack, [index_id]))
    assert answer.abstained and answer.citations == []
    assert answer.text.startswith("I couldn't find anything about that in the notes index.")
    shape = answer.as_json()
    assert shape["abstained"] is True and shape["confidence"] == 0.0
    assert shape["closest"] == [], "nothing close enough to offer"


async def test_an_abstention_offers_the_closest_documents_not_as_an_answer(stack: Stack) -> None:
    index_id = await filled(stack)
    question = "Which colour does the load balancer switch to during a canary deploy in Lisbon?"
    knowledge = stack.knowledge()
    retrieval = await stack.retriever.search([stack.indexes.get(index_id)], question)
    verdict = await knowledge.judge(question, retrieval)
    ranking, confidence = verdict.ranking, verdict.confidence
    strict = Calibration(-50.0, (0.0, 0.0, 0.0, 0.0, 0.0), threshold=0.5)  # refuses everything found
    answer = await Knowledge(stack.retriever, None, window=16_000, calibration=strict).ask(
        ask(question, stack, [index_id])
    )
    assert ranking.passages and confidence > 0.0
    assert answer.abstained and answer.citations == [] and answer.confidence is not None
    assert next(c.name for c in answer.closest) == "handbook.md"
    assert answer.text.startswith("I couldn't find an answer to that in the notes index."), (
        "it found something"
    )
    assert "Not an answer, but you might look at: handbook.md (notes)" in answer.text
    assert answer.as_json()["closest"] == [
        {"name": c.name, "url": c.url, "source": c.source, "index": "notes"} for c in answer.closest
    ]
    assert {c.source for c in answer.closest} >= {"https://wiki.example.com/handbook"}


async def test_generated_answer_maps_citations_and_drops_invented_ones(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    llm.enqueue(Reply("Rollbacks take about two minutes [1]. Also see [7]."))
    answer = await stack.knowledge(chat_model(llm)).ask(ask(ROLLBACK, stack, [index_id]))
    assert answer.text == "Rollbacks take about two minutes [1]. Also see."
    assert [(c.n, c.name) for c in answer.citations] == [(1, "handbook.md")]
    assert answer.model == "gpt-fake" and answer.fallback is None
    user = llm.chat_requests[0].messages[-1]["content"]
    assert '<source n="1" title="Team handbook' in user and "two minutes" in user
    assert user.endswith(f"Question: {ROLLBACK}")


async def test_llm_outage_degrades_to_the_documents(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    llm.enqueue(HttpError(500, "boom"))
    answer = await stack.knowledge(chat_model(llm)).ask(ask(ROLLBACK, stack, [index_id]))
    assert answer.fallback == Fallback.LLM_UNAVAILABLE and answer.citations
    assert any("The LLM answered with an error (500)" in worded(n) for n in answer.notices), answer.notices


@pytest.mark.parametrize(
    ("reply", "notice"),
    [
        (Length("Rollbacks take"), "the model stopped at its length limit"),
        (EmptyContent(None), "the model returned an empty answer"),
        (ToolCall("search_knowledge", {"query": "x"}), "the model asked to call a tool"),
    ],
)
async def test_odd_model_responses_are_explained(
    stack: Stack, llm: FakeOpenAI, reply: object, notice: str
) -> None:
    index_id = await filled(stack)
    llm.enqueue(reply)  # type: ignore[arg-type]
    answer = await stack.knowledge(chat_model(llm)).ask(ask(ROLLBACK, stack, [index_id]))
    assert any(notice in worded(n).lower() for n in answer.notices), answer.notices
    assert answer.text.strip()


async def test_streaming_yields_text_before_the_answer(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    llm.enqueue(Reply("Rollbacks switch the load balancer back and take about two minutes [1]."))
    request = ask(ROLLBACK, stack, [index_id], ResponseMode.LLM_PRIORITY)
    events = [e async for e in stack.knowledge(chat_model(llm)).ask_stream(request)]
    deltas = [e for e in events if isinstance(e, Delta)]
    assert len(deltas) > 3 and isinstance(events[-1], Answer)
    assert "".join(d.text for d in deltas) == events[-1].text
    assert events[-1].citations[0].name == "handbook.md"


async def test_an_answer_from_the_documents_is_shown_only_once_checked(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    llm.enqueue(Reply("Rollbacks switch the load balancer back and take about two minutes [1]."))
    events = [e async for e in stack.knowledge(chat_model(llm)).ask_stream(ask(ROLLBACK, stack, [index_id]))]
    assert len(events) == 1 and isinstance(events[0], Answer) and events[0].model == "gpt-fake"


async def test_rag_only_refuses_without_calling_the_model(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    answer = await stack.knowledge(chat_model(llm)).ask(
        ask(UNRELATED, stack, [index_id], ResponseMode.RAG_ONLY)
    )
    assert answer.abstained and llm.chat_requests == []


async def test_llm_only_does_not_retrieve(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    llm.enqueue(Reply("From general knowledge: it depends."))
    answer = await stack.knowledge(chat_model(llm)).ask(
        ask(ROLLBACK, stack, [index_id], ResponseMode.LLM_ONLY)
    )
    assert answer.citations == [] and "<source " not in llm.chat_requests[0].messages[-1]["content"]


async def test_hybrid_falls_back_to_general_knowledge_and_says_so(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    llm.enqueue(Callback(lambda body: "Not in the team's documents; generally about -196 °C."))
    answer = await stack.knowledge(chat_model(llm)).ask(
        ask(UNRELATED, stack, [index_id], ResponseMode.HYBRID)
    )
    assert answer.fallback == Fallback.GENERAL_KNOWLEDGE and not answer.abstained
    assert "Nothing relevant was found" in llm.chat_requests[0].messages[0]["content"]
    assert any(worded(n).startswith("Not from your documents") for n in answer.notices), "always labelled"


async def test_modes_needing_a_model_degrade_offline_and_say_so(stack: Stack) -> None:
    index_id = await filled(stack)
    answer = await stack.knowledge().ask(ask(ROLLBACK, stack, [index_id], ResponseMode.HYBRID))
    assert answer.fallback == Fallback.NO_LLM and answer.citations
    assert any("No language model is configured" in worded(n) for n in answer.notices)


async def test_answers_are_cached_until_the_index_changes(stack: Stack, llm: FakeOpenAI) -> None:
    index_id = await filled(stack)
    knowledge = stack.knowledge(chat_model(llm))
    llm.enqueue(Reply("Two minutes [1]."), Reply("Two minutes [1]."))
    await knowledge.ask(ask(ROLLBACK, stack, [index_id]))
    await knowledge.ask(ask("  how LONG does a rollback take? ", stack, [index_id]))
    assert len(llm.chat_requests) == 1
    await stack.ingestor.add(
        stack.indexes.get(index_id), md("more.md", "# More\n\nRollbacks may take longer at peak.")
    )
    await knowledge.ask(ask(ROLLBACK, stack, [index_id]))
    assert len(llm.chat_requests) == 2


class BrokenEmbedder:
    """The local model's identity, but every embedding fails (as a model that cannot load)."""

    def __init__(self, real: object) -> None:
        self.model_id = real.model_id  # type: ignore[attr-defined]
        self.dimension = real.dimension  # type: ignore[attr-defined]
        self.batch_size = 8

    async def embed(self, texts: object) -> object:
        raise EmbedderUnavailable("the embedding model could not be loaded")


async def test_with_the_embedder_down_answers_still_quote_keyword_hits(stack: Stack) -> None:
    index_id = await filled(stack)
    broken = Retriever(stack.documents, stack.vectors, stack.keyword, BrokenEmbedder(stack.embedder))  # type: ignore[arg-type]
    answer = await Knowledge(broken, None, window=16_000).ask(ask(ROLLBACK, stack, [index_id]))
    assert not answer.abstained and answer.fallback == Fallback.KEYWORD_ONLY
    assert answer.citations[0].name == "handbook.md" and "two minutes" in answer.citations[0].text


UNSURE = Calibration(50.0, (0.0, 0.0, 0.0, 0.0, 0.0), threshold=0.5, hedge=1.01)
"""Answers whatever it finds, never sure enough not to say so."""


async def test_an_answer_lore_is_not_sure_of_says_so(stack: Stack) -> None:
    index_id = await filled(stack)
    sure = await answered_surely(stack, ROLLBACK, index_id)
    doubtful = Knowledge(stack.retriever, None, window=16_000, calibration=UNSURE)
    unsure = await doubtful.ask(ask(ROLLBACK, stack, [index_id]))
    assert await doubtful.ask(ask(ROLLBACK, stack, [index_id])) is unsure, "a caveat does not stop caching"
    assert not sure.hedged and "hedged" not in sure.as_json()
    assert unsure.hedged and unsure.as_json()["hedged"] is True and not unsure.abstained
    assert unsure.notices == [HEDGED] and sure.notices == []
    assert unsure.text == sure.text and unsure.citations == sure.citations, "the same answer, with its caveat"


async def test_a_generated_answer_lore_is_not_sure_of_carries_the_caveat(
    stack: Stack, llm: FakeOpenAI
) -> None:
    index_id = await filled(stack)
    llm.enqueue(Reply("Rollbacks take about two minutes [1]."))
    unsure = Knowledge(stack.retriever, chat_model(llm), window=16_000, calibration=UNSURE)
    answer = await unsure.ask(ask(ROLLBACK, stack, [index_id], ResponseMode.RAG_ONLY))
    assert answer.hedged and answer.notices[0] == HEDGED and answer.citations
    llm.enqueue(Reply("Not in the documents, but usually minutes."))
    general = await unsure.ask(ask(UNRELATED, stack, [index_id], ResponseMode.HYBRID))
    assert not general.hedged and HEDGED not in general.notices, "general knowledge has its own label"


ROLLBACK_PAGE = (
    "# Billing releases\n\n"
    "The billing service ships a release every Tuesday. "
    + " ".join(
        f"Release {n} of the billing service kept its own database schema, so rolling back over it "
        f"needs the migration notes of release {n} at hand."
        for n in range(1, 3)
    )
    + " When a release breaks checkout, it is rolled back before anyone starts debugging it."
    "\n\n## The rollback command\n\n"
    "Run `deploy rollback --to previous` from the release channel. A rollback takes about two "
    "minutes, and the on-call engineer announces it in the incident thread. "
    + " ".join(
        f"Step {n} of the rollback checklist asks the on-call engineer to confirm that checkout "
        f"answers again in region {n}."
        for n in range(1, 6)
    )
    + "\n"
)


async def test_a_passage_is_not_read_on_into_a_passage_quoted_before_it(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("rollback.md", ROLLBACK_PAGE))
    question = "what is the rollback command, and how many minutes does a rollback take?"
    answer = await answered_surely(stack, question, index.id)
    quoted = [c.text for c in answer.citations]
    assert len(quoted) == 2 and "deploy rollback --to previous" in quoted[0], quoted
    assert "deploy rollback --to previous" not in quoted[1], "the first quote is not quoted again"
    assert "before anyone starts debugging" in quoted[1], "the second quote is its own passage"


DEPLOY_PAGES = {
    f"{name}.md": f"# {name.title()}\n\n{text}\n"
    for name, text in {
        "staging": "Deploys go to staging first; the staging deploy runs the smoke tests for ten minutes.",
        "production": "A production deploy needs a second engineer to approve it in the deploy channel.",
        "rollback": "A deploy is rolled back with `deploy rollback`, which restores the last release.",
        "freeze": "There are no deploys on Fridays after noon: the deploy freeze lasts until Monday.",
        "hotfix": "A hotfix deploy may skip staging when the incident commander approves it.",
    }.items()
}


def test_a_question_that_asks_several_things_is_told_apart() -> None:
    assert asks_several("what goes in the nginx server block and what do we change in the app?")
    assert asks_several("StreamingResponse vs FileResponse, any real difference?")
    assert asks_several("where does the secret key go? how do we generate one?")
    assert not asks_several("how do cookies and sessions work in flask?"), "one thing, of two words"
    assert not asks_several("how do I deploy to production?")


async def test_a_question_that_asks_several_things_gets_one_more_quote(stack: Stack) -> None:
    index = stack.index()
    for name, page in DEPLOY_PAGES.items():
        await stack.ingestor.add(index, md(name, page))
    one = await answered_surely(stack, "how does a deploy to production get approved?", index.id)
    several = await answered_surely(
        stack, "how does a production deploy get approved, and when are deploys frozen?", index.id
    )
    assert len(_quoted(one)) == QUOTED_PASSAGES
    assert len(_quoted(several)) == QUOTED_PASSAGES + 1
    assert "freeze lasts until Monday" in "\n".join(c.text for c in _quoted(several))


def _quoted(answer: Answer) -> list[Citation]:
    """The citations an answer quotes (not those it names under "See also")."""
    also = answer.text.rsplit("See also", 1)[1] if "See also" in answer.text else ""
    return [c for c in answer.citations if f"[{c.n}]" not in also]


async def test_an_answer_quotes_rest_prose_as_it_reads_not_as_it_is_marked_up(stack: Stack) -> None:
    index = stack.index()
    page = (
        "Building URLs\n=============\n\n"
        "To build a URL outside a request, set :data:`SERVER_NAME` and call :func:`~flask.url_for` "
        "with ``_external=True``; see :doc:`/appcontext` for the application context.\n"
    )
    await stack.ingestor.add(index, Source(name="urls.rst", data=page.encode()))
    answer = await answered_surely(stack, "how do I build a URL outside a request?", index.id)
    shown = "\n".join([answer.text, *(c.text for c in answer.citations)])
    assert "set `SERVER_NAME` and call `url_for()` with `_external=True`" in answer.citations[0].text
    assert ":func:" not in shown and "``" not in shown and ":data:" not in shown


async def test_a_citation_marker_never_follows_a_closing_code_fence(stack: Stack) -> None:
    """'``` [1]' does not close a fenced block in Markdown: the rest of the answer would be code."""
    index = stack.index()
    page = (
        "# Testing websockets\n\n"
        "```python\nwith client.websocket_connect('/ws') as websocket:\n    data = websocket.receive_text()\n```\n"
    )
    await stack.ingestor.add(index, md("testclient.md", page))
    answer = await answered_surely(stack, "how do I test a websocket route with websocket_connect?", index.id)
    lines = answer.text.split("\n")
    assert not [line for line in lines if re.fullmatch(r">?\s*(```|~~~)\s+\[\d+\]", line)], answer.text
    assert "> ```\n> [1]" in answer.text, "the marker goes on a line of its own under the block"


async def test_a_models_marker_after_a_closing_fence_goes_on_its_own_line(
    stack: Stack, llm: FakeOpenAI
) -> None:
    index_id = await filled(stack)
    llm.enqueue(
        Reply(
            "Switch the load balancer back:\n\n```\nprevious colour\n``` [1]\n\nIt takes about two minutes [1]."
        )
    )
    answer = await stack.knowledge(chat_model(llm)).ask(ask(ROLLBACK, stack, [index_id]))
    assert answer.fallback is None and [c.n for c in answer.citations] == [1]
    assert "```\nprevious colour\n```\n[1]\n\nIt takes about two minutes [1]." in answer.text, answer.text


def test_a_quote_two_pages_share_word_for_word_is_quoted_once_and_both_pages_cited() -> None:
    """Docs repeat paragraphs: Starlette's requests and websockets pages say "Query parameters
    are exposed as an immutable multi-dict." in the same words; their passages differ only in
    what is not quoted (the tail of a sentence the passage begins with)."""
    shared = "Query parameters are exposed as an immutable multi-dict.\n\nRead them with `query_params`.\n"
    pages = [hit(f"scope of the request.\n\n{shared}", 1), hit(f"of the websocket.\n\n{shared}", 2)]
    pages.append(hit("Path parameters are exposed as a dictionary interface.\n", 3))
    passages = [
        Scored(
            h,
            1.0 - n / 10,
            [
                ScoredUnit(
                    u, 0.5, 0.5, 0.5 + (u.text == "Query parameters are exposed as an immutable multi-dict.")
                )
                for u in units(h.text)
            ],
        )
        for n, h in enumerate(pages)
    ]
    retrieval = Retrieval(pages, "how do I read query parameters?", [pages[0].index], 0.8)
    answer = extractive_answer(Ranking(retrieval.query, passages), retrieval, ResponseMode.RAG_ONLY)
    quoted = _quoted(answer)
    assert [c.name for c in quoted] == ["d1.md", "d3.md"], "the second page's identical quote is left out"
    assert sum("immutable multi-dict" in c.text for c in quoted) == 1
    assert [c.name for c in answer.citations] == ["d1.md", "d3.md", "d2.md"], (
        "and the page is named under See also"
    )
    assert answer.text.endswith("See also [3].")


def test_a_quote_another_quote_already_shows_is_not_quoted_again_whatever_its_fences() -> None:
    """Uvicorn's installation page shows `uv add 'uvicorn[standard]'` twice, once as the end of
    a block the passage before began (no info string), once whole (```` ```bash ````)."""
    first = hit(
        "```\nuv add 'uvicorn[standard]'\n```\n\nThe `standard` extra installs uvloop and httptools.\n", 1
    )
    again = hit("Install it with the extras:\n\n```bash\nuv add 'uvicorn[standard]'\n```\n", 2)
    other = hit("Uvicorn runs ASGI applications; install it with pip or uv.\n", 3)
    passages = [
        Scored(h, 1.0 - n / 10, [ScoredUnit(u, 0.5, 0.5, 0.5 + (u.kind == Kind.CODE)) for u in units(h.text)])
        for n, h in enumerate([first, again, other])
    ]
    passages[1] = replace(passages[1], units=passages[1].units[1:])  # the block alone is quoted
    retrieval = Retrieval([first, again, other], "uvicorn vs uvicorn[standard]?", [first.index], 0.8)
    answer = extractive_answer(Ranking(retrieval.query, passages), retrieval, ResponseMode.RAG_ONLY)
    assert [c.name for c in _quoted(answer)] == ["d1.md", "d3.md"], answer.text
    assert answer.text.count("uv add 'uvicorn[standard]'") == 1


def test_a_paragraph_two_pages_repeat_is_quoted_once() -> None:
    """Uvicorn's index and deployment pages both open their Gunicorn section with the same
    deprecation warning: the second quote begins after it."""
    warning = "Warning: the `uvicorn.workers` module is deprecated.\n\n"
    first = hit(warning + "Gunicorn is the simplest way to run Uvicorn in production.\n", 1)
    second = hit(warning + "Gunicorn is a mature server and process manager.\n", 2)
    passages = [
        Scored(h, 1.0 - n / 10, [ScoredUnit(u, 0.5, 0.5, 0.5) for u in units(h.text)])
        for n, h in enumerate([first, second])
    ]
    retrieval = Retrieval([first, second], "how do i run uvicorn with gunicorn?", [first.index], 0.8)
    answer = extractive_answer(Ranking(retrieval.query, passages), retrieval, ResponseMode.RAG_ONLY)
    assert [c.name for c in _quoted(answer)] == ["d1.md", "d2.md"], answer.text
    assert sum(c.text.count("deprecated") for c in answer.citations) == 1
    assert answer.citations[1].text == "Gunicorn is a mature server and process manager."


def test_a_passage_a_better_one_was_read_on_into_is_not_quoted_again() -> None:
    """A code block cut by the chunker: the passage holding its start is read on to its end
    (its last unit made whole, no unit added); the passage holding the end is not quoted."""
    start = replace(
        hit("Turn it on like this::\n\n    import logging\n    handler = logging.StreamHandler()\n", 1),
        position=4,
    )
    end = replace(hit("    handler.setLevel(logging.DEBUG)\n", 1), position=5)
    other = hit("Logging is configured by the application, not by the library.\n", 2)

    def scored(h: Hit, score: float) -> Scored:
        return Scored(h, score, [ScoredUnit(u, score, 0.5, score) for u in units(h.text)])

    whole = Unit(
        "import logging\nhandler = logging.StreamHandler()\nhandler.setLevel(logging.DEBUG)", Kind.CODE, 2
    )
    first = scored(start, 0.9)
    first = replace(first, units=[*first.units[:-1], replace(first.units[-1], unit=whole)], continued=True)
    retrieval = Retrieval([start, end, other], "how do i turn on logging?", [start.index], 0.8)
    ranking = Ranking(retrieval.query, [first, scored(end, 0.8), scored(other, 0.7)])
    answer = extractive_answer(ranking, retrieval, ResponseMode.RAG_ONLY)
    assert [c.name for c in _quoted(answer)] == ["d1.md", "d2.md"]
    assert answer.text.count("setLevel(logging.DEBUG)") == 1
