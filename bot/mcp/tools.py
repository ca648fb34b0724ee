"""The MCP tools, each one declaration: its name, what it is for (the description an agent
chooses by), its arguments and result (`bot.mcp.shapes`), and the use case it runs.

A tool only parses its arguments and shapes its result: every read and write goes through
the use cases in `bot.app.actions`, which check the permission table, so an agent gets
exactly what the same key (or the local user) gets through the HTTP API or the CLI.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import BaseModel

from bot.app.services import Services
from bot.chat.messages import notice as worded
from bot.chat.runtime import Runtime
from bot.mcp import shapes
from bot.mcp.bounds import Budget, capped
from bot.mcp.resources import uri
from bot.mcp.who import Principal
from knowledge import DocumentFacts, Fetcher, FilterError, KnowledgeError, NotAllowed, Schedule, Source
from storage.access import Action, allowed
from storage.values import SourceKind


@dataclass(frozen=True)
class Lore:
    """What the tools work with: the services, the safe fetcher, the size bound."""

    services: Services
    fetcher: Fetcher
    max_chars: int
    """Characters of text one result carries at most (`LORE_MCP_MAX_CHARS`)."""

    @classmethod
    def of(cls, runtime: Runtime) -> Lore:
        return cls(runtime.services, runtime.fetcher, runtime.services.settings.lore_mcp_max_chars)


Run = Callable[[Lore, Principal, Any], Awaitable[BaseModel]]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args: type[shapes.Args]
    result: type[BaseModel]
    run: Run
    writes: bool = False

    def declared(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.args.model_json_schema(),
            output_schema=self.result.model_json_schema(),
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=not self.writes,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=self.writes,
            ),
        )


async def search_knowledge(lore: Lore, who: Principal, args: shapes.SearchArgs) -> shapes.SearchResult:
    indexes, notices = await who.indexes(lore.services, args.indexes)
    k, capped_notice = capped(args.k, shapes.MAX_K)
    if not indexes:
        return shapes.SearchResult(passages=[], notices=[*notices, NOTHING_TO_SEARCH])
    try:
        found = await lore.services.actions.search.search(
            who.place, indexes, args.query, top_k=k, where=args.filters
        )
    except FilterError as exc:
        raise KnowledgeError(f"filters: {exc}") from None
    budget = Budget(lore.max_chars)
    passages = []
    for hit in found.hits:
        text = budget.take(hit.text)
        if text is not None:
            passages.append(
                shapes.Passage(
                    index=hit.index.name,
                    document=hit.document.name,
                    document_id=hit.document.id,
                    url=hit.document.url,
                    heading=hit.heading,
                    text=text,
                    score=round(hit.score, 6),
                    resource=uri(hit.index.name, hit.document.id),
                )
            )
    return shapes.SearchResult(
        passages=passages,
        notices=[
            *notices,
            *capped_notice,
            *(worded(n) for n in found.notices),
            *budget.notices("passages", lore.max_chars),
        ],
    )


async def ask(lore: Lore, who: Principal, args: shapes.AskArgs) -> shapes.AskResult:
    indexes, notices = await who.indexes(lore.services, args.indexes)
    if not indexes:
        return shapes.AskResult(
            answer=NOTHING_TO_SEARCH,
            abstained=True,
            confidence=None,
            citations=[],
            closest=[],
            notices=notices,
        )
    answer = await lore.services.actions.search.ask(who.place, indexes, args.question)
    budget = Budget(lore.max_chars)
    text = budget.take(answer.text) or ""
    citations = [
        shapes.Cited(
            n=c.n,
            document=c.name,
            index=c.index_name,
            url=c.url,
            section=c.section or None,
            text=budget.take(c.text) or "",
            score=round(c.score, 6),
            resource=uri(c.index_name, c.document_id),
        )
        for c in answer.citations
    ]
    closest = [
        shapes.Closest(
            document=c.name, index=c.index_name, url=c.url, resource=uri(c.index_name, c.document_id)
        )
        for c in answer.closest
    ]
    return shapes.AskResult(
        answer=text,
        abstained=answer.abstained,
        confidence=None if answer.confidence is None else round(answer.confidence, 4),
        citations=citations,
        closest=closest,
        notices=[*notices, *(worded(n) for n in answer.notices), *budget.notices("quotes", lore.max_chars)],
    )


async def list_indexes(lore: Lore, who: Principal, _: shapes.NoArgs) -> shapes.IndexList:
    services = lore.services
    visible = sorted(await services.catalog.visible(who.place, Action.SEARCH), key=lambda i: (i.name, i.id))
    rows = []
    for index in visible:
        stats = await services.actions.indexes.stats(index)
        rows.append(
            shapes.IndexInfo(
                name=index.name,
                scope=str(index.scope),
                documents=stats.documents,
                chunks=stats.chunks,
                may_add=allowed(Action.ADD, index.facts, who.place),
            )
        )
    return shapes.IndexList(indexes=rows)


async def list_documents(lore: Lore, who: Principal, args: shapes.ListDocumentsArgs) -> shapes.DocumentPage:
    actions = lore.services.actions
    index = await actions.indexes.find(who.place, args.index, Action.SEARCH)
    rows = await actions.documents.listing(who.place, index, limit=args.limit + 1, after=args.cursor)
    shown = rows[: args.limit]
    return shapes.DocumentPage(
        index=index.name,
        documents=[
            shapes.DocumentInfo(
                id=d.id,
                name=d.name,
                url=d.url,
                author=d.author,
                added=d.time_added,
                characters=d.characters,
                chunks=d.chunk_count,
                resource=uri(index.name, d.id),
            )
            for d in shown
        ],
        next_cursor=shown[-1].id if len(rows) > args.limit else None,
    )


async def add_document(lore: Lore, who: Principal, args: shapes.AddDocumentArgs) -> shapes.Added:
    if (args.text is None) == (args.url is None):
        raise KnowledgeError("give either `text` (with a `name`) or `url`, not both and not neither")
    actions = lore.services.actions
    index = await actions.indexes.find(who.place, args.index, Action.ADD)
    if args.url is not None:
        outcome = await actions.documents.add_page(who.place, index, args.url, lore.fetcher)
        if outcome.result is None:
            raise KnowledgeError(outcome.error or f"I couldn't add {args.url}")
        result = outcome.result
    else:
        assert args.text is not None
        if not args.name:
            raise KnowledgeError(
                "give the text a `name` (like `deploy-notes.md`): adding that name again replaces it"
            )
        mime = "text/plain" if args.name.lower().endswith(".txt") else "text/markdown"
        source = Source(
            name=args.name,
            data=args.text.encode(),
            kind=SourceKind.TEXT,
            mime_type=mime,
            facts=DocumentFacts(),
        )
        result = await actions.documents.add_one(who.place, index, source)
    return shapes.Added(
        index=index.name,
        document=result.document.name,
        document_id=result.document.id,
        outcome=result.outcome.value,
        chunks=result.chunks,
        resource=uri(index.name, result.document.id),
        notices=list(result.notes),
    )


async def add_url(lore: Lore, who: Principal, args: shapes.AddUrlArgs) -> shapes.Crawl:
    schedule = Schedule.parse(args.schedule)
    if schedule is None:
        raise KnowledgeError(
            f"schedule {args.schedule!r}: say hourly, daily, weekly, every N hours, or never"
        )
    actions = lore.services.actions
    index = await actions.indexes.find(who.place, args.index, Action.ADD)
    attached = await actions.sources.attach_site(who.place, index, [args.url], schedule=schedule)
    return shapes.Crawl(
        index=index.name,
        source_id=attached.source.id,
        job_id=attached.job.id,
        state=str(attached.job.state),
        already_running=attached.already_running,
    )


NOTHING_TO_SEARCH = (
    "There is no index you may search yet: documents added in Slack, with `lore ingest` or with "
    "add_document (to an index you may add to, see list_indexes) make one."
)

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "search_knowledge",
            "Search the team's knowledge",
            "Search the team's documents (Lore's indexes) for passages about something, best first, each "
            "with its document's name, URL, heading path, score and resource URI. Use it to find what the "
            "team wrote down (runbooks, decisions, docs) before answering from memory; use `ask` instead for "
            "one cited answer. Filters match document metadata.",
            shapes.SearchArgs,
            shapes.SearchResult,
            search_knowledge,
        ),
        Tool(
            "ask",
            "Ask the team's knowledge",
            "Ask a question of the team's documents and get one answer that cites its sources as [n], with "
            "the quoted passages and a confidence; or, when the documents do not answer it, an abstention "
            "naming the closest documents. Use it for a direct question; use search_knowledge to see "
            "passages yourself.",
            shapes.AskArgs,
            shapes.AskResult,
            ask,
        ),
        Tool(
            "list_indexes",
            "List the indexes",
            "The indexes (collections of documents) you may search, with their scope (personal, channel, "
            "shared), sizes, and whether you may add to them. Use it to choose `indexes` for the other tools.",
            shapes.NoArgs,
            shapes.IndexList,
            list_indexes,
        ),
        Tool(
            "list_documents",
            "List an index's documents",
            "The documents of one index, oldest first, a page at a time (pass `next_cursor` back as "
            "`cursor`), each with its resource URI (lore://INDEX/DOC) to read its whole text.",
            shapes.ListDocumentsArgs,
            shapes.DocumentPage,
            list_documents,
        ),
        Tool(
            "add_document",
            "Add a document",
            "Add one document to an index you may add to: a text you give (with a name; the same name again "
            "replaces it), or one web page by its URL (read safely: private addresses are refused). Use it "
            "to remember something for the team; use add_url to add a whole site.",
            shapes.AddDocumentArgs,
            shapes.Added,
            add_document,
            writes=True,
        ),
        Tool(
            "add_url",
            "Add a website",
            "Crawl a website (the pages under this URL) into an index you may add to, and keep it fresh on "
            "a schedule. It runs in the background: the result is the crawl job, not the pages.",
            shapes.AddUrlArgs,
            shapes.Crawl,
            add_url,
            writes=True,
        ),
    )
}


def refusal(exc: Exception) -> str:
    """What a tool says when Lore refuses (a sentence, never a traceback)."""
    text = (str(exc).strip().splitlines() or ["no details"])[0][:500]
    prefix = "Not allowed: " if isinstance(exc, NotAllowed) else ""
    return prefix + text[:1].upper() + text[1:]
