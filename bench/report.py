"""The benchmark's report: the Markdown table `docs/performance.md` shows (each figure against
its target, each comparison as a ratio from the same run) and the charts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import retrieval
from bench.charts import size_chart

Json = dict[str, Any]


@dataclass(frozen=True)
class Target:
    """A bar from the benchmarks issue: where its figure is in the report, and its limit."""

    name: str
    path: tuple[str | int, ...]
    limit: float
    at_most: bool = True

    def check(self, report: Json) -> tuple[float | None, str]:
        value: Any = report
        try:
            for step in self.path:
                if isinstance(value, dict) and "skipped" in value:  # an optional section said why
                    return None, f"skipped: {value['skipped']}"
                value = value[step]
        except (KeyError, IndexError, TypeError):
            return None, "not measured"
        met = value <= self.limit if self.at_most else value >= self.limit
        return float(value), "met" if met else "short"


LARGEST = ("slack", "sizes", -1)
TARGETS = [
    Target(
        "Ack p99 at 50 concurrent mentions, ms", (*LARGEST, "extractive", "runs", "50", "ack", "p99_ms"), 50
    ),
    Target(
        "First “working” signal p95 at 50 concurrent, ms",
        (*LARGEST, "extractive", "runs", "50", "working", "p95_ms"),
        300,
    ),
    Target(
        "Mention → extractive answer p95, largest size, one at a time, ms",
        (*LARGEST, "extractive", "runs", "1", "answer", "p95_ms"),
        500,
    ),
    Target(
        "Generative overhead p95 (instant model), largest size, one at a time, ms",
        (*LARGEST, "generative", "runs", "1", "answer", "p95_ms"),
        300,
    ),
    Target(
        "Hybrid retrieval p95, largest size, ms",
        ("retrieval", "sizes", -1, "latency", "hybrid", "p95_ms"),
        50,
    ),
    Target(
        "Ingest pipeline ÷ embedder alone", ("ingest", "ratios", "pipeline_vs_embedder"), 0.9, at_most=False
    ),
    Target("SciFact hybrid nDCG@10", ("quality", "scifact", "hybrid", "ndcg@10"), 0.72, at_most=False),
    Target(
        "SciFact hybrid + second stage nDCG@10",
        ("quality", "scifact", "reranked", "ndcg@10"),
        0.75,
        at_most=False,
    ),
    Target("Docs-QA held-out: facts present", ("quality", "docs_qa", "heldout", "facts"), 0.8, at_most=False),
    Target(
        "Docs-QA held-out: abstention on unanswerable",
        ("quality", "docs_qa", "heldout", "abstention"),
        0.9,
        at_most=False,
    ),
    Target(
        "Docs-QA held-out: wrong abstentions", ("quality", "docs_qa", "heldout", "wrong_abstention"), 0.05
    ),
    Target(
        "Docs-QA held-out: cited-source recall@5",
        ("quality", "docs_qa", "heldout", "cited_recall@5"),
        0.95,
        at_most=False,
    ),
    Target("`lore ask` p50, process start included, s", ("quality", "docs_qa", "lore_ask", "p50_s"), 3.0),
    Target("Idle RSS of the bot, MB", ("slack", "sizes", 0, "extractive", "memory", "idle_mb"), 400),
    Target("Peak RSS of `lore ingest`, MB", ("memory", "lore_ingest", "peak_mb"), 600),
    Target("Peak RSS of `lore run` while ingesting, MB", ("memory", "lore_run", "tree_peak_mb"), 600),
    Target("Console overview of 100k questions p95, ms", ("console", "overview", "p95_ms"), 500),
    Target("Coverage gaps of 10k questions (vectors kept), s", ("console", "gaps", "again_s"), 60),
]


def markdown(report: Json) -> str:
    """Every section that ran, as Markdown."""
    parts = [
        f"Measured {report['date']} on {report['machine']}" + (" (quick run)" if report.get("quick") else "")
    ]
    parts.append(_table(["target", "measured", "bar", ""], list(_targets(report))))
    for name, render in SECTIONS.items():
        if name in report:
            parts.append(render(report[name]))
    seconds = report.get("seconds", {})
    parts.append("Run time: " + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()))
    return "\n\n".join(parts)


def _targets(report: Json) -> Iterator[list[str]]:
    for target in TARGETS:
        value, verdict = target.check(report)
        shown = "—" if value is None else f"{value:g}"
        bar = ("≤ " if target.at_most else "≥ ") + f"{target.limit:g}"
        yield [target.name, shown, bar, verdict]


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _p(stats: Json) -> str:
    return f"{stats['p50_ms']:g} / {stats['p95_ms']:g}"


def _slack(section: Json) -> str:
    rows = []
    for size in section["sizes"]:
        for kind in ("extractive", "generative"):
            for concurrency, run in size[kind]["runs"].items():
                rows.append(
                    [
                        f"{size['chunks']:,}",
                        kind,
                        concurrency,
                        f"{run['ack']['p50_ms']:g} / {run['ack']['p99_ms']:g}",
                        _p(run["working"]),
                        _p(run["answer"]),
                        f"{run['peak_mb']:g}",
                    ]
                )
    header = [
        "chunks (3 indexes)",
        "answer",
        "in flight",
        "ack p50 / p99 ms",
        "working p50 / p95 ms",
        "answer p50 / p95 ms",
        "peak RSS MB",
    ]
    memory = [
        f"{size['chunks']:,} chunks: idle {size['extractive']['memory']['idle_mb']:g} MB, "
        f"indexes loaded {size['extractive']['memory']['loaded_mb']:g} MB"
        for size in section["sizes"]
    ]
    return (
        "**Slack path** (`lore run`, signed requests, fake Slack Web API)\n\n"
        + _table(header, rows)
        + ("\n\nMemory of the bot: " + "; ".join(memory) + ".")
    )


def _retrieval(section: Json) -> str:
    rows = []
    for size in section["sizes"]:
        latency = size["latency"]
        rows.append(
            [
                f"{size['chunks']:,}",
                _p(latency["keyword"]),
                _p(latency["vector"]),
                _p(latency["hybrid"]),
                _p(latency["chroma_dense"]),
                f"{size['p95_vs_chroma']['vector']:g}",
                f"{size['build']['lore_chunks_per_s']:,} / {size['build']['chroma_chunks_per_s']:,}",
            ]
        )
    header = [
        "chunks",
        "keyword p50 / p95 ms",
        "dense",
        "hybrid",
        "plain chromadb dense",
        "dense p95 Lore ÷ chromadb",
        "add chunks/s Lore / chromadb",
    ]
    note = section.get("1m")
    return (
        "**Retrieval** (one index; dense includes embedding the question)\n\n"
        + _table(header, rows)
        + (f"\n\n1M chunks: {note}" if note else "")
    )


def _mcp(section: Json) -> str:
    latency, ratios = section["latency"], section["p95_vs_api"]
    rows = [["`POST /v1/indexes/{index}/query`", _p(latency["api_query"]), "1"]]
    for mode, label in (("legacy", "initialize handshake"), ("auto", "2026 revision")):
        rows.append(
            [f"MCP `search_knowledge`, {label}", _p(latency[f"mcp_{mode}"]), f"{ratios[f'mcp_{mode}']:g}"]
        )
    return (
        f"**MCP** (`lore serve`, one index of {section['chunks']:,} chunks, k={section['k']}, "
        f"{section['queries']} questions a lane, the lanes taking turns)\n\n"
        + _table(["search through", "p50 / p95 ms", "p95 ÷ HTTP API"], rows)
    )


def _ingest(section: Json) -> str:
    extraction, pipeline, ratios = section["extraction"], section["pipeline"], section["ratios"]
    rows = [
        [f"extraction + chunking, {fmt}", f"{v['mb_per_s']:g} MB/s"]
        for fmt, v in extraction["by_format"].items()
    ]
    rows += [
        ["extraction + chunking, all", f"{extraction['overall']['mb_per_s']:g} MB/s"],
        ["embedder alone", f"{section['embedder']['chunks_per_s']:g} chunks/s"],
        ["Lore ingest end to end", f"{pipeline['chunks_per_s']:g} chunks/s ({pipeline['mb_per_s']:g} MB/s)"],
        ["plain chromadb add, same embedder", f"{section['chromadb']['chunks_per_s']:g} chunks/s"],
        ["Lore ÷ embedder alone", f"{ratios['pipeline_vs_embedder']:g}"],
        ["Lore ÷ plain chromadb", f"{ratios['lore_vs_chromadb']:g}"],
    ]
    corpus = section["corpus"]
    title = f"**Ingest** (generated corpus: {corpus['documents']} documents, {corpus['mb']:g} MB)"
    return title + "\n\n" + _table(["measure", "value"], rows)


def _extraction(section: Json) -> str:
    if "skipped" in section:
        return f"**Real-world files**: skipped, {section['skipped']}."
    rows = []
    for kind, v in section["by_type"].items():
        speed = "—" if kind == "other" or v["mb_per_s"] is None else f"{v['mb_per_s']:g}"
        rows.append([kind, v["files"], v["accepted"], v["refused"], v["failed"], f"{v['mb']:g}", speed])
    o = section["overall"]
    rows.append(
        ["all", o["files"], o["accepted"], o["refused"], o["failed"], f"{o['mb']:g}", f"{o['mb_per_s']:g}"]
    )
    header = ["type", "files", "accepted", "refused", "failed", "MB", "MB/s"]
    q = section["quality"]
    lines = []
    page = q["readability"]
    if page["recall"]["files"]:
        lines.append(
            f"readability's {page['recall']['files']} test pages: recall of the expected text median "
            f"{page['recall']['median']:g} (p10 {page['recall']['p10']:g}), boilerplate median "
            f"{page['boilerplate']['median']:g}"
        )
    pdf = q["pdf"]
    if pdf["agreement"]["files"]:
        lines.append(
            f"PDF words vs pdfminer.six: agreement median {pdf['agreement']['median']:g} over "
            f"{pdf['agreement']['files']} files, {len(pdf['disagreeing'])} disagreeing (< 0.5), "
            f"{len(pdf['read_only_by_pdfminer'])} read only by pdfminer.six"
        )
    for kind, name in (("docx", "Word"), ("pptx", "PowerPoint")):
        if q[kind]["files"]:
            lines.append(f"{name}: {q[kind]['pooled']:g} of the words of all parts")
    failures = [f for v in section["by_type"].values() for f in v["failures"]]
    lines.append(f"extraction worker peak RSS {section['worker_peak_mb']:g} MB")
    text = (
        f"**Real-world files** ({section['files']} files, {section['mb']:g} MB from public test suites)\n\n"
        + _table(header, rows)
        + "\n\n"
        + "; ".join(lines)
        + "."
    )
    return text + (f"\n\nFailed: {'; '.join(failures[:8])}." if failures else "")


def _memory(section: Json) -> str:
    rows = [
        [
            f"embedder alone, {kind} ({v['texts']} texts of varied length)",
            f"{v['peak_mb']:g}",
            f"{v['texts_per_s']:g} texts/s, {v['cpu_ms_per_text']:g} CPU ms/text",
        ]
        for kind, v in section["embedder"].items()
    ]
    for name, v in section["lore_ingest"].items():
        if isinstance(v, dict):
            rows.append(
                [
                    f"`lore ingest`, {name} files ({v['files']}, {v['mb']:g} MB)",
                    f"{v['tree_peak_mb']:g}",
                    f"{v['docs_per_s']:g} docs/s, exit {v['exit_code']}",
                ]
            )
    run = section["lore_run"]
    rows.append(
        [
            f"`lore run`, {run['files']} files posted in Slack, questions meanwhile",
            f"{run['tree_peak_mb']:g}",
            f"{run['questions_answered']} answers, p50 {run['answer_p50_ms']} ms",
        ]
    )
    return f"**Memory** (peak RSS, bar {section['target_mb']} MB)\n\n" + _table(
        ["process", "peak MB", "speed"], rows
    )


def _crawl(section: Json) -> str:
    first, again = section["first_crawl"], section["recrawl"]
    rows = [
        [
            "first crawl (fetch, extract, embed)",
            first["pages"],
            f"{first['seconds']:g}",
            f"{first['pages_per_s']:g}",
        ],
        ["unchanged re-crawl", again["pages"], f"{again['seconds']:g}", f"{again['pages_per_s']:g}"],
        [
            "crawler alone, first",
            section["crawl_only"]["first"]["pages"],
            f"{section['crawl_only']['first']['seconds']:g}",
            f"{section['crawl_only']['first']['pages_per_s']:g}",
        ],
    ]
    return (
        "**Crawl** (loopback site, politeness delay off)\n\n"
        + _table(["job", "pages", "seconds", "pages/s"], rows)
        + f"\n\nRe-crawl ÷ first crawl: {again['seconds_vs_first']:g} of the time."
    )


def _github(section: Json) -> str:
    first, again, alone = section["first_sync"], section["unchanged_resync"], section["connector_alone"]
    repo = section["repository"]
    rows = [
        ["first sync (list, fetch, extract, embed)", first["items"], f"{first['seconds']:g}", f"{first['items_per_s']:g}", f"{first['requests']} ({first['requests_counted']} counted)"],
        ["unchanged re-sync", again["items"], f"{again['seconds']:g}", f"{again['items_per_s']:g}", f"{again['requests']} ({again['requests_counted']} counted)"],
        ["connector alone (list and read)", alone["items"], f"{alone['seconds']:g}", f"{alone['items_per_s']:g}", "—"],
    ]  # fmt: skip
    return (
        f"**GitHub sync** (fake GitHub on loopback: {repo['files']} doc files, {repo['issues_and_pulls']} issues "
        f"and pull requests, {repo['discussions']} discussions)\n\n"
        + _table(["job", "items", "seconds", "items/s", "requests"], rows)
        + f"\n\nFirst sync ÷ the embedder alone on its {section['embedder']['chunks']} chunks: "
        f"{section['ratios']['sync_vs_embedder']:g} of its speed. Unchanged re-sync: "
        f"{again['seconds_vs_first']:g} of the first sync's time, {again['blobs_fetched']} blobs and "
        f"{again['issue_bodies_fetched']} issue bodies fetched; counted requests (not 304s) "
        f"{again['requests_counted']}."
    )


def _google_drive(section: Json) -> str:
    first, again, drive = section["first_sync"], section["unchanged_resync"], section["drive"]
    rows = [
        ["first sync (list, export or download, extract, embed)", first["files"], f"{first['seconds']:g}", f"{first['files_per_s']:g}", first["requests"]],
        ["unchanged re-sync (the change feed: nothing changed, nothing listed)", again["files"], f"{again['seconds']:g}", "—", again["requests"]],
    ]  # fmt: skip
    kinds = ", ".join(f"{n} {k}" for k, n in drive["kinds"].items())
    return (
        f"**Google Drive sync** (fake Google on loopback: {drive['files']} files in {drive['folders']} folders: "
        f"{kinds})\n\n"
        + _table(["job", "files", "seconds", "files/s", "API requests"], rows)
        + f"\n\nFirst sync: {first['chunks']} chunks, {first['sheets_read']} sheets read as tables, requests "
        + ", ".join(f"{path} {n}" for path, n in first["by_path"].items())
        + f". Unchanged re-sync: {again['seconds_vs_first']:g} of the first sync's time, "
        + ", ".join(f"{path} {n}" for path, n in again["by_path"].items())
        + f" (and {again['token_requests']} token request), {again['exports_and_downloads']} exports or downloads."
    )


def _notion(section: Json) -> str:
    first, again = section["first_sync"], section["unchanged_resync"]
    rows = [
        ["first sync (list, read blocks, extract, embed)", first["pages"], f"{first['seconds']:g}", f"{first['pages_per_s']:g}", first["requests"], f"{first['seconds_at_notion_rate']:g}"],
        ["unchanged re-sync", again["pages"], f"{again['seconds']:g}", f"{again['pages_per_s']:g}", again["requests"], f"{again['seconds_at_notion_rate']:g}"],
    ]  # fmt: skip
    return (
        f"**Notion sync** (fake Notion on loopback: {section['workspace']['pages']} pages, "
        f"{section['workspace']['blocks']} blocks, pacing off)\n\n"
        + _table(["job", "pages", "seconds", "pages/s", "requests", "s at 3 req/s"], rows)
        + f"\n\nUnchanged re-sync: {again['block_children_read']} block lists read, "
        f"{again['seconds_vs_first']:g} of the first sync's time."
    )


def _quality(section: Json) -> str:
    scifact = section["scifact"]
    rows = [
        [name, f"{scifact[name]['ndcg@10']:.3f}", f"{scifact[name]['recall@100']:.3f}"]
        for name in ("keyword", "dense", "hybrid", "reranked")
        if name in scifact
    ]
    answers = section["answers"]
    text = (
        "**Quality** (BEIR SciFact"
        + (", a subset" if scifact.get("subset") else "")
        + "; Lore as BM25-only, dense-only, hybrid, and hybrid reordered by the second stage)\n\n"
        + (
            _table(["retrieval", "nDCG@10", "Recall@100"], rows)
            if rows
            else f"Skipped: {scifact.get('skipped')}."
        )
    )
    text += _docs_qa(section.get("docs_qa", {}))
    return text + (
        f"\n\nAnswers over a generated handbook ({answers['answerable']} answerable, "
        f"{answers['unanswerable']} unanswerable questions, extractive): cited-source recall "
        f"{answers['cited_source_recall']:g}, abstention accuracy {answers['abstention_accuracy']:g}."
    )


def _docs_qa(qa: Json) -> str:
    """The docs-QA table: one row per half of the question set."""
    halves = [(h, qa[h]) for h in ("tune", "heldout") if h in qa]
    if not halves:
        return ""
    if "tune" in qa.get("seen_once", {}):  # HTTPX, Click, Uvicorn, FastAPI: a rule was written for two
        halves.append(("seen-once projects", qa["seen_once"]["tune"]))
    rows = [
        [
            f"{half} ({scores['answerable']} + {scores['unanswerable']})",
            f"{scores['cited_recall@5']:.3f}",
            f"{scores['hit@1']:.3f} / {scores['hit@5']:.3f}",
            f"{scores['facts']:.3f}",
            f"{scores['lead_facts']:.3f}" if "lead_facts" in scores else "—",
            f"{scores['visible_facts']:.3f}" if "visible_facts" in scores else "—",
            _lines_cell(scores),
            f"{scores['abstention']:.3f}" if scores["unanswerable"] else "—",
            f"{scores['wrong_abstention']:.3f}",
            f"{scores.get('flagged', 0.0):.3f} / {scores.get('hedged', 0.0):.3f}",
            f"{scores['latency_ms']['p50']:g} / {scores['latency_ms']['p95']:g}",
        ]
        for half, scores in halves
    ]
    header = [
        "half (answerable + unanswerable)",
        "cited recall@5",
        "Hit@1 / Hit@5",
        "facts",
        "first line",
        "facts at a glance",
        "lines at a glance / whole (p50, p90)",
        "abstention",
    ]
    cli = qa.get("lore_ask")
    return (
        f"\n\n**Docs-QA** (Flask, Starlette and Requests docs, {qa['files']} files; `lore eval qa`; "
        '"seen-once projects": the HTTPX, Click, Uvicorn and FastAPI docs, once unseen)\n\n'
        + _table([*header, "wrong abstentions", "flagged / hedged", "p50 / p95 ms"], rows)
        + (
            f"\n\n`lore ask -i docs --json`, a new process per question ({cli['questions']} questions): "
            f"p50 {cli['p50_s']:g} s, p95 {cli['p95_s']:g} s, start-up included."
            if cli
            else ""
        )
    )


def _lines_cell(scores: Json) -> str:
    lines = scores.get("lines")
    if not lines:
        return "—"
    glance, whole = lines["visible"], lines["whole"]
    return f"{glance['p50']:g}, {glance['p90']:g} / {whole['p50']:g}, {whole['p90']:g}"


def _help(section: Json) -> str:
    """The help-channel simulation and the verified answers' measure."""
    kinds = section["by_kind"]
    rows = [
        [kind, str(kinds[kind]["messages"]), str(kinds[kind]["answered"]), str(kinds[kind]["unsure_offers"])]
        for kind in ("answerable", "unanswerable", "chatter")
    ]
    text = (
        f"**Help channel** ({section['messages']} top-level messages to nobody through `lore run`, over the "
        f"docs corpus): {section['answered']} answered; precision {section['precision']:g} at a glance "
        f"({section['precision_whole']:g} with “Show more”; goal ≥ 0.9); unanswerable or chatter "
        f"answered {section['false_answers']} ({section['false_answer_rate']:g}; goal ≤ 0.05); recall "
        f"{section['recall']:g}; lines shown p50 {section['lines']['p50']}, at most {section['lines']['max']}.\n\n"
        + _table(["messages", "posted", "answered", "told privately Lore was not sure"], rows)
    )
    verified = section.get("verified")
    if verified:
        parts = [
            f"{half}: {verified[half]['reworded_first']}/{verified[half]['verified']} rewordings find their "
            f"verified answer first, {verified[half]['near_matched']} neighbouring questions match "
            f"({verified[half]['near_confident']} closely enough to answer unasked)"
            for half in ("tune", "heldout")
        ]
        text += "\n\nVerified answers: " + "; ".join(parts) + "."
    return text


def _console(section: Json) -> str:
    page, gaps = section["overview"], section["gaps"]
    rows = [
        [
            f"Overview page, {section['questions']:,} questions",
            f"{page['p50_ms']:g} ms",
            f"{page['p95_ms']:g} ms",
        ],
        [
            f"Coverage gaps, {gaps['questions']:,} questions → {gaps['groups']:,} groups, a backlog "
            f"logged before vectors were kept ({gaps['embedded_first']:,} embedded once)",
            f"{gaps['first_s']:g} s",
            "",
        ],
        [
            f"Coverage gaps, every run (vectors kept when asked; {gaps['embedded_again']:,} embedded)",
            f"{gaps['again_s']:g} s",
            "",
        ],
    ]
    return "**Admin console**\n\n" + _table(["", "p50 / time", "p95"], rows)


def _access(section: Json) -> str:
    search, sync = section["search"], section["permission_sync"]
    latency = search["latency"]
    rows = [[lane.replace("_", " "), _p(latency[lane])] for lane in ("unrestricted", "asker", "public_only")]
    ratio = search["p95_ratio"]
    return (
        f"**Document-level access** ({search['chunks']:,} chunks, {search['documents']:,} documents, "
        f"{search['restricted_documents']:,} restricted to small groups; the asker reads "
        f"{search['asker_reads_restricted']:,} of them; hybrid search)\n\n"
        + _table(["who searches", "p50 / p95 ms"], rows)
        + f"\n\np95 ÷ unrestricted: asker {ratio['asker_vs_unrestricted']:g}, public only "
        f"{ratio['public_only_vs_unrestricted']:g}. Permission sync of {sync['pages']:,} pages against the "
        f"fake Confluence ({sync['requests']} requests): {sync['first_seconds']:g} s when every page's "
        f"access changes, {sync['unchanged_seconds']:g} s when none does."
    )


SECTIONS: dict[str, Callable[[Json], str]] = {
    "slack": _slack,
    "retrieval": _retrieval,
    "access": _access,
    "mcp": _mcp,
    "ingest": _ingest,
    "extraction": _extraction,
    "memory": _memory,
    "crawl": _crawl,
    "github": _github,
    "google_drive": _google_drive,
    "notion": _notion,
    "quality": _quality,
    "help": _help,
    "console": _console,
}


def charts(report: Json, folder: Path) -> None:
    """retrieval.png (p95 against size) and slack.png (answer p95 against size)."""
    if "retrieval" in report:
        retrieval.chart(report["retrieval"], folder / "retrieval.png")
    if "slack" in report:
        _slack_chart(report, folder / "slack.png")


def _slack_chart(report: Json, path: Path) -> None:
    sizes = report["slack"]["sizes"]
    series = {
        f"{kind}, {concurrency} in flight": (
            [s[kind]["runs"][concurrency]["answer"]["p95_ms"] for s in sizes],
            "-" if concurrency == "1" else "--",
        )
        for kind in ("extractive", "generative")
        for concurrency in sizes[0][kind]["runs"]
    }
    size_chart(
        path,
        title=f"Slack mention to answer, p95\n{report['date']}, {report['machine']}",
        xlabel="chunks across the channel's 3 enabled indexes (log scale)",
        ylabel="mention → answer posted, p95 ms",
        sizes=[s["chunks"] for s in sizes],
        series=series,
    )
