"""CLI commands over the knowledge engine: ingest, ask, indexes, docs, forget, eval."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.progress import Progress

from bot.app.actions import AddOutcome
from bot.app.conversations import Actor
from bot.app.local import files_under, index_for_cli
from bot.app.services import Services
from bot.cli.common import as_local_user, settings_or_exit
from bot.cli.tables import table
from knowledge import IngestError, KnowledgeError, Outcome, Request, ResponseMode, Source, without_surrogates

if TYPE_CHECKING:
    from knowledge import Fetcher

T = TypeVar("T")
URL = re.compile(r"^https?://", re.I)


async def file_sources(files: list[Path], unread: list[AddOutcome] | None = None) -> AsyncIterator[Source]:
    """Each file's bytes; one that cannot be read is added to `unread` (or raises without it)."""
    for path in files:
        name = without_surrogates(path.name)  # a name in another encoding than the system's
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as exc:
            if unread is None:
                raise
            reason = exc.strerror or str(exc)
            unread.append(AddOutcome(name, error=str(IngestError(name, reason)), reason=reason))
            continue
        yield Source(name=name, data=data, source_key=without_surrogates(str(path.resolve())))


app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""


@app.command()
def ingest(
    targets: list[str] = typer.Argument(..., help="Files, folders (recursively) or http(s) URLs."),
    index: str = typer.Option("personal", "--index", "-i", help="Index to add to (created if new)."),
    site: bool = typer.Option(False, "--site", help="Crawl each URL's whole site, kept fresh."),
) -> None:
    """Add files, folders, web pages or whole sites to an index, with a progress bar."""
    urls = [t for t in targets if URL.match(t)]
    missing: list[Path] = []
    files = list(files_under([Path(t) for t in targets if not URL.match(t)], on_missing=missing.append))
    for path in missing:
        typer.secho(f"lore: no such file or folder: {path}", fg="red", err=True)

    async def work(services: Services, actor: Actor) -> list[AddOutcome]:
        target = await index_for_cli(services, actor, index, create=True)
        if site and urls:
            from bot.cli.jobs import crawl_site

            await crawl_site(services, actor, target, urls)
        with Progress(transient=True) as bar:
            task = bar.add_task(f"Adding to {target.name}", total=len(files) + (0 if site else len(urls)))

            def report(outcome: AddOutcome) -> None:
                bar.advance(task)
                bar.console.print(_result_line(outcome))

            documents = services.actions.documents
            unread: list[AddOutcome] = []
            outcomes = await documents.add(actor.place, target, file_sources(files, unread), report=report)
            for outcome in unread:
                report(outcome)
            outcomes.extend(unread)
            for url in [] if site else urls:
                outcomes.append(await documents.add_page(actor.place, target, url, _fetcher(services)))
                report(outcomes[-1])
            return outcomes

    outcomes = as_local_user(settings_or_exit(), work)
    _summarise(outcomes, quiet=site and not outcomes)
    if missing:
        raise typer.Exit(1)


@app.command()
def ask(
    question: str,
    index: list[str] = typer.Option([], "--index", "-i", help="Index to search (repeatable)."),
    mode: str | None = typer.Option(
        None, help="RAG_ONLY, LLM_ONLY, HYBRID, SMART_FALLBACK, RAG_PRIORITY, LLM_PRIORITY"
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Ask a question over your indexes."""
    if not question.strip():
        raise typer.BadParameter("the question is empty", param_hint="QUESTION")
    chosen_mode = _mode(mode)

    async def work(services: Services, actor: Actor) -> str:
        if index:
            indexes = [await index_for_cli(services, actor, n, create=False) for n in index]
        else:
            indexes = await services.catalog.enabled(actor.conversation, actor.place)
        access = await services.actions.access.for_answer(actor, private=True)  # only they see it
        answer = await services.knowledge.ask(
            Request(indexes, [{"role": "user", "content": question}], mode=chosen_mode, access=access)
        )
        if as_json:
            return json.dumps(answer.as_json(), ensure_ascii=False)
        from bot.chat.render import render_answer

        return render_answer(answer)

    typer.echo(as_local_user(settings_or_exit(), work))


@app.command()
def indexes() -> None:
    """List the indexes you can use, with their sizes."""

    async def work(services: Services, actor: Actor) -> str:
        from bot.chat.render import render_listing

        return render_listing(await services.catalog.listing(actor.place, actor.conversation))

    typer.echo(as_local_user(settings_or_exit(), work))


@app.command()
def docs(index: str = typer.Argument(..., help="Index name.")) -> None:
    """List the documents in an index."""

    async def work(services: Services, actor: Actor) -> str:
        from bot.chat.render import render_documents

        target = await index_for_cli(services, actor, index, create=False)
        documents = await services.actions.documents.listing(actor.place, target, limit=10_000)
        return render_documents(target, documents)

    typer.echo(as_local_user(settings_or_exit(), work))


@app.command()
def forget(index: str, doc: str = typer.Argument(..., help="Document name, URL or id.")) -> None:
    """Remove a document from an index."""

    async def work(services: Services, actor: Actor) -> str:

        target = await index_for_cli(services, actor, index, create=False)
        found = await services.actions.documents.forget(actor.place, target, doc)
        if not found:
            raise KnowledgeError(f"there is no document matching {doc!r} in the {target.name} index")
        return "Forgot " + ", ".join(d.name for d in found)

    typer.echo(as_local_user(settings_or_exit(), work))


eval_app = typer.Typer(help="Measure retrieval quality.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("beir")
def eval_beir(
    folder: Path,
    as_json: bool = typer.Option(False, "--json"),
    split: str = typer.Option("test"),
    max_queries: int = typer.Option(0, help="Evaluate only the first N queries (0: all)."),
    max_documents: int = typer.Option(
        0,
        help="Ingest only the documents those queries judge and the corpus's first others, N in all (0: all).",
    ),
) -> None:
    """nDCG@10 and Recall@100 for keyword, dense and hybrid retrieval on a BEIR folder.
    Runs in throw-away stores of the configured kinds (a schema of its own in DATABASE_URL's
    PostgreSQL, a namespace of its own on CHROMA_HOST's server), leaving your memory untouched."""
    from bot.cli.evaluation import evaluation_stores, run_beir

    with evaluation_stores(settings_or_exit()) as settings:
        scores = asyncio.run(
            run_beir(
                settings,
                folder,
                split=split,
                max_queries=max_queries,
                max_documents=max_documents,
                quiet=as_json,
            )
        )
    if as_json:
        typer.echo(json.dumps(scores))
    else:
        rows = [
            (
                name,
                f"{v['ndcg@10']:.4f}",
                f"{v['recall@100']:.4f}",
                f"{v['p50_ms']:.1f}",
                f"{v['p95_ms']:.1f}",
            )
            for name, v in scores.items()
        ]
        typer.echo(table(["", ">nDCG@10", ">Recall@100", ">p50 ms", ">p95 ms"], rows))


@eval_app.command("qa")
def eval_qa(
    folder: Path,
    questions: Path,
    split: str = typer.Option("tune", help="tune, heldout or all"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Answer quality: cited-source recall, Hit@k, facts present, abstention and latency
    over a question set (JSON lines), asked as `lore ask` asks. Runs in throw-away stores of
    the configured kinds, as `lore eval beir` does."""
    from bot.cli.evaluation import evaluation_stores, run_qa

    with evaluation_stores(settings_or_exit()) as settings:
        try:
            report = asyncio.run(run_qa(settings, folder, questions, split=split, quiet=as_json))
        except (OSError, ValueError) as exc:
            typer.secho(f"lore: {exc}", fg="red", err=True)
            raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        typer.echo(_qa_table(report))


def _mode(mode: str | None) -> ResponseMode | None:
    if mode is None:
        return None
    try:
        return ResponseMode.parse(mode)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _qa_table(report: dict[str, object]) -> str:
    names = [
        "cited_recall@5", "hit@1", "hit@5", "facts", "facts_share", "lead_facts", "visible_facts",
        "visible_facts_share", "abstention", "wrong_abstention", "flagged", "hedged",
    ]  # fmt: skip
    latency, lines = report["latency_ms"], report["lines"]
    assert isinstance(latency, dict) and isinstance(lines, dict)
    rows = [(name, f"{report[name]:.3f}") for name in names]
    for shown in ("visible", "whole"):
        rows.append((f"{shown} lines p50/p90", f"{lines[shown]['p50']:.0f} / {lines[shown]['p90']:.0f}"))
    rows.append(("latency p50/p95", f"{latency['p50']:.0f} / {latency['p95']:.0f} ms"))
    title = f"{report['split']} split, {report['questions']} questions ({report['model']})"
    return title + "\n" + table(["", ">"], rows, header=False)


def _fetcher(services: Services) -> Fetcher:
    from knowledge import Fetcher  # not imported by the commands that fetch nothing

    return Fetcher(services.allow, max_bytes=services.settings.max_file_bytes)


def _result_line(outcome: AddOutcome) -> str:
    result = outcome.result
    if result is None:
        return f"  ✗ {outcome.error}"
    if result.outcome == Outcome.UNCHANGED:
        return f"  = {outcome.name}: already in memory"
    return f"  ✓ {outcome.name}: {result.outcome.value}, {result.chunks} chunks"


def _summarise(outcomes: list[AddOutcome], *, quiet: bool) -> None:
    """One line of totals, then every failure again with its reason; exit 1 if any failed."""
    changed = sum(o.changed for o in outcomes)
    failed = [o for o in outcomes if not o.ok]
    if not quiet:
        typer.echo(
            f"{changed} added or updated, {len(outcomes) - changed - len(failed)} already in memory, "
            f"{len(failed)} failed"
        )
    for outcome in outcomes:
        if outcome.result is not None and outcome.result.notes:
            typer.echo(f"Note on {outcome.result.document.name}: {' '.join(outcome.result.notes)}")
    if failed:
        typer.secho("Not added:", fg="red", err=True)
        for outcome in failed:
            typer.secho(f"  {outcome.name}: {outcome.reason or outcome.error}", err=True)
        raise typer.Exit(1)
