"""Whether a claim says the opposite of the sentence of a passage it restates.

A model's claim can hold every word of its source and still say the opposite: a "not" added
or dropped ("Rollbacks are not done by switching the load balancer back"), or a word swapped
for its opposite ("disabled" of "enabled", "after" of "before"). The citation check
(`knowledge.answering.citations`) asks `contradicts` of every claim, against the sentences of the
passages it cites (`statements_of`). It is lexical: what it cannot read plainly (two
denials, a word that restricts, a denial by prefix, a converse turned around, two swapped
words) it leaves undecided rather than refuse a faithful paraphrase, and a claim close to no
single sentence is left to the word count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from knowledge.answering.answer import CITATION
from knowledge.text.quotes import Kind, Unit, units
from knowledge.text.words import WORD, content_stems, share, stem

_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|nowhere|neither|nor|cannot|\w+n['’]t|unless|without|except)\b",
    re.IGNORECASE,
)
"""What denies: turns a statement, or a part of it, into its opposite ("unless" too: "sessions
don't persist unless a key is set" says "they persist if it is")."""
_RESTRICTS = re.compile(r"\b(?:only|until)\b", re.IGNORECASE)
"""Words that restrict a statement, which its opposite may say with a denial or without:
"runs only once the response is sent" is "doesn't run until it is sent", and "only requires
anyio" is "requires just anyio"."""
_PREFIXES = ("un", "in", "im", "ir", "il", "non", "dis")
_OPPOSITES = (
    ("enable enabled enables enabling", "disable disabled disables disabling"),
    (
        "allow allowed allows allowing permit permitted permits",
        "forbid forbidden forbids prevent prevented prevents",
    ),
    (
        "accept accepted accepts accepting",
        "reject rejected rejects rejecting refuse refused refuses refusing",
    ),
    ("include included includes including", "exclude excluded excludes excluding"),
    ("required require requires mandatory", "optional"),
    ("synchronous synchronously sync", "asynchronous asynchronously async"),
    ("public", "private"),
    ("true", "false"),
    ("succeed succeeds succeeded success successful", "fail fails failed failure"),
    ("add added adds adding", "remove removed removes removing"),
    ("increase increased increases", "decrease decreased decreases"),
    ("automatic automatically", "manual manually"),
    ("explicit explicitly", "implicit implicitly"),
    ("permanent permanently", "temporary temporarily"),
    ("global globally", "local locally"),
    ("absolute", "relative"),
    ("uppercase", "lowercase"),
)
"""Words and their opposites, each side of a pair in its written forms: a claim that says
"disabled" of a sentence that says "enabled", in its other words, says its opposite. Pairs
one of which is the other behind a prefix ("safe", "unsafe") are `_PREFIXES`' to judge."""
_CONVERSES = (
    ("before earlier", "after later"),
    ("more", "less fewer"),
    ("larger bigger greater longer higher above", "smaller shorter lower below"),
    ("first", "last"),
    ("older", "newer"),
    ("minimum min", "maximum max"),
    ("client", "server"),
)
"""Opposites that also say the same thing with what stands around them swapped ("A runs
before B" is "B runs after A"): a claim swapping one says the opposite only when the words
around it stand on the same sides as in the sentence."""
_CLAUSE = re.compile(r";|,\s*(?:and|but|or|so|while|whereas|which)\b|\s(?:but|whereas)\s", re.IGNORECASE)
"""Where a sentence joins clauses that each say something of their own."""
_PRONOUN = re.compile(r"\W*(?:it|its|this|that|these|those|they|their)\b", re.IGNORECASE)
RESTATES = 0.8
"""Share of a claim's content words one sentence of a passage holds for the claim to restate
that sentence: then the two must agree in whether they deny (`contradicts`)."""


@dataclass(frozen=True)
class Statement:
    """A sentence or list item of a passage, as a claim restating it is compared with it."""

    stems: set[str]
    denials: int | None
    """How many words of denial it holds (`_NEGATION`); None when that is open (`_RESTRICTS`)."""
    before: set[str]
    """For a sentence opening on a pronoun ("It is not safe …"), the words of the sentence
    before, which say what the pronoun stands for; otherwise empty."""
    sequence: tuple[str, ...]
    """Its words, stemmed, in order (words of denial aside), for `_swapped`."""
    clauses: tuple[Statement, ...] = ()
    """Its clauses (`_CLAUSE`) when it has several: a claim restating one is judged by it, as
    a "without" in another clause says nothing of it."""

    @classmethod
    def of(cls, text: str, before: set[str]) -> Statement:
        parts = [part for part in _CLAUSE.split(text) if part.strip()]
        clauses = tuple(cls.of(part, before) for part in parts) if len(parts) > 1 else ()
        affirmed = _affirmed(text)
        return cls(content_stems(affirmed), _denials(text), before, _sequence(affirmed), clauses)

    def restated_by(self, wanted: set[str]) -> bool:
        """Whether a claim of these content words says what this sentence says, but maybe
        for a denial: the sentence holds nearly all of them, or, for a sentence opening on a
        pronoun, the two sentences hold them and the claim holds nearly all of this one's."""
        if share(wanted, self.stems) >= RESTATES:
            return True
        return (
            bool(self.before)
            and min(share(wanted, self.stems | self.before), share(self.stems, wanted)) >= RESTATES
        )


def statements_of(text: str) -> list[Statement]:
    """The sentences and list items of `text` (code aside), as claims are compared with them."""
    return statements_in(units(text))


def statements_in(read: Sequence[Unit]) -> list[Statement]:
    """The sentences and list items of a passage's units (code aside), as claims are compared
    with them; one opening on a pronoun lends the words of the one before it in its block."""
    found: list[Statement] = []
    last: Unit | None = None
    for unit in read:
        if unit.kind == Kind.CODE:
            continue
        follows = last is not None and last.block == unit.block and _PRONOUN.match(unit.text)
        found.append(Statement.of(unit.text, found[-1].stems if follows else set()))
        last = unit
    return found


def contradicts(claim: str, sentences: Iterable[Statement]) -> bool:
    """Whether the claim restates some of the `sentences` (of the passages it cites: holds nearly all of
    their words but for a denial or a word swapped for its opposite,
    `Statement.restated_by`) and disagrees with every one of them plainly: one denies once
    and the other not at all, or both deny alike and the claim swapped one word for its
    opposite (`_swapped`). The model said "not" where the passage did not, dropped the
    passage's "not", or wrote "disabled" for "enabled". Two denials ("make sure not to
    forget …, otherwise the browser will not …") may say either, and so may a word that
    restricts ("only", "until"), one that denies by its prefix ("unsupported" of "does not
    support"), or two swapped words; a claim close to no single sentence is left to the
    word count."""
    wanted, denials, sequence = content_stems(_affirmed(claim)), _denials(claim), _sequence(_affirmed(claim))
    if not wanted:
        return False

    def verdict(statement: Statement) -> bool | None:
        """Whether the claim says the opposite of a statement it restates; None if it does
        not restate it."""
        swaps = _swapped(sequence, wanted, statement)
        said = wanted if not swaps else (wanted - {a for a, _ in swaps}) | {b for _, b in swaps}
        if not statement.restated_by(said):
            return None
        if swaps is None or _prefixed(said, statement.stems) or _prefixed(statement.stems, said):
            return False  # a converse turned around, or a prefix: either may say the same
        if not swaps:
            return {statement.denials, denials} == {0, 1}
        return len(swaps) == 1 and denials is not None and statement.denials == denials

    verdicts = []
    for sentence in sentences:
        by_clause = [v for clause in sentence.clauses if (v := verdict(clause)) is not None]
        verdicts += by_clause or [v for v in (verdict(sentence),) if v is not None]
    return bool(verdicts) and all(verdicts)


def _swapped(sequence: Sequence[str], wanted: set[str], statement: Statement) -> list[tuple[str, str]] | None:
    """The words of a claim (its stems in order, `sequence`; its content words, `wanted`)
    that stand where the statement has their opposite, as (the claim's, the statement's);
    None when a swapped pair is a converse whose neighbours stand reversed ("B runs after A"
    of "A runs before B": it may say the same)."""
    claimed, stated = set(sequence), set(statement.sequence)
    swaps = []
    for word in claimed - stated:
        for opposite in _OPPOSITE.get(word, ()):
            if opposite in stated and opposite not in claimed:
                if word in _CONVERSE and not _same_sides(sequence, word, wanted, statement, opposite):
                    return None
                swaps.append((word, opposite))
    return swaps


def _same_sides(
    sequence: Sequence[str], word: str, wanted: set[str], statement: Statement, opposite: str
) -> bool:
    """Whether more of the content words around `word` in the claim stand on the same side
    of `opposite` in the statement than on the other side."""

    def sides(words: Sequence[str], pivot: str, content: set[str]) -> tuple[set[str], set[str]]:
        at = words.index(pivot)
        return set(words[:at]) & content, set(words[at + 1 :]) & content

    left, right = sides(sequence, word, wanted)
    their_left, their_right = sides(statement.sequence, opposite, statement.stems)
    same = len(left & their_left) + len(right & their_right)
    return same > len(left & their_right) + len(right & their_left)


def _sequence(text: str) -> tuple[str, ...]:
    """The stems of `text`'s words, in order, citations aside."""
    return tuple(stem(w) for w in WORD.findall(CITATION.sub(" ", text).lower()))


def _prefixed(stems: set[str], other: set[str]) -> bool:
    """Whether a word of `stems` is one of `other` behind a prefix that may deny it
    ("unsupport" of "support"; or not: "import" of "port", which only leaves a claim
    undecided)."""
    return any(
        stem.startswith(prefix) and stem[len(prefix) :] in other for stem in stems for prefix in _PREFIXES
    )


def _opposites(pairs: Sequence[tuple[str, str]]) -> dict[str, set[str]]:
    """Each stem of `pairs`, to the stems of the other side of its pair."""
    table: dict[str, set[str]] = {}
    for one, other in pairs:
        ones, others = {stem(w) for w in one.split()}, {stem(w) for w in other.split()}
        for a, b in ((ones, others), (others, ones)):
            for word in a:
                table.setdefault(word, set()).update(b)
    return table


_CONVERSE = _opposites(_CONVERSES)
_OPPOSITE = _opposites(_OPPOSITES) | _CONVERSE


def _denials(text: str) -> int | None:
    """How many words of denial `text` holds, or None when a word that restricts (`_RESTRICTS`)
    leaves open whether it denies."""
    text = CITATION.sub(" ", text)
    return None if _RESTRICTS.search(text) else len(_NEGATION.findall(text))


def _affirmed(text: str) -> str:
    """`text` without its words of denial, so that a statement and its opposite share their
    content words."""
    return _NEGATION.sub(" ", text)
