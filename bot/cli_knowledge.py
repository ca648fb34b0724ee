"""CLI commands over the knowledge engine: ingest, ask, indexes, docs, forget, eval."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import typer
from rich.progress import Progress

from bot.conversations import Actor
from bot.local import index_for_cli, local_dm
from bot.services import Services, build_services
from bot.settings import Settings
from knowledge.answer import ResponseMode
from knowledge.engine import Request
from knowledge.errors import IngestError, KnowledgeError
from knowledge.fetch import AllowList, Fetcher, FetchError
from knowledge.ingest import IngestResult, Outcome, Source
from knowledge.metadata import DocumentFacts
from storage.models import SourceKind

T = TypeVar("T")
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".lore"}
URL = re.compile(r"^https?://", re.I)


def run_with_services(settings: Settings, work: Callable[[Services, Actor], Awaitable[T]]) -> T:
    """Build services, act as the local user, always close; knowledge errors end politely."""

    async def main() -> T:
        services = build_services(settings)
        try:
            actor = await local_dm(services)
            await services.ingestor.repair(
                {i.id: i for i in services.indexes.list_for_tenant(actor.place.tenant_id)}
            )
            return await work(services, actor)
        finally:
            await services.aclose()

    try:
        return asyncio.run(main())
    except KnowledgeError as exc:
        typer.secho(f"lore: {exc}", fg="red", err=True)
        raise typer.Exit(1) from None


def files_under(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if (
                    child.is_file()
                    and not (set(child.relative_to(path).parts) & SKIPPED_DIRS)
                    and not child.name.startswith(".")
                ):
                    yield child
        elif path.is_file():
            yield path
        else:
            typer.secho(f"lore: no such file or folder: {path}", fg="red", err=True)


async def file_sources(files: list[Path]) -> AsyncIterator[Source]:
    for path in files:
        data = await asyncio.to_thread(path.read_bytes)
        yield Source(name=path.name, data=data, source_key=str(path.resolve()))


async def page_sources(
    services: Services, urls: list[str], unfetched: list[IngestError], say: Callable[[str], None]
) -> AsyncIterator[Source]:
    """Single web pages, fetched safely; one that cannot be fetched is said and skipped."""
    settings = services.settings
    fetcher = Fetcher(AllowList.parse(settings.lore_crawl_allow), max_bytes=settings.max_file_bytes)
    for url in urls:
        try:
            page = await fetcher.get(url)
        except FetchError as exc:
            unfetched.append(IngestError(url, str(exc)))
            say(f"  ✗ {unfetched[-1]}")
            continue
        facts = DocumentFacts(url=page.url)
        yield Source(
            name=page.url, data=page.body, kind=SourceKind.URL, mime_type=page.mime_type, facts=facts
        )


async def _chain(*streams: AsyncIterator[Source]) -> AsyncIterator[Source]:
    for stream in streams:
        async for source in stream:
            yield source


def register(app: typer.Typer, settings_or_exit: Callable[[], Settings]) -> None:
    @app.command()
    def ingest(
        targets: list[str] = typer.Argument(..., help="Files, folders (recursively) or http(s) URLs."),
        index: str = typer.Option("personal", "--index", "-i", help="Index to add to (created if new)."),
        site: bool = typer.Option(False, "--site", help="Crawl each URL's whole site, kept fresh."),
    ) -> None:
        """Add files, folders, web pages or whole sites to an index, with a progress bar."""
        urls = [t for t in targets if URL.match(t)]
        files = list(files_under([Path(t) for t in targets if not URL.match(t)]))

        async def work(services: Services, actor: Actor) -> list[IngestResult | IngestError]:
            target = await index_for_cli(services, actor, index, create=True)
            if site and urls:
                from bot.cli_jobs import crawl_site

                await crawl_site(services, actor, target, urls)
            with Progress(transient=True) as bar:
                task = bar.add_task(f"Adding to {target.name}", total=len(files) + (0 if site else len(urls)))

                def report(source: Source, result: IngestResult | IngestError) -> None:
                    bar.advance(task)
                    bar.console.print(_result_line(source, result))

                unfetched: list[IngestError] = []
                pages = page_sources(services, [] if site else urls, unfetched, bar.console.print)
                results = await services.ingestor.add_many(target, _chain(file_sources(files), pages), report)
                return [*results, *unfetched]

        results = run_with_services(settings_or_exit(), work)
        added = sum(isinstance(r, IngestResult) and r.outcome != Outcome.UNCHANGED for r in results)
        failed = sum(isinstance(r, IngestError) for r in results)
        if results or not site:
            typer.echo(
                f"{added} added or updated, {len(results) - added - failed} already in memory, {failed} failed"
            )
        if failed and not added:
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
        chosen_mode = _mode(mode)

        async def work(services: Services, actor: Actor) -> str:
            if index:
                indexes = [await index_for_cli(services, actor, n, create=False) for n in index]
            else:
                indexes = await services.catalog.enabled(actor.conversation, actor.place)
            answer = await services.knowledge.ask(
                Request(indexes, [{"role": "user", "content": question}], mode=chosen_mode)
            )
            if as_json:
                return json.dumps(answer.as_json(), ensure_ascii=False)
            from bot.render_text import render_answer

            return render_answer(answer)

        typer.echo(run_with_services(settings_or_exit(), work))

    @app.command()
    def indexes() -> None:
        """List the indexes you can use, with their sizes."""

        async def work(services: Services, actor: Actor) -> str:
            from bot.render_text import render_listing

            return render_listing(await services.catalog.listing(actor.place, actor.conversation))

        typer.echo(run_with_services(settings_or_exit(), work))

    @app.command()
    def docs(index: str = typer.Argument(..., help="Index name.")) -> None:
        """List the documents in an index."""

        async def work(services: Services, actor: Actor) -> str:
            from bot.render_text import render_documents

            target = await index_for_cli(services, actor, index, create=False)
            documents = await asyncio.to_thread(services.documents.list_ready, target.id, limit=10_000)
            return render_documents(target, documents)

        typer.echo(run_with_services(settings_or_exit(), work))

    @app.command()
    def forget(index: str, doc: str = typer.Argument(..., help="Document name, URL or id.")) -> None:
        """Remove a document from an index."""

        async def work(services: Services, actor: Actor) -> str:
            from knowledge.documents import find_documents

            target = await index_for_cli(services, actor, index, create=False)
            found = await find_documents(services.documents, target, doc)
            if not found:
                raise KnowledgeError(f"there is no document matching {doc!r} in the {target.name} index")
            await services.ingestor.remove(target, [d.id for d in found])
            return "Forgot " + ", ".join(d.name for d in found)

        typer.echo(run_with_services(settings_or_exit(), work))

    eval_app = typer.Typer(help="Measure retrieval quality.", no_args_is_help=True)
    app.add_typer(eval_app, name="eval")

    @eval_app.command("beir")
    def eval_beir(
        folder: Path,
        as_json: bool = typer.Option(False, "--json"),
        split: str = typer.Option("test"),
        max_queries: int = typer.Option(0, help="Evaluate only the first N queries (0: all)."),
    ) -> None:
        """nDCG@10 and Recall@100 for keyword, dense and hybrid retrieval on a BEIR folder.
        Runs in a temporary store, leaving your memory untouched."""
        from bot.evaluation import run_beir

        with tempfile.TemporaryDirectory(prefix="lore-eval-") as home:
            settings = settings_or_exit().model_copy(
                update={"lore_home": Path(home), "database_url": None, "chroma_host": None}
            )
            scores = asyncio.run(
                run_beir(settings, folder, split=split, max_queries=max_queries, quiet=as_json)
            )
        if as_json:
            typer.echo(json.dumps(scores))
        else:
            typer.echo(f"{'':10}{'nDCG@10':>10}{'Recall@100':>12}{'p50 ms':>10}{'p95 ms':>10}")
            for name, v in scores.items():
                typer.echo(
                    f"{name:10}{v['ndcg@10']:>10.4f}{v['recall@100']:>12.4f}{v['p50_ms']:>10.1f}{v['p95_ms']:>10.1f}"
                )

    @eval_app.command("qa")
    def eval_qa(
        folder: Path,
        questions: Path,
        split: str = typer.Option("tune", help="tune, heldout or all"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Answer quality: cited-source recall, Hit@k, facts present, abstention and latency
        over a question set (JSON lines), asked as `lore ask` asks. Runs in a temporary store."""
        from bot.evaluation import run_qa

        with tempfile.TemporaryDirectory(prefix="lore-eval-") as home:
            settings = settings_or_exit().model_copy(
                update={"lore_home": Path(home), "database_url": None, "chroma_host": None}
            )
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
    names = ["cited_recall@5", "hit@1", "hit@5", "facts", "facts_share", "abstention", "wrong_abstention"]
    latency = report["latency_ms"]
    assert isinstance(latency, dict)
    lines = [f"{report['split']} split, {report['questions']} questions ({report['model']})"]
    lines += [f"{name:18}{report[name]:>8.3f}" for name in names]
    lines.append(f"{'latency p50/p95':18}{latency['p50']:>8.0f} / {latency['p95']:.0f} ms")
    return "\n".join(lines)


def _result_line(source: Source, result: IngestResult | IngestError) -> str:
    if isinstance(result, IngestError):
        return f"  ✗ {result}"
    if result.outcome == Outcome.UNCHANGED:
        return f"  = {source.name}: already in memory"
    return f"  ✓ {source.name}: {result.outcome.value}, {result.chunks} chunks"
