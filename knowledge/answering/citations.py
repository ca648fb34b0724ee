"""Checking a generated answer against the passages it was given.

A model's answer reaches the user as an answer from the documents only if every claim in it
carries a citation `[n]` of a passage it was shown, and the cited passages support the
claim: most of the claim's content words are in them, or the claim rests on identifiers and
numbers (`MAX_CONTENT_LENGTH`, `4093`, `--port`) that all appear in them; and either way, the
figures, units, options, arguments and exact names it states are in them or in the question
(`founded`: "about 15 minutes" or "about two hours" is not what a passage saying "about two
minutes" supports, however many of its words it shares); nor may a claim say the opposite of
the sentence it restates ("The debugger is safe to use in production" is not what "It is not
safe to use on a production machine" supports, though it holds all its words, `knowledge.answering.opposites`).
Short connecting sentences ("Here is how:") need no citation; a code block needs most of its
identifiers, and every keyword argument it passes (`retries=3`), to appear in the passages.
Sentences the prompt allowed to come from general knowledge must say so with `GENERAL_MARK`. Anything else is a problem, and the caller falls
back to quoting the documents (`knowledge.answering.generation`).

Small models often answer well and cite nothing. Before the check, `attribute` gives each
claim left uncited the passage that supports it best, by the same rule the check applies to
a cited claim; a claim no passage supports stays uncited, and the check refuses it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from knowledge.answering.answer import CITATION, closed_fences
from knowledge.answering.opposites import Statement, contradicts, statements_in
from knowledge.indexing.units import recorded
from knowledge.search.retrieval import Hit
from knowledge.text.quotes import Kind, Unit, units, without_marker
from knowledge.text.words import content_stems, content_words, share, stems_of

_LEADING_CITATIONS = re.compile(r"(?:\[\d{1,3}\]\s*)+(?!_)")
GENERAL_MARK = "(general knowledge)"
SUPPORT = 0.5
"""Share of a claim's content words its cited passages must hold."""
MIN_CLAIM_WORDS = 4
"""Sentences with fewer content words connect; they state nothing to cite."""
DONT_KNOW = re.compile(r"^\W*(?:i\s+don['’]?t\s+know|i\s+do\s+not\s+know)\b", re.IGNORECASE)
_IDENTIFIER = re.compile(r"`[^`]+`|\b[\w.-]*(?:\d|_|[a-z][A-Z]|\(\))[\w.()-]*|--?[a-z][\w-]+")
_FACT = re.compile(r"\b(?=\w*(?:\d|_|[a-z][A-Z]))\w+|(?<=--)(?<![\w-]--)[A-Za-z]\w*(?:-\w+)*")
"""A word that counts or names something exactly: a digit, an underscore or a capital inside it
(`4093`, `MAX_COOKIE_SIZE`, `OSError`, `PyJWT`), or a command-line option's name (`--reload`:
a model that makes one up keeps the rest of the command's words)."""
_ACRONYM = re.compile(r"\b(?!(?:OK|AM|PM)\b)([A-Z]{2,})s?\b")
"""An acronym (`JWT`, `CORS`; not "OK" or a time's "AM"): what a claim is about more than a
fact it states."""
_SPELLED = {str(n): word for n, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
))}  # fmt: skip
"""A small number a passage may spell out where a model writes its digits."""
_UNITS = tuple(
    frozenset(forms)
    for forms in (
        ("bytes", "byte", "b"),
        ("kilobytes", "kilobyte", "kb", "kib"),
        ("megabytes", "megabyte", "mb", "mib", "m"),
        ("gigabytes", "gigabyte", "gb", "gib"),
        ("milliseconds", "millisecond", "ms", "msec", "msecs"),
        ("seconds", "second", "s", "sec", "secs"),
        ("minutes", "minute", "m", "min", "mins"),
        ("hours", "hour", "h", "hr", "hrs"),
        ("days", "day"),
        ("weeks", "week"),
    )
)
"""The ways of writing each unit a quantity is counted in."""
_QUANTITY = re.compile(
    r"\b(?:\d[\d.,]*[\s-]?|(?:"
    + "|".join(_SPELLED.values())
    + r")[\s-])("
    + "|".join(sorted((f for f in set().union(*_UNITS) if len(f) > 1), key=len, reverse=True))
    + r")\b|(?<![\w.,])\d{1,3}(?:\.\d+)?([smh])\b",
    re.IGNORECASE,
)
"""A number and the unit it counts ("30 seconds", "two min", "5s", "2 MB"): the unit is a
fact too. A lone letter counts only right after a short number ("5s", "1.5h"; not "the
1990s"), and a spelled-out number only apart from its unit ("two minutes"; not "ones")."""
_SETTING = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*=(?!=)")
"""A name given a value in code: a keyword argument (`retries=3`) or a variable."""
_DEFINITION = re.compile(r"\s*(?:async\s+def|def|class|function)\b")
"""A line defining a function or class, whose parameters' defaults name nothing of a source's."""
_SETTING_WRITTEN = re.compile(r"(?<![\w.])([A-Za-z_]\w*)=(?=[^\s=])")
"""A name given a value in prose, written as code writes it (`retries=3`)."""


@dataclass(frozen=True)
class _Source:
    """A passage as claims are checked against it, read once for every claim."""

    text: str
    """Its heading and text."""
    stems: set[str]
    words: set[str]
    """Its words, lowercased, as `founded` compares them."""
    statements: list[Statement]

    @classmethod
    def of(cls, hit: Hit) -> _Source:
        text = f"{hit.heading} {hit.text}"
        return cls(text, stems_of(text), _words(text), statements_in(recorded(hit.units, hit.text)))


@dataclass(frozen=True)
class _Reading:
    """The passages a reply is checked against, read once for all its claims: each passage,
    the question's words (`given`), and every word the model was shown (`shown`: the
    passages' and the question's)."""

    sources: list[_Source]
    given: set[str]
    shown: set[str]

    @classmethod
    def of(cls, passages: Sequence[Hit], asked: str) -> _Reading:
        sources, given = [_Source.of(h) for h in passages], _words(asked)
        return cls(sources, given, given.union(*(source.words for source in sources)))

    def supports(self, claim: str, cited: Sequence[_Source], wanted: set[str]) -> bool:
        """Whether the `cited` passages hold the claim (`holds`) and the claim does not deny
        what they say or say what they deny (`_contradicts`)."""
        return self.holds(claim, cited, wanted) and not _contradicts(claim, cited)

    def holds(self, claim: str, cited: Sequence[_Source], wanted: set[str]) -> bool:
        """Whether the `cited` passages hold most of the claim's words (`wanted`), or all its
        identifiers, and every name and figure it states (`founded`)."""
        if not self._founded(claim, cited):
            return False
        if share(wanted, set().union(*(s.stems for s in cited))) >= SUPPORT:
            return True
        source = _normal(" ".join(s.text for s in cited))
        names = _identifiers(claim)
        return bool(names) and all(_normal(n) in source for n in names)

    def restates(self, claim: str, cited: Sequence[_Source], wanted: set[str]) -> bool:
        """Whether a sentence too short to be a claim says only what its `cited` passages
        say: it has content words (`wanted`), and they are all there, as are its names and
        figures."""
        held = set().union(*(s.stems for s in cited))
        return bool(wanted) and wanted <= held and self._founded(claim, cited)

    def _founded(self, claim: str, cited: Sequence[_Source]) -> bool:
        return founded(claim, self.given.union(*(s.words for s in cited)), self.shown)


@dataclass(frozen=True)
class Check:
    problems: list[str]
    """One line per unsupported or uncited claim; empty when the answer holds."""

    @property
    def ok(self) -> bool:
        return not self.problems


def says_it_does_not_know(text: str) -> bool:
    """Whether the model answered that the sources do not say (as the prompt asks it to)."""
    return bool(DONT_KNOW.match(text.strip()))


def check_answer(
    text: str, passages: Sequence[Hit], *, general_allowed: bool = False, asked: str = ""
) -> Check:
    """Every claim of `text` cited with a valid number and supported by what it cites; the
    names and figures the question `asked` gives need no source. The answer must also rest
    on its sources somewhere: a reply of nothing but sentences too short to count as claims
    ("Yes.", "Yes, it does [1].") states nothing a source was seen to support, unless a short
    sentence's every content word is in what it cites ("About two minutes [1]."), or it says
    it is general knowledge where that is allowed."""
    problems, verified = [], 0
    found = claims(text)
    reading = _Reading.of(passages, asked)
    for unit, cited in zip(found, _citations(found), strict=True):
        claim = CITATION.sub("", unit.text).strip()
        if unit.kind == Kind.CODE:
            if not _identifiers_in(claim, passages) or not _arguments(claim) <= reading.shown:
                problems.append(f"a code block the sources do not hold: {short(claim)}")
            continue
        within = [reading.sources[n - 1] for n in cited if 1 <= n <= len(passages)]
        if not _states(unit, claim, general_allowed):
            if cited and len(within) == len(cited) and reading.restates(claim, within, content_stems(claim)):
                verified += 1
            continue
        if not cited:
            problems.append(f"no citation: {short(claim)}")
        elif len(within) < len(cited):
            invalid = next(n for n in cited if not 1 <= n <= len(passages))
            problems.append(f"cites [{invalid}] of {len(passages)} sources: {short(claim)}")
        elif _contradicts(claim, within):
            problems.append(f"says the opposite of the cited source: {short(claim)}")
        elif not reading.holds(claim, within, content_stems(claim)):
            problems.append(f"not in the cited source: {short(claim)}")
        else:
            verified += 1
    if not problems and not verified and not (general_allowed and GENERAL_MARK in text.lower()):
        problems.append(f"nothing in it rests on a cited source: {short(text)}")
    return Check(problems)


def attribute(text: str, passages: Sequence[Hit], *, general_allowed: bool = False, asked: str = "") -> str:
    """`text` with ` [n]` after each claim that has no citation of its own or of its
    paragraph, n the passage that supports it (`supported`) holding the largest share of its
    words, the best-ranked on a tie. Claims no passage supports, code, connecting sentences
    and marked general knowledge are left as they are."""
    found = claims(text)
    reading = _Reading.of(passages, asked)
    cursor, insertions = 0, []
    for unit, cited in zip(found, _citations(found), strict=True):
        end = _end_in(text, unit.text, cursor)
        if end is None:
            continue
        cursor = end
        claim = CITATION.sub("", unit.text).strip()
        if cited or unit.kind == Kind.CODE or not _states(unit, claim, general_allowed):
            continue
        wanted = content_stems(claim)
        shares = [share(wanted, source.stems) for source in reading.sources]
        backing = [
            n
            for n, source in enumerate(reading.sources, start=1)
            if reading.supports(claim, [source], wanted)
        ]
        if backing:
            insertions.append((end, max(backing, key=lambda n: (shares[n - 1], -n))))
    for end, n in reversed(insertions):
        text = f"{text[:end]} [{n}]{text[end:]}"
    return text


def cited_claims(text: str, count: int, *, general_allowed: bool = False) -> list[tuple[str, list[int]]]:
    """The claims of `text` that cite sources, each without its citations and with the
    numbers it cites (its own, or its paragraph's), those from 1 to `count` only: what a
    judge of the answer reads (`knowledge.answering.verification`). Code, connecting sentences and
    marked general knowledge are left out."""
    found = claims(text)
    out = []
    for unit, cited in zip(found, _citations(found), strict=True):
        claim = CITATION.sub("", unit.text).strip()
        valid = sorted({n for n in cited if 1 <= n <= count})
        if unit.kind != Kind.CODE and valid and _states(unit, claim, general_allowed):
            out.append((claim, valid))
    return out


def claims(text: str) -> list[Unit]:
    """The units of a model's answer, a citation written after a sentence's full stop
    ("… two minutes. [1] Then …") kept with that sentence, not the next."""
    found: list[Unit] = []
    for unit in units(closed_fences(text)):  # "``` [1]" would leave the block open
        leading = _LEADING_CITATIONS.match(unit.text)
        if leading and found and found[-1].block == unit.block and unit.kind == Kind.SENTENCE:
            found[-1] = replace(found[-1], text=f"{found[-1].text} {leading.group(0).strip()}")
            unit = replace(unit, text=unit.text[leading.end() :])
        if unit.text.strip():
            found.append(unit)
    return found


def _states(unit: Unit, claim: str, general_allowed: bool) -> bool:
    """Whether a sentence or item states something to cite: enough content words or an
    identifier, and not general knowledge marked as such where the prompt allowed it."""
    if len(content_words(claim)) < MIN_CLAIM_WORDS and not _identifiers(claim):
        return False
    return not (general_allowed and GENERAL_MARK in unit.text.lower())


def _end_in(text: str, unit_text: str, start: int) -> int | None:
    """Where `unit_text` (whitespace folded, as `units` gives it) ends in `text`, searching
    from `start`; a sentence's closing mark stays before the citation added after it."""
    words = unit_text.split()
    if not words:
        return None
    found = re.compile(r"\s+".join(re.escape(w) for w in words)).search(text, start)
    return found.end() if found else None


def _citations(found: Sequence[Unit]) -> list[list[int]]:
    """Each unit's citations: its own, or, for a sentence without any, those of the next
    sentence of its paragraph that has some (models often cite once, at the end of a
    paragraph; the sentence must then be supported by that source too)."""
    cited: list[list[int]] = [[] for _ in found]
    lent: list[int] = []
    for i in range(len(found) - 1, -1, -1):
        own = [int(n) for n in CITATION.findall(found[i].text)]
        following = found[i + 1] if i + 1 < len(found) else None
        chained = (
            following is not None and following.block == found[i].block and following.kind == Kind.SENTENCE
        )
        cited[i] = lent = own or (lent if chained else [])
    return cited


def supported(claim: str, cited: Sequence[Hit], asked: str = "") -> bool:
    """Whether the cited passages hold most of the claim's words, or all its identifiers,
    and the names and figures it states (`founded`) that the question `asked` does not give."""
    reading = _Reading.of(cited, asked)
    return reading.supports(claim, reading.sources, content_stems(claim))


def founded(claim: str, cited: set[str], shown: set[str]) -> bool:
    """Whether every figure, exact name and option the claim states (`_FACT`, a list's numbers
    aside) is in the words it may rest on, `cited` (lowercased; a small number may be spelled
    out there: "2 minutes", "two minutes"), and so is the unit of every quantity (`_QUANTITY`,
    in any of its forms: "2 min"), and every acronym (`_ACRONYM`) in the words of the
    passages `shown` to the model. Both hold the question's words: what the asker names needs
    no source."""
    text = without_marker(claim)
    return (
        all(
            word in cited or _SPELLED.get(word) in cited
            for fact in _words(text, _FACT)
            for word in fact.split("-")  # an option's words: `--no-debugger`
        )
        and _settings(text) <= cited
        and all(
            any(forms & cited for forms in _UNITS if unit.lower() in forms)
            for unit in (word or letter for word, letter in _QUANTITY.findall(CITATION.sub(" ", text)))
        )
        and _words(text, _ACRONYM) <= shown
    )


def _words(text: str, pattern: re.Pattern[str] = re.compile(r"\w+")) -> set[str]:
    """The words of `text` (those `pattern` finds), lowercased, citations aside."""
    return {w.lower() for w in pattern.findall(CITATION.sub(" ", text))}


def _contradicts(claim: str, cited: Sequence[_Source]) -> bool:
    """Whether the claim says the opposite of the sentences it restates in the `cited`
    passages (`knowledge.answering.opposites`)."""
    return contradicts(claim, (statement for source in cited for statement in source.statements))


def _identifiers(text: str) -> list[str]:
    return [m.group(0).strip("`") for m in _IDENTIFIER.finditer(text) if m.group(0).strip("`")]


def _arguments(code: str) -> set[str]:
    """The names of the keyword arguments in `code` (`requests.get(url, retries=3)`:
    "retries"), lowercased: names given a value inside a call's parentheses. A model that
    makes one up keeps the rest of a real call. The defaults of a function the model defines
    (`def fetch(url, tries=3):`) are its own names."""
    calls = "\n".join(line for line in code.splitlines() if not _DEFINITION.match(line))
    depths = list(itertools.accumulate((char == "(") - (char == ")") for char in calls))
    return {m.group(1).lower() for m in _SETTING.finditer(calls) if depths[m.start()] > 0}


def _settings(text: str) -> set[str]:
    """The names prose gives a value as code does (`retries=3`, `verify=False`), lowercased."""
    return {m.group(1).lower() for m in _SETTING_WRITTEN.finditer(text)}


def _identifiers_in(code: str, passages: Sequence[Hit]) -> bool:
    source = _normal(" ".join(h.text for h in passages))
    names = [n for n in re.findall(r"[A-Za-z_][\w.]{2,}", code)]
    if not names:
        return True
    return sum(_normal(n) in source for n in names) / len(names) >= SUPPORT


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def short(text: str, limit: int = 80) -> str:
    """`text` on one line, cut with an ellipsis past `limit` characters: a claim as a
    problem names it."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
