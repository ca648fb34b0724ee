"""An answer for another project than the question names is no answer: with several projects'
docs in one index, "can uvicorn serve static files?" must not be answered from FastAPI's
`StaticFiles` page."""

from __future__ import annotations

from dataclasses import replace

from knowledge.answering.answer import KNOWLEDGE_RULES, Fallback, FallbackStrategy, ResponseMode, Rule
from knowledge.engine import Knowledge, Request
from knowledge.judging.abstain import Calibration, Elsewhere, elsewhere
from knowledge.judging.ranking import QuestionTerms, Ranking, Scored, ScoredUnit
from knowledge.search.notices import Notice, NoticeKind
from knowledge.text.quotes import units
from knowledge.text.words import content_words, stem
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.knowledge.answering.test_citations import hit
from tests.knowledge.conftest import Stack, chat_model, md

UVICORN = """# Deployment

Run the server with `uvicorn main:app --host 0.0.0.0 --port 8000`. Uvicorn serves one ASGI
application: pass its import string, and use `--workers 4` to run several processes.

## Behind Nginx

Put Nginx in front of uvicorn to terminate TLS, and pass `--proxy-headers` so uvicorn trusts
the client address Nginx forwards.
"""
STATIC = """# Static Files

You can serve static files automatically from a directory using `StaticFiles`. Mount a
`StaticFiles()` instance at a path: `app.mount("/static", StaticFiles(directory="static"))`,
and every file in the folder is served under `/static`.
"""
SURE = Calibration(50.0, (0.0, 0.0, 0.0, 0.0, 0.0), threshold=0.5)
"""Answers whatever it finds: only the project the question names can make it refuse."""


def ranking(question: str, *passages: tuple[str, str]) -> Ranking:
    """A ranking of (source key, text) passages, best first, for `question`."""
    scored = []
    for n, (key, text) in enumerate(passages, start=1):
        found = hit(text, n)
        found = replace(found, document=replace(found.document, source_key=key))
        scored.append(Scored(found, 2.0 - n / 10, [ScoredUnit(u, 0.5, 0.5, 0.5) for u in units(text)]))
    return Ranking(question, scored, QuestionTerms({stem(w): 1.0 for w in content_words(question)}))


def test_the_best_passage_in_another_project_than_the_one_named_answers_elsewhere() -> None:
    static = ("corpus/fastapi/docs/static-files.md", "Mount StaticFiles to serve a directory of files.")
    deploy = ("corpus/uvicorn/docs/deployment.md", "Run uvicorn behind Nginx with --proxy-headers.")
    settings = ("corpus/uvicorn/docs/settings.md", "Use --port to bind uvicorn to another port.")
    question = "can uvicorn serve a folder of static files?"
    assert elsewhere(ranking(question, static, deploy, settings)) == Elsewhere(("uvicorn",), "fastapi")
    assert elsewhere(ranking(question, deploy, static, settings)) is None, "the best passage is uvicorn's"
    assert elsewhere(ranking("how do I serve a folder of static files?", static, deploy)) is None, (
        "none named"
    )
    said = ("corpus/fastapi/docs/static-files.md", "Mount StaticFiles, then run uvicorn as usual.")
    assert elsewhere(ranking(question, said, deploy)) is None, "the passage says how the two go together"
    readme = ("corpus/README.md", "Copies of two projects' docs, with their licenses.")
    beside = ranking(question, static, deploy, settings, readme)
    assert elsewhere(beside) == Elsewhere(("uvicorn",), "fastapi"), "a file beside the projects is no project"
    assert elsewhere(ranking(question, readme, static, deploy, settings)) is None, (
        "the best passage is beside"
    )
    both = "can uvicorn serve static files the way fastapi does?"
    assert elsewhere(ranking(both, static, deploy)) is None
    # Websites part ways at their hosts.
    hosts = [
        ("https://fastapi.tiangolo.com/tutorial/static-files/", static[1]),
        ("https://www.uvicorn.org/deployment/", deploy[1]),
    ]
    assert elsewhere(ranking(question, *hosts)) == Elsewhere(("www.uvicorn.org",), "fastapi.tiangolo.com")


def test_a_projects_name_that_is_a_common_word_or_a_file_beside_the_folders_names_nothing() -> None:
    # "requests" names the Requests project's folder, but Flask's passages say it too.
    flask = [
        ("docs/flask/form.rst", "Form data is parsed into a MultiDict on the form attribute."),
        *(
            (f"docs/flask/{name}.rst", f"The request object holds the {name} of incoming requests.")
            for name in ("files", "headers")
        ),
    ]
    library = ("docs/requests/api.rst", "requests.get(url, timeout=3) sends a GET request.")
    assert elsewhere(ranking("how do I read the form of incoming requests?", *flask, library)) is None
    # Sections of one project's docs are folders beside its pages, not projects.
    pages = [("docs/tutorial/views.rst", "Register the view."), ("docs/config.rst", "Set SECRET_KEY.")]
    assert elsewhere(ranking("where does the config go in the tutorial?", *reversed(pages))) is None
    # A site's sections are folders too, but their pages rarely write the folder's name.
    guide = ("https://docs.example.com/guide/pagination/", "Pass a cursor to fetch the next page of results.")
    reference = [
        ("https://docs.example.com/api/list/", "GET /items returns up to 100 items per page."),
        ("https://docs.example.com/api/auth/", "Send the token in the Authorization header."),
        ("https://docs.example.com/api/keys/", "Keys for the API are made in the settings."),
        ("https://docs.example.com/api/errors/", "Errors come back as JSON with a code."),
    ]
    asked = "how do i page through results in the api?"
    assert elsewhere(ranking(asked, guide, *reference)) is None, "a quarter of api/'s pages is no project"
    named = [(key, f"{text} Every route of the API is versioned.") for key, text in reference]
    assert elsewhere(ranking(asked, guide, *named)) == Elsewhere(("api",), "guide"), "a project says its name"
    assert elsewhere(ranking(asked, guide, ("https://docs.example.com/intro/", "Welcome."))) is None, (
        "no passage of the named part was found to say whether it is a project"
    )
    assert elsewhere(ranking("question", ("a.md", "x"), ("b.md", "y"))) is None, "no folders at all"
    assert elsewhere(Ranking("question", [])) is None


async def test_an_answer_for_another_project_is_refused_and_says_whose_it_is(stack: Stack) -> None:
    index = stack.index()
    for key, text in {"docs/uvicorn/deployment.md": UVICORN, "docs/fastapi/static-files.md": STATIC}.items():
        await stack.ingestor.add(index, replace(md(key.rsplit("/", 1)[1], text), source_key=key))
    knowledge = Knowledge(stack.retriever, None, window=16_000, calibration=SURE)

    def asking(question: str) -> Request:
        return Request([stack.indexes.get(index.id)], [{"role": "user", "content": question}])

    answer = await knowledge.ask(asking("can uvicorn serve a folder of static files by itself?"))
    assert answer.abstained and answer.citations == [] and answer.confidence == 0.0
    assert answer.notices == [Notice(NoticeKind.ELSEWHERE, "fastapi", ("uvicorn",))]
    assert answer.closest[0].name == "static-files.md"
    answered = await knowledge.ask(asking("how do I serve a folder of static files with fastapi?"))
    assert not answered.abstained and answered.citations[0].name == "static-files.md"
    assert not answered.notices


async def test_a_model_is_not_given_another_projects_passages_as_the_documents(
    stack: Stack, llm: FakeOpenAI
) -> None:
    """SMART_FALLBACK hands the model passages close enough to the question whatever the
    confidence; FastAPI's `StaticFiles` page is close to a question about Uvicorn serving static
    files, and a model told to answer from it would, citing it. Found for another project, the
    passages are no documents to answer from: the model answers from its own knowledge, labelled."""
    index = stack.index()
    for key, text in {"docs/uvicorn/deployment.md": UVICORN, "docs/fastapi/static-files.md": STATIC}.items():
        await stack.ingestor.add(index, replace(md(key.rsplit("/", 1)[1], text), source_key=key))
    knowledge = Knowledge(stack.retriever, chat_model(llm), window=16_000, calibration=SURE)
    question = [{"role": "user", "content": "can uvicorn serve a folder of static files by itself?"}]
    searched = [stack.indexes.get(index.id)]
    llm.enqueue(Reply("Not by itself: Uvicorn is an ASGI server and serves what the app serves."))
    request = Request(searched, question, mode=ResponseMode.SMART_FALLBACK, min_confidence=0.0)
    answer = await knowledge.ask(request)
    assert KNOWLEDGE_RULES[Rule.GENERAL] in llm.chat_requests[0].messages[0]["content"]
    assert "StaticFiles" not in str(llm.chat_requests[0].messages), "FastAPI's passage is not given"
    assert answer.fallback == Fallback.GENERAL_KNOWLEDGE and answer.citations == []
    assert answer.notices == [
        Notice(NoticeKind.ELSEWHERE, "fastapi", ("uvicorn",)),
        Notice(NoticeKind.GENERAL_KNOWLEDGE),
    ]
    # With no general knowledge allowed, it is the same refusal as without a model.
    strict = await knowledge.ask(replace(request, fallback=FallbackStrategy.NONE))
    assert strict.abstained and strict.notices == [Notice(NoticeKind.ELSEWHERE, "fastapi", ("uvicorn",))]
    assert len(llm.chat_requests) == 1
    # A model answering first from its own knowledge may still cite the passages; the answer
    # says whose they are.
    llm.enqueue(Reply("Uvicorn serves the app; mount StaticFiles in the app for files [1]."))
    first = await knowledge.ask(replace(request, mode=ResponseMode.LLM_PRIORITY))
    assert first.notices == [Notice(NoticeKind.ELSEWHERE, "fastapi", ("uvicorn",))]
    # A question about the project the passages are for is answered from them, as before.
    llm.enqueue(Reply("Mount a `StaticFiles` instance at a path [1]."))
    asked = [{"role": "user", "content": "how do I serve a folder of static files with fastapi?"}]
    answered = await knowledge.ask(replace(request, messages=asked))
    assert answered.fallback is None and answered.citations[0].name == "static-files.md"
