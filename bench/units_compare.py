"""`python -m bench.units_compare`: the line reader's units against the parsers' (issue 37).

Each document of `bench/data/docs-corpus` is read whole by Lore's line reader
(`knowledge.text.quotes.document_units`, on the text ingest keeps: Markdown's MyST rewritten as
reST) and by the parsers (`knowledge.text.parsed.parsed_units`, on the file as written, its
flavour from its name). Units are matched by where their source begins and by their text:

- `same`: same start, same text (whitespace aside), same kind;
- `text differs` / `kind differs`: same start, another text or kind;
- `offset differs`: the same text found at another start;
- `only line reader` / `only parser`: no unit of the other reader starts there or says it;

and, for units matched, whether their section, label and rendering (as a reader sees it)
agree. Each kind of disagreement is shown with three examples. CPU time: the best of a few
runs of each reader over the corpus (the machine may be shared). `--json` prints the figures.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from knowledge.extraction.myst import as_rest
from knowledge.text.flavours import Flavour
from knowledge.text.parsed import parsed_units
from knowledge.text.quotes import Unit, document_units

CORPUS = Path(__file__).parent / "data" / "docs-corpus"
RUNS = 3
EXAMPLES = 3


def flavour_of(path: Path, text: str) -> Flavour:
    """reST by its name; Markdown that holds MyST's directives or roles is MyST."""
    if path.suffix == ".rst":
        return Flavour.RST
    return Flavour.MYST if as_rest(text) != text else Flavour.MARKDOWN


def _norm(text: str) -> str:
    return " ".join(text.split())


def compare(line: list[Unit], parsed: list[Unit]) -> tuple[Counter[str], dict[str, list[tuple[str, str]]]]:
    """How the units of one document agree: counts by verdict, and pairs (line reader's,
    parser's) for each disagreement."""
    counts: Counter[str] = Counter()
    examples: dict[str, list[tuple[str, str]]] = defaultdict(list)
    by_start = {u.start: u for u in parsed}
    by_text: dict[str, list[Unit]] = defaultdict(list)
    for u in parsed:
        by_text[_norm(u.text)].append(u)
    used: set[int] = set()

    def note(
        verdict: str, a: Unit | None, b: Unit | None, shown: Callable[[Unit], str] = lambda u: u.text
    ) -> None:
        counts[verdict] += 1
        examples[verdict].append((_example(a, shown), _example(b, shown)))

    for u in line:
        other = by_start.get(u.start)
        if other is not None and id(other) not in used:
            used.add(id(other))
            if u.kind != other.kind:
                note(f"kind differs ({u.kind.value} / {other.kind.value})", u, other)
            elif _norm(u.text) != _norm(other.text):
                note(f"text differs ({u.kind.value})", u, other)
            else:
                counts["same"] += 1
                if u.section != other.section:
                    note("same unit, section differs", u, other, lambda x: f"[{x.section}] {x.text}")
                if u.label != other.label:
                    note("same unit, label differs", u, other, lambda x: f"[{x.label}] {x.text}")
                if _norm(u.rendered) != _norm(other.rendered):
                    note("same unit, rendering differs", u, other, lambda x: x.rendered)
            continue
        twins = [p for p in by_text.get(_norm(u.text), []) if id(p) not in used]
        if twins:
            used.add(id(twins[0]))
            note("offset differs", u, twins[0], lambda x: f"@{x.start}: {x.text}")
        else:
            note(f"only line reader ({u.kind.value})", u, None)
    for p in parsed:
        if id(p) not in used:
            note(f"only parser ({p.kind.value})", None, p)
    return counts, examples


def _example(unit: Unit | None, shown: Callable[[Unit], str]) -> str:
    if unit is None:
        return "-"
    text = shown(unit).replace("\n", "⏎")
    return text if len(text) <= 110 else text[:107] + "…"


def _timed(read: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        started = time.process_time()
        read()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    options.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = options.parse_args()
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".rst", ".md") and p.parent != CORPUS)
    documents = []
    for path in files:
        raw = path.read_text(encoding="utf-8")
        flavour = flavour_of(path, raw)
        documents.append((path, flavour, raw, raw if flavour == Flavour.RST else as_rest(raw)))
    per_flavour: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, list[tuple[str, str]]] = defaultdict(list)
    units = Counter[str]()
    for path, flavour, raw, kept in documents:
        line, parsed = document_units(kept), parsed_units(raw, flavour)
        units[f"{flavour} line reader"] += len(line)
        units[f"{flavour} parser"] += len(parsed)
        if kept != raw:  # MyST: offsets into another text; compared by text only
            line = [Unit(u.text, u.kind, u.block, u.section, u.label) for u in line]
            parsed = [Unit(u.text, u.kind, u.block, u.section, u.label) for u in parsed]
        counts, found = compare(line, parsed)
        per_flavour[flavour].update(counts)
        per_flavour[flavour]["documents"] += 1
        for verdict, pairs in found.items():
            for a, b in pairs:
                if len(examples[verdict]) < EXAMPLES:
                    examples[verdict].append((f"{path.relative_to(CORPUS)}: {a}", b))
    line_cpu = _timed(lambda: [document_units(kept) for _, _, _, kept in documents])
    parser_cpu = _timed(lambda: [parsed_units(raw, flavour) for _, flavour, raw, _ in documents])
    figures = {
        "documents": len(documents),
        "units": dict(units),
        "per_flavour": {f: dict(c) for f, c in per_flavour.items()},
        "cpu_seconds": {"line reader": round(line_cpu, 3), "parsers": round(parser_cpu, 3)},
        "examples": {v: pairs for v, pairs in sorted(examples.items())},
    }
    if args.json:
        print(json.dumps(figures, indent=2, ensure_ascii=False))
        return
    _print(figures)


def _print(figures: dict[str, object]) -> None:
    print(f"{figures['documents']} documents; units: {figures['units']}")
    per_flavour = figures["per_flavour"]
    assert isinstance(per_flavour, dict)
    for flavour, counts in per_flavour.items():
        line = sum(
            v
            for k, v in counts.items()
            if k == "same" or k.startswith(("kind", "text", "offset", "only line"))
        )
        same = counts.get("same", 0)
        print(
            f"\n{flavour}: {counts.get('documents', 0)} documents, {same} of {line} line-reader units matched ({same / max(line, 1):.1%})"
        )
        for verdict, n in sorted(counts.items(), key=lambda kv: -kv[1]):
            if verdict not in ("same", "documents"):
                print(f"  {n:6d}  {verdict}")
    print(f"\nCPU: {figures['cpu_seconds']}")
    examples = figures["examples"]
    assert isinstance(examples, dict)
    for verdict, pairs in examples.items():
        print(f"\n{verdict}:")
        for a, b in pairs:
            print(f"  line:   {a}\n  parser: {b}")


if __name__ == "__main__":
    main()
