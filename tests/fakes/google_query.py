"""Two small languages of Google's APIs, for the fake Google: Drive's search query (`q`:
`'ID' in parents and trashed = false`, `mimeType != '…'`, `sharedWithMe = true`, `name
contains 'x'`, with `and`, `or`, `not` and parentheses) and the partial-response `fields`
mask (`nextPageToken,files(id,name,owners(displayName))`), which Google applies to every
answer: a client that does not ask for a field does not get it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Fields = dict[str, "Fields | None"]
_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^'\\]|\\.)*')|(?P<op>!=|<=|>=|=|<|>|\(|\))|(?P<word>[A-Za-z_][\w.]*))"
)


class QueryError(ValueError):
    """A query Drive would refuse (400 invalid)."""


def _tokens(query: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    position = 0
    query = query.rstrip()
    while position < len(query):
        match = _TOKEN.match(query, position)
        if match is None or match.end() == position:
            raise QueryError(f"Invalid Value at {position}")
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "str":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.append((kind, value))
        position = match.end()
    return found


Predicate = Callable[[Mapping[str, Any]], bool]


class _Parser:
    """expr := term (or term)*; term := factor (and factor)*; factor := not factor | ( expr )
    | 'value' in parents | field op value | field (a boolean)."""

    FIELDS = frozenset({"name", "mimeType", "trashed", "starred", "sharedWithMe", "modifiedTime", "fullText"})

    def __init__(self, query: str) -> None:
        self.tokens = _tokens(query)
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise QueryError("Invalid Value: the query ends too soon")
        self.at += 1
        return token

    def parse(self) -> Predicate:
        found = self.expr()
        if self.peek() is not None:
            raise QueryError(f"Invalid Value near {self.peek()}")
        return found

    def expr(self) -> Predicate:
        parts = [self.term()]
        while self.peek() == ("word", "or"):
            self.take()
            parts.append(self.term())
        return lambda f: any(p(f) for p in parts)

    def term(self) -> Predicate:
        parts = [self.factor()]
        while self.peek() == ("word", "and"):
            self.take()
            parts.append(self.factor())
        return lambda f: all(p(f) for p in parts)

    def factor(self) -> Predicate:
        kind, value = self.take()
        if (kind, value) == ("word", "not"):
            inner = self.factor()
            return lambda f: not inner(f)
        if (kind, value) == ("op", "("):
            inner = self.expr()
            if self.take() != ("op", ")"):
                raise QueryError("Invalid Value: a parenthesis is not closed")
            return inner
        if kind == "str":
            if self.take() != ("word", "in"):
                raise QueryError("Invalid Value: 'value' in parents/owners expected")
            _, collection = self.take()
            if collection not in ("parents", "owners", "writers", "readers"):
                raise QueryError(f"Invalid Value: {collection}")
            return lambda f: value in (f.get(collection) or ())
        if kind != "word" or value not in self.FIELDS:
            raise QueryError(f"Invalid Value: unknown field {value}")
        return self.comparison(value)

    def comparison(self, field: str) -> Predicate:
        token = self.peek()
        if token is None or (token[0] != "op" and token != ("word", "contains")):
            return lambda f: bool(f.get(field))  # `sharedWithMe` alone
        _, op = self.take()
        kind, raw = self.take()
        if kind == "word" and raw in ("true", "false"):
            wanted: Any = raw == "true"
        elif kind == "str":
            wanted = raw
        else:
            raise QueryError(f"Invalid Value: {raw}")
        compare: dict[str, Callable[[Any, Any], bool]] = {
            "=": lambda a, b: a == b,
            "!=": lambda a, b: a != b,
            "<": lambda a, b: a < b,
            ">": lambda a, b: a > b,
            "<=": lambda a, b: a <= b,
            ">=": lambda a, b: a >= b,
            "contains": lambda a, b: str(b).lower() in str(a).lower(),
        }
        test = compare[op]
        return lambda f: test(f.get(field, False if isinstance(wanted, bool) else ""), wanted)


def drive_query(query: str) -> Predicate:
    """A predicate over a file's fields (`parents`, `owners` as lists); `QueryError`."""
    return _Parser(query).parse()


def parse_fields(text: str) -> Fields:
    """`a,b(c,d(e)),f/g` → {"a": None, "b": {"c": None, "d": {"e": None}}, "f": {"g": None}};
    `f.g` is `f/g` (the Sheets API's documentation writes nested fields with dots)."""
    found: Fields = {}
    position = _fields_into(text.replace(" ", ""), 0, found)
    if position != len(text.replace(" ", "")):
        raise QueryError(f"Invalid field selection {text}")
    return found


def _fields_into(text: str, position: int, into: Fields) -> int:
    while position < len(text):
        match = re.compile(r"[\w*]+(?:[/.][\w*]+)*").match(text, position)
        if match is None:
            raise QueryError(f"Invalid field selection {text}")
        path = re.split(r"[/.]", match.group(0))
        position = match.end()
        sub: Fields | None = None
        if position < len(text) and text[position] == "(":
            sub = {}
            position = _fields_into(text, position + 1, sub)
            if position >= len(text) or text[position] != ")":
                raise QueryError(f"Invalid field selection {text}")
            position += 1
        node = into
        for name in path[:-1]:
            child = node.get(name)
            if child is None:
                child = node[name] = {}
            node = child
        node[path[-1]] = sub if sub is not None else node.get(path[-1])
        if position < len(text) and text[position] == ",":
            position += 1
        elif position < len(text) and text[position] == ")":
            return position
    return position


def apply_fields(value: Any, fields: Fields | None) -> Any:
    """`value` with only the fields asked for (every field under a bare name, or `*`)."""
    if fields is None or "*" in fields:
        return value
    if isinstance(value, list):
        return [apply_fields(v, fields) for v in value]
    if not isinstance(value, dict):
        return value
    return {k: apply_fields(value[k], sub) for k, sub in fields.items() if k in value}
