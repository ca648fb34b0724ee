"""Keyword search on PostgreSQL: bounded by the question, ranked by term rarity (BM25).

PostgreSQL's own ranking (`ts_rank_cd`) weighs every word of a question alike and must see
every match, so a common word made each search read and rank most of the table, and ranked
worse than SQLite's bm25. Here, as on SQLite (`storage.keyword`):

1. The question's words become the lexemes the index holds (English stemming).
2. How many chunks hold each lexeme (its document frequency) comes from PostgreSQL's
   statistics of the `tsv` column (`pg_stats.most_common_elems`, refreshed by ANALYZE) for
   common lexemes, and from a count of the GIN index capped below the rarest of those for
   the others: never a scan of the table. The number of chunks is the planner's estimate.
3. The rarest lexemes are kept while their postings stay within the budget (`within_budget`).
   When even the rarest is beyond it (every word common, in a large index), the chunks
   holding the most of the question's lexemes are read instead, a bounded number of them
   (`_conjunctive`), each checked as it is read to belong to a ready document the reader
   may read (so unreadable ones never take the bound): the work of a search never grows
   with the table.
4. Each kept lexeme's postings in the indexes searched are read from the GIN index (a
   composite one on `(index_id, tsv)` where `btree_gin` is available, so other tenants'
   postings are never read); each chunk scores the BM25 weight of the lexemes it holds
   (idf, with BM25's length normalisation by the stored text's size; each lexeme counted
   once per chunk), summed: a first ranking read from the index alone, no chunk's `tsv`.
5. The best of those (`FIRST_STAGE_*`) are scored again exactly as BM25 scores them: each
   lexeme's occurrences and the chunk's length in tokens, read from their `tsv`, the
   length against the average of those chunks.

On BEIR SciFact this ranks as SQLite's FTS5 does (nDCG@10 0.684 against 0.688; the first
stage alone, 0.644; `ts_rank_cd`, 0.440).

The chunk rows read are narrow: their text and `tsv` are stored out of line (migration
0011 sets `toast_tuple_target`), so a posting costs a small heap read, not a 2 kB one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, bindparam, text

K1 = 1.2
B = 0.75
"""BM25's term-frequency saturation and length normalisation, as SQLite's FTS5 uses them."""
FIRST_STAGE_FACTOR, FIRST_STAGE_MIN, FIRST_STAGE_MAX = 2, 200, 1000
"""How many chunks, best by the first stage's score, are scored again exactly (2k, within
bounds): on SciFact, rescoring the first 100 already ranks as scoring every match exactly."""
CONJUNCTIVE_ROWS = 2000
"""Chunks read at most when every word of the question is common (see `_conjunctive`)."""
STATISTICS_SECONDS = 300.0
"""How long the column's statistics are kept before being read again (ANALYZE, run by
autovacuum, refreshes them far less often)."""


@dataclass
class Statistics:
    """The `tsv` column's most common lexemes with the share of chunks holding each, and the
    number of chunks, as PostgreSQL's planner last measured them."""

    common: dict[str, float] = field(default_factory=dict)
    rarest_common: float = 0.0
    """The smallest share among `common`: a lexeme not in it is held by fewer chunks."""
    chunks: int = 0
    read_at: float = 0.0


class PostgresKeyword:
    """The PostgreSQL side of `storage.keyword.KeywordIndex`."""

    def __init__(self, max_postings: int) -> None:
        self._max_postings = max_postings
        self._statistics = Statistics()

    def search(
        self,
        connection: Connection,
        index_ids: Sequence[int],
        words: Sequence[str],
        k: int,
        document_ids: Sequence[int] | None,
        *,
        readable: tuple[str, Mapping[str, Sequence[object]]] = ("TRUE", {}),
    ) -> list[tuple[int, float]]:
        """The `k` best (chunk id, score) for `words` in those indexes, of the documents
        `readable` lets through (a condition on the `document` table aliased `d`, and its
        list parameters: `storage.document_access.readable_condition`), inside the query."""
        lexemes = self.lexemes(connection, words)
        if not lexemes:
            return []
        held, total = self.frequencies_of(connection, lexemes)
        first = min(max(FIRST_STAGE_FACTOR * k, FIRST_STAGE_MIN), FIRST_STAGE_MAX)
        params: dict[str, object] = {
            "k": k,
            "first": first,
            "k1": K1,
            "b": B,
            "document_ids": list(document_ids or []),
            "lexemes": list(lexemes),
            "idfs": [idf(n, total) for n in held],
        }
        for m, index_id in enumerate(dict.fromkeys(index_ids)):
            params[f"i{m}"] = index_id
        indexes = range(len(dict.fromkeys(index_ids)))
        documents = "AND document_id = ANY(:document_ids)" if document_ids is not None else ""
        condition, lists = readable
        params.update(lists)
        rarest = min((n for n in held if n > 0), default=0)
        if rarest <= self._max_postings:
            postings, total_of = (
                _disjunctive(lexemes, held, total, self._max_postings, indexes, params),
                "sum",
            )
        else:  # the cut is on rows read: the documents left out must be left out before it
            kept = f"{documents} AND {_KEPT.format(condition=condition)}"
            postings, total_of = (
                _conjunctive(lexemes, held, total, max(2 * first, CONJUNCTIVE_ROWS), indexes, params, kept),
                "max",
            )
        in_indexes = ", ".join(f":i{m}" for m in indexes)
        # the condition is Lore's own SQL (`readable_condition`), its values bound
        documents += f" AND document_id IN (SELECT d.id FROM document AS d WHERE d.index_id IN ({in_indexes}) AND {condition})"  # noqa: S608
        statement = text(_BM25.format(postings=postings, documents=documents, total=total_of))
        statement = statement.bindparams(*(bindparam(name, expanding=True) for name in lists))
        rows = connection.execute(statement, params).all()
        return [(int(chunk), float(score)) for chunk, score in rows]

    def lexemes(self, connection: Connection, words: Sequence[str]) -> list[str]:
        """The distinct lexemes the words stem to, in the words' order (a word PostgreSQL
        drops as a stop word gives none)."""
        return list(dict.fromkeys(lexeme for found in stems(connection, words) for lexeme in found))

    def frequencies(self, connection: Connection, words: Sequence[str]) -> tuple[list[int], int]:
        """How many chunks hold each word (as the index stems it, by its first lexeme; 0 for
        one it drops), and how many chunks there are."""
        firsts = [found[0] if found else None for found in stems(connection, words)]
        lexemes = list(dict.fromkeys(lexeme for lexeme in firsts if lexeme is not None))
        held, total = self.frequencies_of(connection, lexemes)
        count = dict(zip(lexemes, held, strict=True))
        return [count[lexeme] if lexeme is not None else 0 for lexeme in firsts], total

    def frequencies_of(self, connection: Connection, lexemes: Sequence[str]) -> tuple[list[int], int]:
        """Document frequencies of lexemes: from the statistics for common ones, counted
        (up to just past the rarest common one's) for the others."""
        statistics = self._fresh_statistics(connection)
        total = statistics.chunks
        cap = (
            max(1, math.ceil(statistics.rarest_common * total))
            if statistics.common
            else self._max_postings + 1
        )
        rare = [lexeme for lexeme in lexemes if lexeme not in statistics.common]
        counted = _capped_counts(connection, rare, cap) if rare else {}
        held = [
            round(statistics.common[lexeme] * total)
            if lexeme in statistics.common
            else counted.get(lexeme, 0)
            for lexeme in lexemes
        ]
        return held, max(total, max(held, default=0))

    def _fresh_statistics(self, connection: Connection) -> Statistics:
        if time.monotonic() - self._statistics.read_at > STATISTICS_SECONDS:
            self._statistics = read_statistics(connection)
        return self._statistics

    def forget_statistics(self) -> None:
        """Read the statistics again at the next search (after an ANALYZE)."""
        self._statistics = Statistics()


def _disjunctive(
    lexemes: Sequence[str],
    held: Sequence[int],
    total: int,
    budget: int,
    indexes: Sequence[int],
    params: dict[str, object],
) -> str:
    """The postings of the rarest lexemes within the budget, one arm per (lexeme, index),
    each row weighing its lexeme's idf (summed per chunk)."""
    from storage.keyword import within_budget

    arms = []
    for n, lexeme in enumerate(within_budget(lexemes, held, budget)):
        params[f"q{n}"], params[f"w{n}"] = tsquery(lexeme), idf(held[lexemes.index(lexeme)], total)
        arms += [_POSTINGS.format(n=n, m=m, kept="", limit="") for m in indexes]
    return " UNION ALL ".join(arms)


def _conjunctive(
    lexemes: Sequence[str],
    held: Sequence[int],
    total: int,
    rows: int,
    indexes: Sequence[int],
    params: dict[str, object],
    kept: str,
) -> str:
    """When even the rarest lexeme is held by more chunks than the budget (every word of the
    question is common, in a large index), the chunks holding the most of them: those
    holding all, then all but the commonest, and so on, `rows` at most in all (the GIN
    index intersects the lexemes' postings; only the chunks read cost a row). Each row
    weighs the idfs of the lexemes its level asks for (the best level counts per chunk).
    `kept` (a condition on the chunk's document: readable, ready, among those asked for) is
    checked on each row before the cut, so documents left out never take a reader's rows."""
    present = sorted((i for i, n in enumerate(held) if n > 0), key=lambda i: held[i])
    arms = []
    for level in range(len(present), 0, -1):
        asked = present[:level]
        params[f"q{level}"] = " & ".join(tsquery(lexemes[i]) for i in asked)
        params[f"w{level}"] = sum(idf(held[i], total) for i in asked)
        arms += [f"({_POSTINGS.format(n=level, m=m, kept=kept, limit='LIMIT :rows')})" for m in indexes]
    params["rows"] = rows
    return f"SELECT * FROM ({' UNION ALL '.join(arms)}) AS levels LIMIT :rows"  # noqa: S608 (placeholders only)


def stems(connection: Connection, words: Sequence[str]) -> list[list[str]]:
    """The lexemes each word stems to, in one round trip."""
    if not words:
        return []
    rows = connection.execute(
        text(
            "SELECT w.n, l.lexeme FROM unnest(CAST(:words AS text[])) WITH ORDINALITY AS w(word, n), "
            "LATERAL unnest(to_tsvector('english', w.word)) AS l ORDER BY w.n, l.lexeme"
        ),
        {"words": list(words)},
    ).all()
    found: list[list[str]] = [[] for _ in words]
    for n, lexeme in rows:
        found[int(n) - 1].append(str(lexeme))
    return found


def read_statistics(connection: Connection) -> Statistics:
    """The planner's statistics of `chunk.tsv`; the number of chunks counted outright while
    the table has never been analysed (it is then small: autovacuum analyses it early)."""
    chunks = connection.execute(
        text("SELECT reltuples FROM pg_class WHERE oid = to_regclass('chunk')")
    ).scalar_one_or_none()
    if chunks is None or chunks < 0:
        chunks = connection.execute(text("SELECT count(*) FROM chunk")).scalar_one()
    row = connection.execute(
        text(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE tablename = 'chunk' AND attname = 'tsv' AND schemaname = current_schema()"
        )
    ).first()
    common: dict[str, float] = {}
    if row is not None and row[0]:
        common = {str(lexeme): float(share) for lexeme, share in zip(row[0], row[1], strict=False)}
    return Statistics(common, min(common.values(), default=0.0), int(chunks), time.monotonic())


def _capped_counts(connection: Connection, lexemes: Sequence[str], cap: int) -> dict[str, int]:
    """How many chunks hold each lexeme, counting each no further than `cap`, in one round
    trip (each count reads that lexeme's postings in the GIN index, no more)."""
    rows = connection.execute(
        text(
            "SELECT q.n, (SELECT count(*) FROM (SELECT 1 FROM chunk WHERE tsv @@ q.query LIMIT :cap) AS s) "
            "FROM unnest(CAST(:queries AS tsquery[])) WITH ORDINALITY AS q(query, n)"
        ),
        {"queries": [tsquery(lexeme) for lexeme in lexemes], "cap": cap},
    ).all()
    return {lexemes[int(n) - 1]: int(count) for n, count in rows}


def idf(held: int, total: int) -> float:
    """BM25's inverse document frequency, kept positive (FTS5's floor) so that a word in
    more than half the chunks still counts a little."""
    return max(math.log((total - held + 0.5) / (held + 0.5)), 1e-6)


def tsquery(lexeme: str) -> str:
    """A tsquery matching exactly this (already stemmed) lexeme."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


# One lexeme's postings in one index: a GIN index scan on (index_id, tsv) with both as keys,
# planned with the lexeme's own statistics. Each row's length is `octet_length`, which reads
# a stored value's size, not the value.
_POSTINGS = (
    "SELECT id, document_id, octet_length(heading) + octet_length(text) AS length, CAST(:w{n} AS float8) AS weight "
    "FROM chunk WHERE index_id = :i{m} AND tsv @@ CAST(:q{n} AS tsquery) {kept} {limit}"
)

# A chunk's document may be read (`condition`, on `d`) and is ready: one lookup by the
# document's key per chunk read, so its cost follows the rows read, not the index's size.
_KEPT = (
    "EXISTS (SELECT 1 FROM document AS d WHERE d.id = chunk.document_id "
    "AND d.status NOT IN ('pending', 'deleting') AND {condition})"
)

# Summed per chunk as BM25 with one occurrence per lexeme, normalised by length against the
# average of the chunks matched; chunks of documents not ready (few: found by the status
# index) left out. Then the best `first` scored again with each lexeme's occurrences and
# each chunk's length in tokens, from their `tsv` (the positions of each lexeme).
_BM25 = """
WITH hits AS (
    {postings}
), scored AS (
    SELECT id, {total}(weight) AS weight, max(length) AS length FROM hits
    WHERE document_id NOT IN (SELECT id FROM document WHERE status IN ('pending', 'deleting')) {documents}
    GROUP BY id
), average AS (
    SELECT greatest(avg(length), 1) AS length FROM scored
), first AS (
    SELECT id FROM scored, average
    ORDER BY weight / (1 + :k1 * (1 - :b + :b * scored.length / average.length)) DESC, id
    LIMIT :first
), occurrences AS (
    SELECT first.id, u.lexeme, cardinality(u.positions) AS tf
    FROM first JOIN chunk AS c ON c.id = first.id CROSS JOIN LATERAL unnest(c.tsv) AS u
), lengths AS (
    SELECT id, sum(tf) AS tokens FROM occurrences GROUP BY id
), q AS (
    SELECT lexeme, idf FROM unnest(CAST(:lexemes AS text[]), CAST(:idfs AS float8[])) AS q(lexeme, idf)
)
SELECT o.id, sum(q.idf * o.tf * (:k1 + 1) / (o.tf + :k1 * (1 - :b + :b * l.tokens / a.tokens))) AS score
FROM occurrences AS o
JOIN q ON q.lexeme = o.lexeme
JOIN lengths AS l ON l.id = o.id
CROSS JOIN (SELECT greatest(avg(tokens), 1) AS tokens FROM lengths) AS a
GROUP BY o.id
ORDER BY score DESC, o.id
LIMIT :k
"""
