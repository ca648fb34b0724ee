"""The extractive answerer: the best sentence as the answer, then the passages it rests on.

Needs no model (the offline default). The second stage (`knowledge.judging.ranking`) has scored
every unit of the best passages; the answer leads with the single best sentence, cited
(`first_line`), then quotes an excerpt of each of the `QUOTED_PASSAGES` best passages (one
more for a question that asks several things; at most `MAX_PER_DOCUMENT` from one document),
each grown from its best unit to the neighbouring units that score best until
`EXCERPT_CHARS` (`LEAD_EXCERPT_CHARS` for the best). The best passages may have been read on
into the ones that follow them in their documents (`Ranker.read_on`, `judging.READ_ON`: a
passage often ends by introducing the list that answers); a passage read into is not quoted
again, and a passage is not read on into one quoted before it. Further documents among the candidates are
cited after the quotes ("see also"), with their best sentence, up to `CITED_DOCUMENTS` in
all: an answer often rests on two pages. Units are whole sentences, list items or code
blocks (`knowledge.text.quotes`), so no quote stops in the middle of one. An abstention says
where Lore looked and names the closest documents as places to look, not as an answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

from knowledge.answering.answer import (
    Answer,
    Citation,
    Fallback,
    ResponseMode,
    closed_fences,
    distinct_names,
)
from knowledge.answering.brief import Brief, Candidate, pick
from knowledge.judging.judge import READ_ON, Verdict
from knowledge.judging.ranking import Ranking, Scored, ScoredUnit
from knowledge.search.notices import HEDGED, Notice
from knowledge.search.retrieval import Hit, Retrieval
from knowledge.text.quotes import Kind, Unit, without_marker
from knowledge.text.syntax import FENCE

QUOTED_PASSAGES = 3  # an answer and two places that add to it fit a Slack message read at a glance
MOST_QUOTED = READ_ON
"""For a question that asks several things (`asks_several`), one passage more: its parts'
answers often lie in different passages. The judge reads on as many (`READ_ON`)."""
_SEVERAL = re.compile(
    r"\?.*\?|;|,\s*and\b|\s\+\s|\band\s+(?:what|how|where|which|why|when|is|are|can|do|does|should)\b"
    r"|\bvs\b|\bversus\b|\bdifferences?\b",
    re.IGNORECASE | re.DOTALL,
)
"""Two questions, clauses joined by "and what/how/…", a comparison."""
MAX_PER_DOCUMENT = 2  # the third quote of one page crowds out another page's answer
EXCERPT_CHARS = 800  # a paragraph and its example: about what a passage of MiniLM's window holds
LEAD_EXCERPT_CHARS = 1200  # the best passage may run on into the next one (`READ_ON`)
INTRODUCED_CHARS = 400
"""A quote ending with a sentence that introduces an example ("For example:") may run this far
past its budget to show it; a longer example leaves the sentence out."""
TAIL_SHARE = 0.5
"""A passage may begin with the end of a code block the passage before begins: its quote
grows back into it only when it scores at least this share of the best unit's score (the
lines that register the converter the answer is about), not when it is the end of another
example (`client = httpx.Client(transport=transport)` before "Connection retries are also
available")."""
CROSSING_SHARE = 0.5
"""A quote grows on past a heading of its passage into the next section only when a unit of
that section scores at least this share of its best unit's score: what follows a heading is
another subject, shown when it answers too, not to fill the quote's room ("Server errors
will be logged at the error log level" after the resource limits a question asked about)."""
CITED_DOCUMENTS = 5  # the quoted and the "see also" documents together: a list one screen long
CLOSEST = 3  # an abstention names the nearest pages so the asker can look; more is noise
LEAD_WORDS = 6
"""The lead is a sentence that states something: shorter ones ("See below.") are passed over,
as are those that end with a colon or ask ("So how exactly does Flask handle uploads?")."""


def quote(
    verdict: Verdict,
    retrieval: Retrieval,
    mode: ResponseMode,
    *,
    fallback: Fallback | None = None,
    notices: Sequence[Notice] = (),
    hedged: bool | None = None,
) -> Answer:
    """The answer quoted from the verdict's ranking when the passages answer, else the
    abstention that says where Lore looked. The answer is `hedged` as the caller says, else
    as the verdict does."""
    if not verdict.ranking.passages or not verdict.answers:
        return abstention(retrieval, mode, verdict, fallback=fallback, notices=notices)
    return extractive_answer(
        verdict.ranking,
        retrieval,
        mode,
        confidence=verdict.confidence,
        fallback=fallback,
        notices=notices,
        relevance_floor=verdict.floor,
        hedged=verdict.hedged if hedged is None else hedged,
    )


def extractive_answer(
    ranking: Ranking,
    retrieval: Retrieval,
    mode: ResponseMode,
    *,
    confidence: float | None = None,
    fallback: Fallback | None = None,
    notices: Sequence[Notice] = (),
    relevance_floor: float = 0.0,
    hedged: bool = False,
) -> Answer:
    """The answer from a ranking whose best passage the caller judged to answer. Other
    passages are quoted only when they clear `relevance_floor` too (a passage found by
    keywords alone has no similarity and is kept): a quote off the subject is noise. A
    `hedged` answer's first notice says Lore is not sure the documents answer exactly that."""
    best, *others = ranking.passages
    relevant = [p for p in others if p.hit.similarity is None or p.hit.similarity >= relevance_floor]
    chosen = _chosen([best, *relevant], MOST_QUOTED if asks_several(ranking.question) else QUOTED_PASSAGES)
    budgets = [LEAD_EXCERPT_CHARS, *[EXCERPT_CHARS] * (len(chosen) - 1)]
    shown: set[str] = set()  # the units quoted so far, from any document: docs repeat paragraphs
    citations: list[Citation] = []
    quoted_passages: list[Scored] = []
    candidates: list[Candidate] = []  # what the brief may show: the units quoted
    for passage, budget in zip(chosen, budgets, strict=True):
        units = excerpt_units(passage, budget, shown)
        quoted = _labelled([u.unit for u in units]) if units else [passage.hit.text.strip()]
        body = _unfenced("\n".join(quoted))
        if body and any(body in _unfenced(c.text) for c in citations):
            continue  # words a quote shows already (docs repeat paragraphs, examples): cited, not quoted twice
        shown.update(quoted)
        quoted_passages.append(passage)
        citations.append(Citation.from_hit(len(citations) + 1, passage.hit, "\n".join(quoted)))
        candidates += [
            Candidate(
                len(citations), i, u.unit.block, _labelled([u.unit])[0], u.score, u.unit.kind != Kind.CODE
            )
            for i, u in enumerate(units)
        ]
    lines = [first_line(quoted_passages), ""] + [_quoted(c) for c in citations]
    also = _see_also(relevant, quoted_passages)
    for passage in also:
        citations.append(Citation.from_hit(len(citations) + 1, passage.hit, lead(passage)))
    if also:
        lines += ["", "See also " + " ".join(f"[{c.n}]" for c in citations[len(quoted_passages) :]) + "."]
    return Answer(
        text=closed_fences("\n".join(lines)),
        citations=citations,
        mode=mode,
        fallback=fallback,
        notices=[*([HEDGED] if hedged else []), *retrieval.notices, *notices],
        searched=[i.name for i in retrieval.searched],
        confidence=confidence,
        glance=Brief(quotes=pick(candidates, _sources(citations)), complete=False),
    )


def _sources(citations: Sequence[Citation]) -> dict[int, str]:
    """Each citation as a quote names it: its document (told apart from namesakes) and the
    heading its passage stands under ("deploy.md › Rollbacks")."""
    names = distinct_names(citations)
    return {
        c.n: name + (f" › {c.section}" if c.section else "") for c, name in zip(citations, names, strict=True)
    }


def lead(passage: Scored) -> str:
    """The passage's best sentence that states something; else its best list item that does
    (a passage may hold only the sentence introducing its list); else its best unit."""
    units = [u for u in passage.own_units if not u.unit.fragment]
    if not units:
        return passage.hit.text.strip().split("\n", 1)[0]
    sentences = [u for u in units if u.unit.kind == Kind.SENTENCE] or units
    return _stated(passage) or max(sentences, key=lambda u: u.score).unit.quoted


def first_line(chosen: Sequence[Scored]) -> str:
    """The answer's first line, cited: the lead of the best passage, unless it holds no
    sentence and no item that states something (it is code: a code block is no first line)
    and a passage quoted after it does."""
    units = [u for u in chosen[0].own_units if not u.unit.fragment]
    if _stated(chosen[0]) is None and not any(u.unit.kind == Kind.SENTENCE for u in units):
        for n, passage in enumerate(chosen[1:], start=2):
            if (stated := _stated(passage)) is not None:
                return f"{stated} [{n}]"
    return f"{lead(chosen[0])} [1]"


def _stated(passage: Scored) -> str | None:
    """The passage's best sentence that states something, else its best list item that does;
    None when it has neither."""
    units = [u for u in passage.own_units if not u.unit.fragment]
    sentences = [u for u in units if u.unit.kind == Kind.SENTENCE]
    items = [u for u in units if u.unit.kind == Kind.ITEM]
    stating = [u for u in sentences if _states(u.unit.text)] or [u for u in items if _states(u.unit.text)]
    if not stating:
        return None
    best = max(stating, key=lambda u: u.score).unit
    # an item's own paragraph: its sub-items, on lines of their own, are for the quote
    return without_marker(best.quoted).split("\n", 1)[0] if best.kind == Kind.ITEM else best.quoted


def _states(sentence: str) -> bool:
    """Whether a sentence can stand as the answer: not a short one ("See below."), nor one that
    introduces what follows it ("If you pass a single value, like this:"), nor a question
    (a page often asks the reader's question before it answers it)."""
    return len(sentence.split()) >= LEAD_WORDS and not sentence.rstrip().endswith((":", "?"))


def excerpt(passage: Scored, budget: int = EXCERPT_CHARS, shown: Collection[str] = ()) -> list[str]:
    """The passage's best unit grown to its best-scoring neighbours, within `budget`
    characters (the best unit alone may exceed it), as the units are shown
    (`excerpt_units`)."""
    units = excerpt_units(passage, budget, shown)
    if not units:
        return [passage.hit.text.strip()]
    return _labelled([u.unit for u in units])


def excerpt_units(
    passage: Scored, budget: int = EXCERPT_CHARS, shown: Collection[str] = ()
) -> list[ScoredUnit]:
    """The units `excerpt` quotes, with their scores ([] for a passage with no unit). A unit of a reST
    directive's body ("SECRET_KEY: …") does not grow into text of no known directive: a
    passage may begin inside the body of one whose name it does not show. Units at either
    end that are in `shown`, or part of a unit there, are left out: passages overlap, so a
    passage quoted beside its neighbour in the document may begin or end with what the
    neighbour's quote holds; they take none of the budget."""
    units = passage.units
    start = passage.best_unit
    if start is None:
        return []
    first, last = 0, len(units) - 1  # what the quote may grow to: not what was shown
    while first < start and _within(units[first].unit, shown):
        first += 1
    while last > start and _within(units[last].unit, shown):
        last -= 1
    low = high = start
    size = len(units[start].unit.shown)
    named = units[start].unit.label
    best_score = units[start].score
    while True:
        options = []
        # back to the unit before, unless it is a fragment, the tail of a block the passage
        # before begins that scores under `TAIL_SHARE` of the best (the end of another
        # example), or past a heading (another section)
        if (
            low > first
            and not units[low - 1].unit.fragment
            and not (units[low - 1].unit.continues and units[low - 1].score < TAIL_SHARE * best_score)
            and units[low - 1].unit.section == units[low].unit.section
        ):
            options.append((units[low - 1].score, low - 1))
        if high < last and _grows_on(passage, high + 1, start):
            options.append((units[high + 1].score, high + 1))
        options = [
            (s, i)
            for s, i in options
            if size + len(units[i].unit.shown) <= budget and (units[i].unit.label or not named)
        ]
        if not options:
            break
        _, taken = max(options)
        size += len(units[taken].unit.shown)
        low, high = min(low, taken), max(high, taken)
    if high < last and _introduces(units[high].unit, units[high + 1].unit):
        # not a promise left hanging: the example it introduces, if it is short, else not it
        if size + len(units[high + 1].unit.shown) <= budget + INTRODUCED_CHARS:
            high += 1
        elif high > start:
            high -= 1
    while high > low and _within(units[low].unit, shown):
        low += 1
    while high > low and _within(units[high].unit, shown):
        high -= 1
    quoted = units[low : high + 1]
    return [replace(quoted[0], unit=_unrepeated(quoted[0].unit, shown)), *quoted[1:]]


def _introduces(unit: Unit, following: Unit) -> bool:
    """Whether `unit` is a sentence introducing the example that follows it ("You can
    configure the timeout behavior for any of these values...", "For example:")."""
    return (
        unit.kind == Kind.SENTENCE
        and following.kind == Kind.CODE
        and unit.text.rstrip().endswith((":", "...", "…"))
        and following.section == unit.section
    )


def _grows_on(passage: Scored, position: int, best: int) -> bool:
    """Whether a quote of `passage` around its `best` unit may grow on into the unit at
    `position`: within its section, or past a heading when a unit of the section it opens
    scores at least `CROSSING_SHARE` of the best unit (by the words it holds when it was
    read on from the next passage: those are not embedded)."""
    units = passage.units
    if not _crosses(units[position - 1].unit, units[position].unit):
        return True
    section = units[position].unit.section
    end = next((i for i in range(position, len(units)) if units[i].unit.section != section), len(units))
    own = len(passage.own_units)
    return any(
        units[i].coverage >= CROSSING_SHARE * units[best].coverage
        if i >= own
        else units[i].score >= CROSSING_SHARE * units[best].score
        for i in range(position, end)
    )


def _crosses(unit: Unit, following: Unit) -> bool:
    """Whether a heading lies between `unit` and the one `following` it (which is where a
    quote shows that heading, `_labelled`)."""
    return bool(following.section) and following.section != unit.section


def _labelled(units: Sequence[Unit]) -> list[str]:
    """The units as quoted, a reST directive's name ("SECRET_KEY: …") before the first
    sentence or item of its body only: not again before each, nor inside its code; and where
    the quote runs on past a heading of the passage, the heading, in bold, before what
    follows it."""
    quoted, run, named = [], "", False
    for i, unit in enumerate(units):
        if i and _crosses(units[i - 1], unit):
            quoted.append(f"**{unit.section}**")
        if unit.label != run:
            run, named = unit.label, False
        if not named and unit.kind != Kind.CODE:  # the first says the name, itself or labelled
            quoted.append(unit.quoted)
            named = True
        else:
            quoted.append(unit.rendered)
    return quoted


def _unrepeated(unit: Unit, shown: Collection[str]) -> Unit:
    """A code unit without its first lines when a quote shown ends with them (passages
    overlap, so the next passage's code block begins with the lines the quote before
    ended with)."""
    if unit.kind != Kind.CODE or not shown:
        return unit
    lines = unit.text.split("\n")
    ends = [other.rstrip("`\n").split("\n") for other in shown]
    repeated = max(
        (n for end in ends for n in range(len(lines) - 1, 0, -1) if end[-n:] == lines[:n]), default=0
    )
    return replace(unit, text="\n".join(lines[repeated:]), display=None) if repeated else unit


def _within(unit: Unit, shown: Collection[str]) -> bool:
    """Whether `unit` was shown, or is part of what was (a code block's tail the passage
    starts with, the end of a sentence); code is looked for without its fences."""
    text = (_code_lines(unit.text) if unit.kind == Kind.CODE else unit.rendered).strip()
    return bool(text) and any(text in other for other in shown)


def _unfenced(text: str) -> str:
    """`text` without its code fence lines (one quote may show a block as ```` ```bash ````,
    another as ```` ``` ````)."""
    return "\n".join(line for line in text.split("\n") if not FENCE.match(line)).strip()


def _code_lines(code: str) -> str:
    """A code unit's lines without the fences it was written between (```` ```bash ````)."""
    lines = code.strip("\n").split("\n")
    if len(lines) > 1 and FENCE.match(lines[0]):
        lines = lines[1:-1] if FENCE.match(lines[-1]) else lines[1:]
    return "\n".join(lines)


def abstention(
    retrieval: Retrieval,
    mode: ResponseMode,
    verdict: Verdict | None = None,
    *,
    fallback: Fallback | None = None,
    notices: Sequence[Notice] = (),
) -> Answer:
    """An honest "not found": where Lore looked, and the closest documents as places to
    look (in `closest`, and named in the text, never quoted as an answer); when what was
    found answers for another project than the question names, a notice says so
    (`Verdict.elsewhere`)."""
    names = [i.name for i in retrieval.searched]
    hits = verdict.ranking.hits if verdict is not None else retrieval.hits
    misplaced = verdict.elsewhere if verdict is not None else None
    closest = [Citation.from_hit(n, h, "") for n, h in enumerate(_distinct(hits)[:CLOSEST], start=1)]
    if not names:
        text = "There is no index enabled here to search. Enable one with “enable the <name> index”."
    else:
        found = "an answer to that" if closest else "anything about that"  # it found something
        text = (
            f"I couldn't find {found} in {_where(names)}. "
            "Add the right document with “add this doc to your memory”, or enable another index."
        )
        if closest:
            named = (
                f"{name} ({c.index_name})" for c, name in zip(closest, distinct_names(closest), strict=True)
            )
            text += "\n\nNot an answer, but you might look at: " + ", ".join(named) + "."
    return Answer(
        text=text,
        citations=[],
        mode=mode,
        abstained=True,
        fallback=fallback,
        notices=[*retrieval.notices, *notices, *([misplaced.notice] if misplaced else [])],
        searched=names,
        confidence=verdict.confidence if verdict is not None else None,
        closest=closest,
    )


def asks_several(question: str) -> bool:
    """Whether the question asks several things ("what goes in the server block and what do we
    change in the app?", "StreamingResponse vs FileResponse?")."""
    return bool(_SEVERAL.search(question))


def _chosen(passages: Sequence[Scored], limit: int) -> list[Scored]:
    per_document: dict[int, int] = {}
    chosen: list[Scored] = []
    read: set[tuple[int, int]] = set()  # passages a chosen one was read on into
    for passage in passages:
        document = passage.hit.document.id
        if per_document.get(document, 0) >= MAX_PER_DOCUMENT or (document, passage.hit.position) in read:
            continue
        per_document[document] = per_document.get(document, 0) + 1
        if any(c.hit.document.id == document and c.hit.position == passage.hit.position + 1 for c in chosen):
            passage = passage.own()  # what it was read on into is quoted already, better ranked
        chosen.append(passage)
        if passage.continued:
            read.add((document, passage.hit.position + 1))
        if len(chosen) == limit:
            break
    return chosen


def _see_also(relevant: Sequence[Scored], chosen: Sequence[Scored]) -> list[Scored]:
    """The best passage of each further document, in ranking order, while fewer than
    `CITED_DOCUMENTS` documents are cited."""
    cited = {p.hit.document.id for p in chosen}
    also = []
    for passage in relevant:
        if len(cited) >= CITED_DOCUMENTS:
            break
        if passage.hit.document.id not in cited:
            cited.add(passage.hit.document.id)
            also.append(passage)
    return also


def _quoted(citation: Citation) -> str:
    body = "\n".join(f"> {line}" if line else ">" for line in citation.text.split("\n"))
    return f"{body} [{citation.n}]"


def _distinct(hits: Sequence[Hit]) -> list[Hit]:
    seen: set[int] = set()
    out = []
    for hit in hits:
        if hit.document.id not in seen:
            seen.add(hit.document.id)
            out.append(hit)
    return out


def _where(names: list[str]) -> str:
    quoted = [f"the {name} index" for name in names]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]
