"""The second ranking stage, with the real local embedder: passages whose sentences answer
come first, units are scored, rare question words weigh more; and abstention's evidence."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from alembic import command
from sqlalchemy import text as text_sql

from knowledge.answering.extractive import TAIL_SHARE, excerpt, first_line, lead
from knowledge.backends.embedding import LocalEmbedder, Vectors
from knowledge.engine import Knowledge, Request
from knowledge.indexing.chunking import chunk_text
from knowledge.indexing.ingest import Source
from knowledge.indexing.units import PREFIX, decoded, encoded, read_units
from knowledge.judging.abstain import Calibration, Evidence, evidence
from knowledge.judging.judge import READ_ON
from knowledge.judging.ranking import (
    MAX_WEIGHED,
    PASSAGE_SIGNALS,
    Ranker,
    Ranking,
    Scored,
    ScoredUnit,
    Weights,
    as_held,
    folders,
    question_terms,
    rarest,
    without_word,
)
from knowledge.search.followup import standalone_question
from knowledge.search.retrieval import Hit, Retrieval
from knowledge.text.quotes import Kind, Unit, units
from knowledge.text.words import content_words, stems_of
from storage.keyword import MAX_TERMS
from storage.migrations_runner import alembic_config
from storage.records import ChunkRecord, IndexRef
from tests.knowledge.conftest import Stack, md
from tests.knowledge.text.test_quotes import Chunk, in_document

TRUSTING = Calibration(50.0, (0.0, 0.0, 0.0, 0.0, 0.0), 0.5)
CALIBRATION = Calibration.fitted()
"""Answers whatever it finds."""


async def ranked(stack: Stack, index: IndexRef, question: str) -> tuple[Retrieval, Ranking]:
    """The first stage's hits for `question` in `index`, and the second stage's ranking of them."""
    retrieval = await stack.retriever.search([stack.fresh(index)], question, top_k=8)
    ranker = Ranker(stack.embedder, stack.retriever.term_frequencies)
    return retrieval, await ranker.rank(question, retrieval.hits)


TIMEOUTS = """# HTTP client

## Sessions

A session keeps cookies between requests and reuses connections to the same host.

## Timeouts

Requests do not time out unless you pass a timeout. Pass `timeout=5` to wait at most five seconds
for the server to answer; without it a slow server can hang your program forever.
"""

RETRIES = """# Retry policy

Our jobs retry a failed request three times. A request that keeps failing is moved to the
dead-letter queue, where someone from the platform team looks at it every morning.
"""


async def test_the_passage_whose_sentence_answers_comes_first(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("retries.md", RETRIES))
    await stack.ingestor.add(index, md("client.md", TIMEOUTS))
    question = "our requests hang forever when the server is slow, how do I stop that?"
    retrieval, ranking = await ranked(stack, index, question)
    best = ranking.passages[0]
    assert best.hit.document.name == "client.md"
    position = best.best_unit
    assert position is not None and "timeout" in best.units[position].unit.text
    assert all(u.dense <= best.units[position].dense + 0.2 for u in best.units)
    assert [p.score for p in ranking.passages] == sorted((p.score for p in ranking.passages), reverse=True)
    assert all(set(p.signals) == set(PASSAGE_SIGNALS) for p in ranking.passages)
    assert all(
        Weights.fitted().passage_score(p.signals) == pytest.approx(p.score) for p in ranking.passages
    ), "the score is the weighted sum of the signals bench.fit_ranking fits the weights on"
    assert best.signals["agreement"] == 1.0 and 0.0 < best.signals["unit_dense"] <= 1.0

    found = evidence(ranking, retrieval.hits, CALIBRATION.typical_standout)
    assert found is not None and found.best_sentence == best.units[position].dense
    assert 0.0 < CALIBRATION.confidence(found) < 1.0


async def test_rare_question_words_weigh_more(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("retries.md", RETRIES))
    await stack.ingestor.add(index, md("client.md", TIMEOUTS))
    words = content_words("which request goes to the dead-letter queue?")
    counts, total = await stack.retriever.term_frequencies(words)
    terms = question_terms(words, (dict(zip(words, counts, strict=True)), total))
    assert terms.idf["queue"] > terms.idf["request"]
    assert terms.coverage(stems_of("the dead-letter queue")) > terms.coverage(stems_of("a request"))


def test_identifiers_are_read_whole_and_in_parts() -> None:
    assert {"pool_siz", "pool", "size"} <= stems_of("set pool_size on the engine")


def test_calibrated_confidence_grows_with_the_evidence() -> None:
    weak = Evidence(best_sentence=0.3, standout=1.0, passage_score=0.8, agreement=0.0, meaning=0.5)
    strong = Evidence(best_sentence=0.7, standout=2.2, passage_score=1.6, agreement=1.0, meaning=1.0)
    assert CALIBRATION.confidence(weak) < CALIBRATION.threshold < CALIBRATION.confidence(strong)
    assert Calibration(0.0, (0.0, 0.0, 0.0, 0.0, 0.0), 0.5).confidence(weak) == 0.5
    lacking = Evidence(best_sentence=0.7, standout=2.2, passage_score=1.6, agreement=1.0, meaning=0.4)
    assert CALIBRATION.confidence(lacking) < CALIBRATION.confidence(strong), "the passages lack the key word"


def test_a_follow_up_carries_the_previous_questions_key_words() -> None:
    history = [
        {"role": "user", "content": "How do I run the dev server on port 8000?"},
        {"role": "assistant", "content": "Use --port 8000."},
    ]
    assert standalone_question("and on Windows?", history) == "and on Windows? (run dev server port 8000)"
    assert (
        standalone_question("What about the port?", history) == "What about the port? (run dev server 8000)"
    )
    assert standalone_question("How do I deploy?", []) == "How do I deploy?"


SESSIONS = """# Sessions

Sessions are signed cookies. Set `SECRET_KEY` to a long random value before you deploy, and keep
it out of the repository. A permanent session lasts 31 days unless you change the lifetime.
"""

RATE_TALK = """# Protecting the login endpoint

Brute-force attempts against the login form are logged with the client's IP address. Lock an
account after ten failed attempts and tell its owner by email.
"""


async def test_the_words_that_carry_a_question_weigh_most(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("sessions.md", SESSIONS))
    await stack.ingestor.add(index, md("login.md", RATE_TALK))
    question = "honestly i'm a bit lost: how do we configure jwt bearer tokens for our login endpoint?"
    retrieval, ranking = await ranked(stack, index, question)
    weights = ranking.terms.importance
    assert weights["jwt"] > weights["honest"] and weights["bearer"] > weights["lost"]
    found = evidence(ranking, retrieval.hits, CALIBRATION.typical_standout)
    assert found is not None and found.meaning < 0.75, "the passages on logins never say jwt or bearer"

    answered = "how long does a permanent session last before it expires?"
    retrieval, ranking = await ranked(stack, index, answered)
    found_too = evidence(ranking, retrieval.hits, CALIBRATION.typical_standout)
    assert found_too is not None and found_too.meaning > found.meaning
    assert CALIBRATION.confidence(found_too) > CALIBRATION.confidence(found)


class Counting:
    """The real embedder, counting the texts it is given."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self._inner = inner
        self.model_id, self.dimension, self.batch_size = inner.model_id, inner.dimension, inner.batch_size
        self.texts = 0

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        return await self._inner.embed(texts)


async def test_a_pasted_log_costs_a_bounded_number_of_embeddings(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("sessions.md", SESSIONS))
    log = " ".join(f"worker{n} failed at step{n} with code{n}" for n in range(400))
    question = f"why does the permanent session expire? {log}"
    retrieval = await stack.retriever.search([stack.fresh(index)], question, top_k=8)
    counting = Counting(stack.embedder)
    ranking = await Ranker(counting, stack.retriever.term_frequencies).rank(question, retrieval.hits)
    units = sum(len(p.units) for p in ranking.passages)
    assert len(content_words(question)) > 1000
    assert len(ranking.terms.idf) <= MAX_TERMS and len(ranking.terms.importance) <= MAX_WEIGHED
    assert counting.texts == 1 + len(ranking.terms.importance) + units, (
        "the question, its variants, the units"
    )
    answer = await stack.knowledge().ask(
        Request([stack.fresh(index)], [{"role": "user", "content": question}])
    )
    assert answer.text


def test_a_one_letter_name_is_a_content_word_and_a_possessive_s_is_not() -> None:
    assert content_words("what does flask's g object do, e.g. in a view?") == ["flask", "g", "object", "view"]


def test_the_rarest_words_are_weighed() -> None:
    words = [f"w{n}" for n in range(MAX_WEIGHED + 6)]
    counts = ({w: (0 if n % 2 else 100 + n) for n, w in enumerate(words)}, 1000)
    kept = rarest(words, counts)
    assert len(kept) == MAX_WEIGHED and kept == sorted(kept, key=words.index), "in the question's order"
    held_by_none = {w for w in words if counts[0][w] == 0}
    assert set(kept) == held_by_none | {f"w{n}" for n in range(0, 18, 2)}, "the nine least common of the rest"
    assert rarest(words[:3], counts) == words[:3]
    assert rarest(words, None) == words[:MAX_WEIGHED]


def test_a_word_is_taken_out_whole_in_any_case() -> None:
    assert without_word("Set pool_size, not POOL: the pool.", "pool") == "Set pool_size, not : the ."


SAME_TEXT = """# Testing

Use the test client to send requests to the app without running a server. Call `client.get("/")`
and check the response status and body in your test.
"""


async def test_a_passage_in_a_folder_the_question_names_comes_first(stack: Stack) -> None:
    index = stack.index()
    for folder, month in (("starlette", "March"), ("flask", "May")):  # same words, but not the same text
        text = f"{SAME_TEXT}\nLast reviewed in {month}.\n"
        await stack.ingestor.add(
            index, Source("testing.md", text.encode(), source_key=f"{folder}/docs/testing.md")
        )
    question = "how do i send a request to my flask app from a test without running a server?"
    retrieval, ranking = await ranked(stack, index, question)
    assert {h.document.source_key for h in retrieval.hits} == {
        "flask/docs/testing.md",
        "starlette/docs/testing.md",
    }
    assert ranking.passages[0].hit.document.source_key == "flask/docs/testing.md"
    assert folders(ranking.passages[0].hit) == {"flask", "doc"}


def _long_doc(topic: str, variable: str) -> str:
    filler = " ".join(
        f"The {topic} settings apply to every session your team opens, and step {n} of the setup "
        f"checks that the {topic} configuration is in place before any request leaves the laptop."
        for n in range(1, 9)
    )
    closing = f"Set the {topic} through one environment variable, {variable}, read at start-up."
    return f"# Configuring the {topic}\n\n{filler}\n\n{filler}\n\n## The variable\n\n{closing}\n"


async def test_each_of_the_best_passages_is_read_on_into_the_next(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("proxies.md", _long_doc("proxy", "HTTPS_PROXY")))
    await stack.ingestor.add(
        index, md("certificates.md", _long_doc("certificate bundle", "REQUESTS_CA_BUNDLE"))
    )
    question = "how do we configure the proxy and the certificate bundle settings for every session?"
    retrieval = await stack.retriever.search([stack.fresh(index)], question, top_k=8)
    knowledge = Knowledge(stack.retriever, None, window=16_000, calibration=TRUSTING)
    ranking = (await knowledge.judge(question, retrieval)).ranking
    read = [p for p in ranking.passages[:READ_ON] if p.following]
    assert len(read) >= 2, "not only the best passage is read on"
    for passage in read:
        following = await stack.retriever.following(passage.hit)
        assert following is not None and passage.units[-1].unit in decoded(following.units or "")


def next_chunk(hit: Hit, following: str, heading: str | None = None) -> ChunkRecord:
    """The chunk after `hit` in its document, holding `following` (which may repeat the end
    of `hit`, as chunks overlap), with its units as ingest records them: read from the whole
    document."""
    assert hit.start is not None
    overlap = next(
        (
            len(hit.text) - k
            for k in range(len(hit.text))
            if hit.text[k:].strip() and following.startswith(hit.text[k:])
        ),
        0,
    )
    separator = "" if overlap or hit.text.endswith("\n") else "\n"
    document = " " * hit.start + hit.text + separator + following[overlap:]
    start = hit.start + len(hit.text) + len(separator) - overlap
    chunks = [Chunk(hit.heading, hit.text, hit.start), Chunk(hit.heading, following, start)]
    found = read_units(chunks, document)[1]
    return ChunkRecord(
        0, hit.document.id, 0, hit.position + 1, heading or hit.heading, following, start, encoded(found)
    )


async def test_reading_on_skips_the_overlap_even_when_it_starts_with_a_capital(stack: Stack) -> None:
    index = stack.index()
    page = "# CORS\n\nBrowsers block cross-origin reads. Wrap the whole application with CORSMiddleware so error responses carry the headers too.\n"
    await stack.ingestor.add(index, md("cors.md", page))
    _, ranking = await ranked(stack, index, "how do error responses get CORS headers?")
    passage = ranking.passages[0]
    assert passage.units[-1].unit.text.startswith("Wrap the whole application")
    # chunks overlap: the next one starts inside that sentence, at a capitalised name
    following = "CORSMiddleware so error responses carry the headers too.\n\nList custom headers in `expose_headers`.\n"
    ranker = Ranker(stack.embedder, stack.retriever.term_frequencies)
    read = ranker.read_on(ranking, passage, next_chunk(passage.hit, following))
    added = [u.unit.text for u in read.units[len(passage.units) :]]
    assert added == ["List custom headers in `expose_headers`."]
    targets = "\n.. _`CORS`: https://developer.mozilla.org/docs/Web/HTTP/CORS\n\nSessions\n--------\n"
    read = ranker.read_on(ranking, passage, next_chunk(passage.hit, targets))
    assert read.units == passage.units, "link targets and the next section's title are nothing to quote"


async def test_a_unit_a_chunk_is_cut_inside_is_recorded_whole_and_read_on_once(stack: Stack) -> None:
    index = stack.index()
    filler = " ".join(
        f"Step {n} checks the proxy settings of the session before it starts." for n in range(40)
    )
    page = f"# Proxies\n\n{filler}\n\nSet HTTPS_PROXY for every session.\n\n- one item\n- another item\n"
    await stack.ingestor.add(index, md("proxies.md", page))
    chunks = chunk_text(page, title="proxies.md")
    assert len(chunks) > 1
    for chunk, found in zip(chunks, read_units(chunks, page), strict=True):
        assert chunk.start is not None
        own = [u for u in found if not u.continues]
        assert all(
            u.start is not None and chunk.start <= u.start < chunk.start + len(chunk.text) for u in own
        )
        assert all(u.text in " ".join(page.split()) for u in own), "each whole, even past the chunk's end"
        pieces = [u for u in found if u.continues]
        assert all(u.fragment for u in pieces[:1]), "the piece of a sentence begun before is a fragment"
    _, ranking = await ranked(stack, index, "how do the steps check the proxy settings?")
    ranker = Ranker(stack.embedder, stack.retriever.term_frequencies)
    for passage in ranking.passages:
        following = await stack.retriever.following(passage.hit)
        if following is None:
            continue
        read = ranker.read_on(ranking, passage, following)
        texts = [u.unit.text for u in read.units]
        assert len(texts) == len(set(texts)), "no unit read on twice"


async def test_the_lead_is_a_sentence_that_states_not_one_that_introduces_code(stack: Stack) -> None:
    index = stack.index()
    page = (
        "# Timeouts\n\nIf you specify a single value for the timeout, like this:\n\n"
        "```python\nrequests.get(url, timeout=5)\n```\n\n"
        "The single timeout value is applied to both the connect and the read timeouts.\n"
    )
    await stack.ingestor.add(index, md("timeouts.md", page))
    _, ranking = await ranked(stack, index, "what if you specify a single value for the timeout?")
    passage = ranking.passages[0]
    assert passage.best_unit is not None
    assert passage.units[passage.best_unit].unit.text.endswith("like this:"), "the colon sentence scores best"
    assert lead(passage) == "The single timeout value is applied to both the connect and the read timeouts."


async def test_a_quote_leaves_out_what_a_neighbouring_quote_showed_at_its_ends(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("proxies.md", _long_doc("proxy", "HTTPS_PROXY")))
    _, ranking = await ranked(stack, index, "which variable sets the proxy for every session?")
    passage = max(ranking.passages, key=lambda p: len(p.units))  # the filler's passage
    whole = excerpt(passage, budget=10_000)
    assert len(whole) >= 3
    assert excerpt(passage, budget=10_000, shown={whole[0], whole[-1]}) == whole[1:-1]
    assert excerpt(passage, budget=10_000, shown={whole[1]}) == whole, "only the ends are trimmed"
    assert excerpt(passage, budget=10_000, shown=set(whole)) == whole[-1:], "a quote is never empty"
    inside = {f"{whole[0]} {whole[1]}"}  # the neighbour's quote held the first unit inside a longer one
    assert excerpt(passage, budget=10_000, shown=inside) == whole[2:]


def test_what_a_neighbouring_quote_showed_takes_none_of_a_quotes_room() -> None:
    shown = Unit("The session pools connections per host.", Kind.SENTENCE, 1)
    best = Unit("Pass timeout=5 to wait at most five seconds.", Kind.SENTENCE, 1)
    after = Unit("Without it a slow server hangs the program.", Kind.SENTENCE, 1)
    passage = scored_units([shown, best, after], [0.9, 1.0, 0.5])
    room = len(best.text) + max(len(shown.text), len(after.text))  # the best and one neighbour
    assert excerpt(passage, budget=room) == [shown.text, best.text], "the better neighbour first"
    assert excerpt(passage, budget=room, shown={shown.text}) == [best.text, after.text]
    tail = Unit("x = 1", Kind.CODE, 1)  # the passage begins with the tail of a block quoted whole
    passage = scored_units([tail, best], [0.9, 1.0])
    assert excerpt(passage, shown={"```\nimport os\nx = 1\n```"}) == [best.text], (
        "code is found without fences"
    )
    fenced = Unit("```bash\nuv add 'uvicorn[standard]'\n```", Kind.CODE, 1)  # shown with another info string
    passage = scored_units([fenced, best], [0.9, 1.0])
    assert excerpt(passage, shown={"```\nuv add 'uvicorn[standard]'\n```"}) == [best.text], (
        "a fenced block's lines are found without its fences too"
    )


def test_a_quote_grows_back_into_the_tail_of_a_block_the_passage_before_begins_only_when_it_scores() -> None:
    before = "Pass a transport:\n\n```pycon\n>>> transport = httpx.HTTPTransport(local_address='0.0.0.0')\n"
    text = (
        ">>> client = httpx.Client(transport=transport)\n```\n\n"
        "Connection retries are also available via this interface.\n"
        "Requests will be retried the given number of times in case a connection fails."
    )
    found = in_document(before, text)
    assert found[0].kind == Kind.CODE and found[0].continues, "the end of another example"
    assert 0.4 < TAIL_SHARE < 0.6
    passage = scored_units(found, [0.4, 1.0, 0.8])  # under TAIL_SHARE of the best: another example's end
    assert excerpt(passage, budget=10_000) == [
        "Connection retries are also available via this interface.",
        "Requests will be retried the given number of times in case a connection fails.",
    ]
    assert passage.best_unit == 1
    about_it = scored_units(found, [0.6, 1.0, 0.8])  # the lines the answer is about
    assert excerpt(about_it, budget=10_000)[0] == "```\n>>> client = httpx.Client(transport=transport)\n```"
    alone = scored_units(found[:1], [1.0])
    assert excerpt(alone, budget=10_000) == ["```\n>>> client = httpx.Client(transport=transport)\n```"], (
        "a passage of nothing else is still quoted by it"
    )


def test_a_quote_does_not_end_with_a_sentence_introducing_an_example_it_leaves_out() -> None:
    best = Unit(
        "The write timeout is the longest wait to send a chunk of the request body.", Kind.SENTENCE, 1
    )
    intro = Unit("You can configure the timeout behavior for any of these values...", Kind.SENTENCE, 1)
    short = Unit("timeout = httpx.Timeout(10.0, write=60.0)", Kind.CODE, 2)
    room = len(best.text) + len(intro.text)  # the example does not fit the budget
    passage = scored_units([best, intro, short], [1.0, 0.5, 0.1])
    assert excerpt(passage, budget=room) == [best.text, intro.text, f"```\n{short.text}\n```"], (
        "a short example is shown past the budget"
    )
    long = Unit("\n".join(f"client_{n} = httpx.Client(timeout=timeout)" for n in range(40)), Kind.CODE, 2)
    passage = scored_units([best, intro, long], [1.0, 0.5, 0.1])
    assert excerpt(passage, budget=room) == [best.text], "a long one leaves out the sentence promising it"
    alone = scored_units([intro, long], [1.0, 0.1])
    assert excerpt(alone, budget=len(intro.text)) == [intro.text], "the best unit is always quoted"


def test_an_answer_never_begins_with_a_code_block() -> None:
    code = Unit("with client.session_transaction() as session:\n    session['user_id'] = 1", Kind.CODE, 1)
    stating = Unit(
        "Use the client's session_transaction() method to set values before a request.", Kind.SENTENCE, 1
    )
    introducing = Unit("Here is an example of such a test:", Kind.SENTENCE, 1)
    other = scored_units([stating], [0.8])
    assert first_line([scored_units([code], [1.0]), other]) == f"{stating.text} [2]", "the next quote's"
    assert first_line([scored_units([introducing, code], [0.9, 1.0]), other]) == f"{introducing.text} [1]"
    assert first_line([scored_units([code], [1.0])]) == f"{code.quoted} [1]", "with nothing else to say"


def _debugging_page(handlers: int = 15, after: str = "The license changed as well.\n") -> str:
    """A reST page whose list item holds a literal block too long for one chunk."""
    filler = " ".join(f"Release {n} changed how sessions pool their connections." for n in range(1, 12))
    steps = "\n".join(
        f"      handler_{n} = logging.StreamHandler()  # handler number {n}" for n in range(1, handlers + 1)
    )
    return (
        "Migrating to 1.x\n================\n\n"
        f"{filler}\n\n"
        "* The verbosity option should be handled by configuring logging.\n\n"
        "  ::\n\n"
        "      import logging\n"
        f"{steps}\n"
        "      logging.getLogger('urllib3').setLevel(logging.DEBUG)\n\n"
        f"{after}"
    )


async def test_a_code_block_cut_by_the_chunker_is_read_on_whole(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("api.rst", _debugging_page()))
    question = "how do i turn on verbose logging of the headers to debug?"
    retrieval = await stack.retriever.search([stack.fresh(index)], question, top_k=8)
    knowledge = Knowledge(stack.retriever, None, window=16_000, calibration=TRUSTING)
    ranking = (await knowledge.judge(question, retrieval)).ranking
    cut = [p for p in ranking.passages[:READ_ON] if "import logging" in p.hit.text and p.continued]
    assert cut, "the passage holding the start of the block is read on"
    assert "urllib3" not in cut[0].hit.text, "the block is cut between two passages"
    code = [u.unit.text for u in cut[0].units if u.unit.kind == "code"]
    assert len(code) == 1, "one block, quoted as one"
    assert code[0].startswith("import logging")
    assert code[0].endswith("logging.getLogger('urllib3').setLevel(logging.DEBUG)")
    assert "\n".join(code).count("handler_15 =") == 1, "the lines both chunks hold are quoted once"


async def test_a_code_block_read_on_into_the_next_passage_is_not_quoted_again_from_it(stack: Stack) -> None:
    index = stack.index()
    steps = "\n".join(
        f"    handler_{n} = logging.StreamHandler()  # handler number {n}" for n in range(1, 19)
    )
    page = f"Debugging\n=========\n\nTurn on verbose logging of every header like this::\n\n{steps}\n"
    await stack.ingestor.add(index, md("debugging.rst", page))
    question = "how do i turn on verbose logging of every header?"
    knowledge = Knowledge(stack.retriever, None, window=16_000, calibration=TRUSTING)
    ranking = (
        await knowledge.judge(question, await stack.retriever.search([stack.fresh(index)], question))
    ).ranking
    (first,) = [p for p in ranking.passages[:READ_ON] if "handler_1 =" in p.hit.text]
    assert "handler_18 =" not in first.hit.text, "the block is cut between two passages"
    assert first.continued and not first.following, "the next passage's code made its last unit whole"
    assert first.units[-1].unit.text.endswith("handler_18 = logging.StreamHandler()  # handler number 18")
    answer = await knowledge.ask(Request([stack.fresh(index)], [{"role": "user", "content": question}]))
    shown = [line for line in answer.text.split("\n") if "handler_" in line]
    assert len(shown) == 18 and len(set(shown)) == 18, "each line of the block once"


@pytest.mark.parametrize("handlers", [15, 40], ids=["the passage before opens it", "one further back does"])
async def test_a_passage_that_begins_inside_a_literal_block_is_scored_with_its_lines_as_code(
    stack: Stack, handlers: int
) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("api.rst", _debugging_page(handlers)))
    question = "how do i set the urllib3 logger to debug level?"
    retrieval = await stack.retriever.search([stack.fresh(index)], question, top_k=8)
    knowledge = Knowledge(stack.retriever, None, window=16_000, calibration=TRUSTING)
    ranking = (await knowledge.judge(question, retrieval)).ranking
    passage = next(p for p in ranking.passages if "urllib3" in p.hit.text)
    assert "::" not in passage.hit.text, "the passage begins inside a block"
    chunks = [c.text for c in chunk_text(_debugging_page(handlers), title="api.rst")]
    assert ("::" in chunks[passage.hit.position - 1]) == (handlers == 15), (
        "opened by the passage before, or not"
    )
    first = passage.units[0].unit
    assert first.kind == "code" and first.text.endswith(
        "logging.getLogger('urllib3').setLevel(logging.DEBUG)"
    )
    assert f"handler_{handlers} = logging.StreamHandler()  # handler number {handlers}" in first.text, (
        "as written"
    )
    assert [u.unit.text for u in passage.units[1:]] == ["The license changed as well."]
    assert units(passage.hit.text)[0].kind == "sentence", "read alone, its first lines would be prose"


async def test_a_passage_is_scored_by_what_it_holds_of_a_unit_and_quotes_it_whole(stack: Stack) -> None:
    index = stack.index()
    clause = ", then the proxy settings of the session are checked once more"
    page = f"# Proxies\n\nEvery request starts{clause * 40} and HTTPS_PROXY wins in the end.\n"
    await stack.ingestor.add(index, md("proxies.md", page))
    _, ranking = await ranked(stack, index, "which proxy setting wins in the end?")
    first = next(p for p in ranking.passages if p.hit.position == 0)
    (unit,) = [u.unit for u in first.units]
    assert unit.text.endswith("HTTPS_PROXY wins in the end."), "stored whole, though it runs past the passage"
    held = as_held(unit, first.hit)
    assert unit.text.startswith(held.text) and len(held.text) < len(unit.text)
    assert "HTTPS_PROXY" not in held.text, "what the passage does not hold is not its evidence"
    assert set(held.text.split()) <= set(first.hit.text.split())


def test_a_chunks_units_are_the_documents_units_in_its_span() -> None:
    """Ingest reads a document once, whole; each chunk gets the units that begin in it, and
    the piece of one begun before it; each unit's offsets slice the document back to it."""
    page = _debugging_page(40)
    chunks = chunk_text(page, title="api.rst")
    assert len(chunks) > 2
    read = read_units(chunks, page)
    for chunk, found in zip(chunks, read, strict=True):
        assert chunk.start is not None
        for unit in found:
            assert unit.start is not None and unit.end is not None
            source = page[unit.start : unit.end]
            if unit.continues:
                assert unit.start == chunk.start
            elif unit.kind == Kind.CODE:
                assert unit.text.removesuffix("\n…").split("\n")[-1].strip() in source
            else:
                assert " ".join(source.split()).startswith(unit.text.split()[0])
    code = [u for found in read for u in found if u.kind == Kind.CODE and not u.continues]
    assert len({u.start for u in code}) == len(code), "a block longer than a chunk is recorded whole once"
    assert any(u.end is not None and u.end - (u.start or 0) > len(chunks[1].text) for u in code)


async def test_units_are_recorded_at_ingest_and_old_chunks_get_them_at_repair(stack: Stack) -> None:
    """A question reads the units ingest recorded; chunks stored before units were recorded
    (revision 0022) get them from the repair at start, read as ingest would have."""
    index = stack.index()
    await stack.ingestor.add(index, md("api.rst", _debugging_page(40)))
    hits = (await stack.retriever.search([stack.fresh(index)], "urllib3 logger debug level", top_k=20)).hits
    stored = {h.chunk_id: h.units for h in hits}
    assert stored and all(u is not None for u in stored.values())
    read = read_units(chunk_text(_debugging_page(40), title="api.rst"), _debugging_page(40), "rst")
    assert all(decoded(h.units or "") == read[h.position] for h in hits), "read from the whole document"
    assert any(u.kind == Kind.CODE for h in hits if h.position for u in decoded(h.units or "")[:1]), (
        "a chunk beginning inside the literal block begins with code"
    )
    with stack.db.engine.begin() as connection:  # as an older Lore left them
        connection.execute(text_sql("update chunk set units = null"))
    assert stack.documents.without_units(10)
    assert await stack.ingestor.repair({index.id: index}) == 0, "nothing was half written"
    assert not stack.documents.without_units(10)
    again = (await stack.retriever.search([stack.fresh(index)], "urllib3 logger debug level", top_k=20)).hits
    assert {h.chunk_id: h.units for h in again} == stored, "the same units as ingest recorded"
    assert stack.ingestor.read_old_units() == 0, "once read, nothing is read again"
    config = alembic_config(stack.db.engine)
    command.downgrade(config, "0024")
    with stack.db.engine.begin() as connection:  # as Lore recorded them before their offsets
        connection.execute(text_sql('update chunk set units = \'[["Old.","sentence",1,"","",false]]\''))
    assert decoded('[["Old.","sentence",1,"","",false]]') == [Unit("Old.", Kind.SENTENCE, 1)], "still read"
    assert await stack.ingestor.repair({index.id: index}) == 0
    assert not stack.documents.without_units(10), "a start before the migration reads nothing again"
    command.upgrade(config, "head")  # 0025 clears the older form
    assert await stack.ingestor.repair({index.id: index}) == 0
    again = (await stack.retriever.search([stack.fresh(index)], "urllib3 logger debug level", top_k=20)).hits
    assert all((h.units or "").startswith(PREFIX) for h in again), "older forms are read again at start"
    assert {h.chunk_id: h.units for h in again} == stored


def scored_units(found: Sequence[Unit], scores: Sequence[float]) -> Scored:
    """A passage of `found` units, each scored `scores` (dense and overall), as the second
    stage would leave it."""
    return Scored(None, 1.0, [ScoredUnit(u, s, 0.0, s) for u, s in zip(found, scores, strict=True)])  # type: ignore[arg-type]


def test_a_directive_is_named_once_and_its_quote_keeps_out_text_of_no_known_directive() -> None:
    """A passage cut from a reST reference page may begin with the tail of a body whose
    directive line fell into the passage before ("Default: None" of some other setting)."""
    text = (
        "    Default: ``None``\n\n"
        ".. py:data:: SECRET_KEY\n\n"
        "    A secret key that will be used for securely signing the session cookie.\n"
        "    It should be a long random ``bytes`` or ``str``. For example, copy the output of this:\n\n"
        "    .. code-block:: text\n\n"
        "        $ python -c 'import secrets; print(secrets.token_hex())'\n\n"
        "    Do not reveal the secret key.\n"
    )
    scores = [0.9, 1.0, 0.5, 0.4, 0.3, 0.2]  # the stray default scores second best
    passage = scored_units(units(text), scores)
    assert excerpt(passage, budget=10_000) == [
        "SECRET_KEY: A secret key that will be used for securely signing the session cookie.",
        "It should be a long random `bytes` or `str`.",
        "For example, copy the output of this:",
        "```\n$ python -c 'import secrets; print(secrets.token_hex())'\n```",
        "Do not reveal the secret key.",
    ]


async def test_a_passage_of_one_introducing_sentence_leads_with_its_best_list_item(stack: Stack) -> None:
    index = stack.index()
    page = (
        "# Blueprints\n\nBlueprints are intended for these cases:\n\n"
        "- Factor an application into a set of blueprints, one for each part of a larger application.\n"
        "- Register a blueprint on an application at a URL prefix, so that all of its routes share it.\n"
        "- Provide template filters, static files and templates through blueprints.\n"
    )
    await stack.ingestor.add(index, md("blueprints.md", page))
    _, ranking = await ranked(stack, index, "how do I register a blueprint at a URL prefix?")
    assert lead(ranking.passages[0]) == (
        "Register a blueprint on an application at a URL prefix, so that all of its routes share it."
    )


def test_an_item_leads_with_its_own_paragraph_not_its_sub_items() -> None:
    (item,) = units(
        "- `--log-config <path>` - Logging configuration file, in the `dictConfig()` formats.\n"
        "    * A YAML file needs PyYAML installed.\n"
    )
    assert item.kind == Kind.ITEM and "\n" in item.text, "the sub-item is quoted on its own line"
    passage = scored_units([item], [1.0])
    assert (
        lead(passage) == "`--log-config <path>` - Logging configuration file, in the `dictConfig()` formats."
    )


def test_a_quote_that_runs_past_a_heading_shows_the_heading() -> None:
    text = (
        "Keep-alive is automatic within a session.\n\n"
        "Streaming Uploads\n-----------------\n\n"
        "Requests supports streaming uploads of large files.\n"
        "Provide a file-like object as the body.\n"
    )
    found = units(text)
    passage = scored_units(found, [1.0, 0.9, 0.8])
    assert excerpt(passage, budget=10_000) == [
        "Keep-alive is automatic within a session.",
        "**Streaming Uploads**",
        "Requests supports streaming uploads of large files.",
        "Provide a file-like object as the body.",
    ], "the heading where the quote crosses it, not above its first unit"
    under = scored_units(found[1:], [1.0, 1.0])
    assert excerpt(under, budget=10_000)[0] == "Requests supports streaming uploads of large files."
    later = scored_units(found, [0.9, 1.0, 0.8])
    assert excerpt(later, budget=10_000) == [
        "Requests supports streaming uploads of large files.",
        "Provide a file-like object as the body.",
    ], "a quote grows on into the next section, never back into the one before its best unit"


def test_a_quote_grows_past_a_heading_only_into_what_answers_too() -> None:
    """Uvicorn's resource limits, then its server errors: a quote of the limits has room for
    the next section, which says nothing the question asked."""
    text = (
        "Uvicorn provides the following resource limiting:\n\n"
        "* Max requests. The number of requests served before the process ends.\n\n"
        "Server Errors\n-------------\n\n"
        "Server errors will be logged at the `error` log level.\n"
    )
    found = units(text)
    assert [u.section for u in found] == ["", "", "Server Errors"]
    quoted = excerpt(scored_units(found, [0.7, 0.9, 0.2]), budget=10_000)
    assert quoted == [found[0].quoted, found[1].quoted], "not on into the next section"
    assert excerpt(scored_units(found, [0.7, 0.9, 0.5]), budget=10_000)[-2:] == [
        "**Server Errors**",
        found[2].quoted,
    ], "it scores half the best unit's score: shown"
    assert len(excerpt(scored_units(found, [0.2, 0.9, 0.1]), budget=10_000)) == 2, (
        "within its section a quote still grows to fill its room"
    )
    # A section whose first sentence only opens it ("Why use a Client?", then "TL;DR: …").
    opened = units(text + "Errors of the application are logged with their traceback.\n")
    quoted = excerpt(scored_units(opened, [0.7, 0.9, 0.2, 0.6]), budget=10_000)
    assert quoted[-3:] == ["**Server Errors**", opened[2].quoted, opened[3].quoted]
    # Read on from the next passage, the next section is weighed by the words it holds alone.
    for coverage, grown in [(0.1, 2), (0.2, 4)]:
        scores = zip(found, [0.7, 0.9, 0.05], [0.1, 0.3, coverage], strict=True)
        scored = [ScoredUnit(u, s, c, s) for u, s, c in scores]
        passage = Scored(None, 1.0, scored, following=1)  # type: ignore[arg-type]
        assert len(excerpt(passage, budget=10_000)) == grown


async def test_the_passage_read_on_into_names_the_section_it_opens(stack: Stack) -> None:
    index = stack.index()
    page = (
        "# Responses\n\n## Set Cookie\n\nStarlette provides a `set_cookie` method to set cookies on the response.\n\n"
        "## HTMLResponse\n\nTakes some text or bytes and returns an HTML response.\n"
    )
    await stack.ingestor.add(index, md("responses.md", page))
    _, ranking = await ranked(stack, index, "how do I set a cookie on a response?")
    cookie = next(p for p in ranking.passages if "set_cookie" in p.hit.text)
    following = await stack.retriever.following(cookie.hit)
    assert following is not None and following.text.startswith("Takes some text")
    read = Ranker(stack.embedder, stack.retriever.term_frequencies).read_on(ranking, cookie, following)
    assert [(u.unit.text, u.unit.section) for u in read.units[len(cookie.units) :]] == [
        ("Takes some text or bytes and returns an HTML response.", "HTMLResponse")
    ], "the stored passage has no heading line: its units are shown under it"


def test_a_question_the_page_asks_is_never_the_lead() -> None:
    asked = Unit("So how exactly does Flask handle uploads of large files?", Kind.SENTENCE, 1)
    answer = Unit(
        "Flask keeps small uploads in memory and larger ones in a temporary file.", Kind.SENTENCE, 1
    )
    passage = scored_units([asked, answer], [1.0, 0.6])
    assert lead(passage) == answer.text
    assert first_line([passage]) == f"{answer.text} [1]"


def test_a_directives_name_is_shown_once_even_when_its_first_sentence_says_it() -> None:
    found = units(
        ".. data:: session\n\n"
        "   A proxy to the session data for the current request.\n"
        "   This is only available when a request context is active.\n"
    )
    passage = scored_units(found, [0.5, 1.0])
    assert excerpt(passage, budget=10_000) == [
        "A proxy to the session data for the current request.",
        "This is only available when a request context is active.",
    ], "its first sentence names it: the second is not labelled as if it began the body"
