"""Tabular and structured data rendered as readable lines: CSV/TSV rows and flattened JSON.

A CSV or TSV file becomes its header line and then one line a row, cells separated by ' | '
(a cell's own line breaks become spaces), which `tables.chunk_table` groups into chunks that
each start with the header: the header's words are paid for once a chunk, not once a cell
(an 80-column file of 1.1 MB made 8.5 M characters the other way). JSON becomes one
'path.to.key: value' line per leaf, with list items as 'items[0]'; JSON Lines records are
separated by blank lines.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from knowledge.errors import UnreadableContent
from knowledge.extraction import formats
from knowledge.extraction.text import decode_text
from knowledge.extraction.types import Extracted

_SNIFF_CHARS = 32 * 1024  # enough rows for csv.Sniffer to tell the delimiter
_DELIMITERS = ",;\t|"
_CONSTANTS = {None: "null", True: "true", False: "false"}
_SEPARATOR = formats.CELL_SEPARATOR


def extract_csv(data: bytes, name: str, mime_type: str) -> Extracted:
    """CSV or TSV as a header line and one 'a | b | c' line a row; headers from the first row."""
    text = decode_text(data, name)
    rows = csv.reader(io.StringIO(text, newline=""), _dialect(text, mime_type))
    try:
        lines, columns = _render_rows(rows)
    except csv.Error as exc:
        kind = formats.describe(mime_type)
        reason = f"it is not {kind} I can read (line {rows.line_num}: {exc})"
        raise UnreadableContent(name, reason) from exc
    metadata = {"rows": str(len(lines) - 1), "columns": str(columns)}
    return Extracted(text="\n".join(lines), mime_type=mime_type, metadata=metadata)


def _dialect(text: str, mime_type: str) -> type[csv.Dialect] | csv.Dialect:
    if mime_type == formats.TSV:
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:_SNIFF_CHARS], delimiters=_DELIMITERS)
    except csv.Error:
        return csv.excel


def _render_rows(rows: Iterator[list[str]]) -> tuple[list[str], int]:
    """The header line, then the non-empty data rows, and the widest row's column count.

    Blank header cells are named 'column N'; a ragged row's extra cells get such names too."""
    header = next(rows, None)
    if header is None:
        return [], 0
    headers = [_cell(cell) or f"column {index}" for index, cell in enumerate(header, 1)]
    lines = [""]
    for row in rows:
        cells = [_cell(cell) for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            lines.append(_SEPARATOR.join(cells))
            headers += [f"column {index}" for index in range(len(headers) + 1, len(cells) + 1)]
    lines[0] = _SEPARATOR.join(headers)
    return lines, len(headers)


def _cell(cell: str) -> str:
    return " ".join(cell.split()) if "\n" in cell or "\r" in cell else cell.strip()


def extract_json(data: bytes, name: str, mime_type: str) -> Extracted:
    """A JSON document flattened to 'path: value' lines; several values are read as JSON Lines."""
    text = decode_text(data, name)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise UnreadableContent(name, _json_reason(exc)) from exc
        return extract_json_lines(data, name, formats.JSONL)
    text = "\n".join(flatten(value))
    return Extracted(text=text, mime_type=mime_type)


def extract_json_lines(data: bytes, name: str, mime_type: str) -> Extracted:
    """JSON Lines: one value a line, each flattened, records separated by a blank line."""
    blocks = []
    for number, line in enumerate(decode_text(data, name).split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UnreadableContent(
                name, f"line {number} is not valid JSON ({exc.msg.removesuffix(' at')})"
            ) from exc
        blocks.append("\n".join(flatten(value)))
    metadata = {"records": str(len(blocks))}
    return Extracted(text="\n\n".join(blocks), mime_type=mime_type, metadata=metadata)


def _json_reason(exc: json.JSONDecodeError) -> str:
    # Some of json's messages end in " at" already ("Invalid control character at").
    message = exc.msg.removesuffix(" at")
    return f"it is not valid JSON ({message} at line {exc.lineno}, column {exc.colno})"


def flatten(value: object) -> Iterator[str]:
    """'path.to.key: value' for every leaf of a decoded JSON value, in document order.

    Iterative, so deep nesting cannot exhaust the stack. Empty objects and lists are leaves
    ('{}', '[]'); a bare top-level scalar is rendered without a path. Exact type checks are
    deliberate: json.loads only builds dict, list, str, int, float, bool and None.
    """
    stack: list[tuple[str, object]] = [("", value)]
    push = stack.append
    while stack:
        path, node = stack.pop()
        if type(node) is dict and node:
            prefix = path + "." if path else ""
            for key in reversed(node):
                push((prefix + str(key), node[key]))
        elif type(node) is list and node:
            for index in range(len(node) - 1, -1, -1):
                push((f"{path}[{index}]", node[index]))
        else:
            text = node if type(node) is str else _scalar(node)
            yield f"{path}: {text}" if path else text


def _scalar(value: object) -> str:
    """JSON's spelling of a non-string leaf; json.dumps per value would be ten times slower."""
    if value is None or isinstance(value, bool):
        return _CONSTANTS[value]
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return repr(value)
