"""Keyword search over chunks, inside the SQL database: persistent and incremental.

SQLite uses an FTS5 table (porter stemming, bm25 ranking); PostgreSQL a generated,
GIN-indexed `tsvector` column (English stemming, BM25 computed in SQL from the planner's
statistics: `storage.keyword_postgres`). Both are kept in step with
the `chunk` table by the database itself (triggers / a generated column), in the same
transaction as the rows, so keyword search never sees a half-written document. Only chunks
of `ready` documents are returned.

Ranking costs about a microsecond per matching chunk, and a search must rank every match
to find the best: in a large index, a question with a few common words matches most of it.
So the query's terms are counted first (the length of each term's posting list, a cheap
read; on PostgreSQL, the column's statistics) and the most common ones are left out once
the others already match `MAX_POSTINGS` chunks. The rarest term is always kept. The terms left out are the ones
bm25 weighs least (a term in half the chunks weighs nothing), so the ranking barely moves,
and an index under `MAX_POSTINGS` chunks is ranked exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, text

from storage.db import Database
from storage.document_access import PUBLIC_ONLY, AccessFilter, readable_condition
from storage.keyword_postgres import PostgresKeyword

KEYWORD_OBJECTS = re.compile(r"^chunk_fts(_\w+)?$")
"""Schema objects the keyword index owns, which the models do not describe."""
KEYWORD_COLUMNS = {("chunk", "tsv")}


def described_by_models(obj: object, name: str | None, type_: str, reflected: bool, other: object) -> bool:
    """Alembic `include_object` hook: False for the keyword index's own schema objects."""
    if type_ in ("table", "index") and name and (KEYWORD_OBJECTS.match(name) or name == "ix_chunk_tsv"):
        return False
    table = getattr(getattr(obj, "table", None), "name", None)
    return not (type_ == "column" and (table, name) in KEYWORD_COLUMNS)


WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 64
MAX_EXCLUDED = 5_000
"""Unreadable documents a keyword search leaves out by id at most; past that, by their clauses."""
MAX_POSTINGS = 20_000
"""Matches a keyword search ranks at most, counted per term (a chunk matching two terms
counts twice), unless the rarest term alone has more."""
_FUNCTION_WORDS = """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves"""
STOPWORDS = frozenset(_FUNCTION_WORDS.split())
"""English function words. Left in a query they match nearly every passage, which adds
nothing to the ranking (their weight is close to zero) and makes every search read the
whole index; dropped unless the query has nothing else."""


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: int
    score: float
    """Higher is better; comparable within one query."""


_JOINERS = frozenset(".'’-")
"""What joins a letter to its neighbours: "e.g.", "flask's", "don't", "X-Forwarded"."""


def searched_words(text: str) -> list[str]:
    """The lower-cased words of `text` a search reads, in order: a single letter only when it
    stands alone, a name (Flask's `g`), not part of "e.g.", "flask's" or "don't"."""
    text = text.lower()
    return [
        found.group()
        for found in WORD.finditer(text)
        if len(found.group()) > 1 or found.group().isdigit() or _alone(text, found.start(), found.end())
    ]


def _alone(text: str, start: int, end: int) -> bool:
    return text[start - 1 : start] not in _JOINERS and text[end : end + 1] not in _JOINERS


def query_terms(query: str) -> list[str]:
    """Distinct lower-cased words of the query, in order, without the function words unless
    there is nothing else (at most MAX_TERMS)."""
    seen: dict[str, None] = {}
    for word in searched_words(query):
        seen.setdefault(word, None)
    words = list(seen)
    content = [w for w in words if w not in STOPWORDS]
    return (content or words)[:MAX_TERMS]


class KeywordIndex:
    def __init__(self, db: Database, *, max_postings: int = MAX_POSTINGS) -> None:
        self._db = db
        self._max_postings = max_postings
        self._postgres = PostgresKeyword(max_postings)

    @staticmethod
    def merge(connection: Connection) -> None:
        """SQLite: merge the FTS5 index into one segment. Deleting passages only adds
        "deleted" marks; their words stay in the older segments until those are merged, so
        a purge merges them (with `secure_delete` on, the pages freed are overwritten)."""
        with connection.begin():
            connection.exec_driver_sql("INSERT INTO chunk_fts(chunk_fts) VALUES ('optimize')")

    def search(
        self,
        index_ids: Sequence[int],
        query: str,
        k: int,
        *,
        document_ids: Sequence[int] | None = None,
        access: AccessFilter = PUBLIC_ONLY,
        unreadable: Collection[int] | None = None,
    ) -> list[KeywordHit]:
        """The `k` best chunks for `query` in the given indexes (any term may match), of the
        documents `access` may read (`storage.document_access`), inside the query itself.

        `unreadable`: the ids of the documents of those indexes `access` may not read, when
        the caller knows them (`DocumentRepository.unreadable_in`, cached): the same rule,
        checked per matching passage as one lookup instead of a count of its document's
        clauses. (The caller reads the hits' chunks under `access` again, so a set a
        permission sync has just made stale can cost a hit, never show one.)"""
        terms = query_terms(query)
        if not terms or not index_ids or k <= 0 or (document_ids is not None and not document_ids):
            return []
        readable = _readable(access, unreadable)
        with self._db.engine.connect() as connection:
            if self._db.dialect != "sqlite":
                found = self._postgres.search(
                    connection, index_ids, terms, k, document_ids, readable=readable
                )
                return [KeywordHit(chunk, score) for chunk, score in found]
            return self._search_sqlite(connection, index_ids, terms, k, document_ids, readable)

    def _search_sqlite(
        self,
        connection: Connection,
        index_ids: Sequence[int],
        terms: list[str],
        k: int,
        document_ids: Sequence[int] | None,
        readable: tuple[str, dict[str, list[object]]],
    ) -> list[KeywordHit]:
        """The search on SQLite's FTS5 index (`readable`: the access condition on `d`, the
        document, and its parameters)."""
        condition, access_params = readable
        documents = _DOCUMENT_FILTER if document_ids is not None else ""
        statement = text(_SQLITE.format(documents=f"{documents} AND {condition}"))
        statement = statement.bindparams(
            bindparam("index_ids", expanding=True),
            *(bindparam(name, expanding=True) for name in access_params),
        )
        params: dict[str, object] = {"index_ids": list(index_ids), "k": k, **access_params}
        if document_ids is not None:
            statement = statement.bindparams(bindparam("document_ids", expanding=True))
            params["document_ids"] = list(document_ids)
        terms = within_budget(terms, _postings(connection, terms), self._max_postings)
        params["match"] = " OR ".join(f'"{t}"' for t in terms)
        rows = connection.execute(statement, params).all()
        return [KeywordHit(int(row[0]), float(row[1])) for row in rows]

    def frequencies(self, words: Sequence[str]) -> tuple[list[int], int]:
        """How many chunks hold each word (stemmed as the index stems it), and how many
        chunks there are: the document frequencies a ranking weighs words by. Counted over
        every index, as bm25 counts them (on PostgreSQL, estimated from its statistics for
        common words: never a count of the table)."""
        valid = [w for w in words if WORD.fullmatch(w)]
        if len(valid) < len(words):
            counts, total = self.frequencies(valid)
            by_word = dict(zip(valid, counts, strict=True))
            return [by_word.get(w, 0) for w in words], total
        if not words:
            return [], 0
        with self._db.engine.connect() as connection:
            if self._db.dialect != "sqlite":
                return self._postgres.frequencies(connection, words)
            total = int(connection.execute(text("SELECT count(*) FROM chunk")).scalar_one())
            held: list[int] = []
            for start in range(0, len(words), MAX_TERMS):  # SQLite refuses a UNION of over 500
                held += _postings(connection, words[start : start + MAX_TERMS])
        return held, total


def within_budget(terms: Sequence[str], postings: Sequence[int], budget: int = MAX_POSTINGS) -> list[str]:
    """The terms to rank by, in query order: the rarest first, then the next rarest while
    their postings together stay within `budget`; terms no chunk holds are left out (but
    one term is always kept, so a query still matches what it can)."""
    by_rarity = sorted((n, i) for i, n in enumerate(postings) if n > 0)
    kept: set[int] = set()
    spent = 0
    for n, i in by_rarity:
        if kept and spent + n > budget:
            break
        kept.add(i)
        spent += n
    return [t for i, t in enumerate(terms) if i in kept] or list(terms[:1])


def _readable(
    access: AccessFilter, unreadable: Collection[int] | None
) -> tuple[str, dict[str, list[object]]]:
    """The SQL condition on `d` (the document) that keeps what `access` may read, and its
    parameters: the documents' clauses checked, or the caller's known unreadable ids
    excluded (when there are few enough)."""
    readable, condition_params = readable_condition(access, "d")
    access_params: dict[str, list[object]] = {name: [*values] for name, values in condition_params.items()}
    if not access.public_only and unreadable is not None and len(unreadable) <= MAX_EXCLUDED:
        readable, access_params = "1 = 1", {}
        if unreadable:
            readable, access_params = "d.id NOT IN :unreadable", {"unreadable": [*sorted(unreadable)]}
    return readable, access_params


def _postings(connection: Connection, terms: Sequence[str]) -> list[int]:
    """How many chunks (of any index) hold each term, in one round trip."""
    selects = " UNION ALL ".join(
        f"SELECT {i}, count(*) FROM chunk_fts WHERE chunk_fts MATCH :t{i}"  # noqa: S608 (only numbers)
        for i in range(len(terms))
    )
    rows = connection.execute(text(selects), {f"t{i}": f'"{t}"' for i, t in enumerate(terms)}).all()
    counts = dict((int(i), int(n)) for i, n in rows)
    return [counts.get(i, 0) for i in range(len(terms))]


_DOCUMENT_FILTER = "AND c.document_id IN :document_ids"

# bm25() is lower-is-better; negate it. Heading (title and section path) weighs like body text.
_SQLITE = """
SELECT c.id, -bm25(chunk_fts, 1.0, 1.0) AS score
FROM chunk_fts
JOIN chunk AS c ON c.id = chunk_fts.rowid
JOIN document AS d ON d.id = c.document_id
WHERE chunk_fts MATCH :match AND c.index_id IN :index_ids AND d.status = 'ready' {documents}
ORDER BY bm25(chunk_fts, 1.0, 1.0)
LIMIT :k
"""
