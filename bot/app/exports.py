"""The export formats every surface writes (the console's downloads, `GET /v1/audit`, the
CLI): the audit log as CSV or JSON lines, the query history as CSV. One line at a time, so
an export of any length streams in constant memory.

CSV cells that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab
or a carriage return) are prefixed with a quote: questions and document names are anyone's
text, and an export is opened by admins.
"""

from __future__ import annotations

import csv
import enum
import io
import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

from bot.app.actions.admin import HistoryLine
from bot.app.audit import AuditRecord

AUDIT_COLUMNS = ("id", "at", "actor", "actor_name", "surface", "origin", "action", "target", "details")
HISTORY_COLUMNS = (
    "at",
    "where",
    "asker",
    "question",
    "answer",
    "outcome",
    "latency_ms",
    "helpful",
    "unhelpful",
    "indexes",
    "withheld",
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class Format(enum.StrEnum):
    CSV = "csv"
    JSONL = "jsonl"

    @property
    def media_type(self) -> str:
        return "text/csv" if self == Format.CSV else "application/x-ndjson"

    @classmethod
    def parse(cls, text: str | None) -> Format:
        """`csv` or `jsonl` (also `json`, `ndjson`); ValueError names them."""
        wanted = (text or "jsonl").strip().lower()
        if wanted in ("json", "ndjson", "jsonlines"):
            return cls.JSONL
        try:
            return cls(wanted)
        except ValueError:
            raise ValueError("the format is csv or jsonl") from None


def audit_json(entry: AuditRecord) -> dict[str, object]:
    return {
        "id": entry.id,
        "at": entry.at.isoformat(),
        "actor": entry.actor,
        "actor_name": entry.actor_name,
        "surface": entry.surface,
        "origin": entry.origin,
        "action": entry.action,
        "target": entry.target,
        "details": entry.details,
    }


async def audit_lines(entries: AsyncIterator[AuditRecord], how: Format) -> AsyncIterator[str]:
    """The entries as CSV (with a header) or JSON lines, one line per entry."""
    if how == Format.CSV:
        yield csv_line(AUDIT_COLUMNS)
    async for entry in entries:
        found = audit_json(entry)
        if how == Format.CSV:
            found["details"] = json.dumps(entry.details, sort_keys=True, ensure_ascii=False)
            yield csv_line([_cell(found[c]) for c in AUDIT_COLUMNS])
        else:
            yield json.dumps(found, ensure_ascii=False) + "\n"


async def history_lines(lines: AsyncIterator[HistoryLine]) -> AsyncIterator[str]:
    yield csv_line(HISTORY_COLUMNS)
    async for line in lines:
        yield csv_line(
            [
                line.at.isoformat(timespec="seconds"),
                line.where,
                line.asker,
                line.question,
                line.answer,
                "abstained" if line.abstained else "answered",
                "" if line.latency_ms is None else str(line.latency_ms),
                str(line.helpful),
                str(line.unhelpful),
                line.indexes,
                "yes" if line.withheld else "",
            ]
        )


def csv_line(cells: Sequence[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([_safe(c) for c in cells])
    return out.getvalue()


def _cell(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return "" if value is None else str(value)


def _safe(cell: str) -> str:
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell
