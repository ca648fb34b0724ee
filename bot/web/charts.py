"""The console's charts, drawn on the server as SVG: bars placed here, painted by the
stylesheet's classes, each with a `<title>` that a pointer shows. No script runs in the
console (its Content-Security-Policy forbids any), and nothing is fetched from elsewhere, so
the charts work offline and cannot be used to run someone's text as code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from bot.app.actions.admin import Day, Named

WIDTH = 720
DAY_HEIGHT = 160
ROW_HEIGHT = 22
LABEL_WIDTH = 200


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    css: str
    title: str


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: tuple[Bar, ...]
    labels: tuple[Label, ...]
    description: str
    """What the chart shows, in words (its accessible name)."""


def per_day(days: Sequence[Day], since: date, until: date) -> Chart:
    """Questions per day, every day of the window: answered from the documents (bottom),
    from a verified answer, not answered (top); beside them, a narrow bar of those
    escalated to experts."""
    counts = {d.day: d for d in days}
    span = [since + timedelta(days=n) for n in range((until - since).days + 1)]
    top = max([counts[d].questions for d in span if d in counts] or [1])
    step = WIDTH / max(len(span), 1)
    plot = DAY_HEIGHT - 20
    bars: list[Bar] = []
    labels: list[Label] = [Label(0, 10, f"{top} questions", "start")]
    for n, day in enumerate(span):
        found = counts.get(day)
        if found is None:
            continue
        x, width = n * step + 1, max(step - 2, 1)
        title = (
            f"{day.isoformat()}: {found.questions} questions, {found.answered - found.verified} answered, "
            f"{found.verified} from a verified answer, {found.abstained} not answered, "
            f"{found.escalated} escalated"
        )
        y = float(DAY_HEIGHT)
        for count, css in (
            (found.answered - found.verified, "answered"),
            (found.verified, "verified"),
            (found.abstained, "abstained"),
        ):
            high = plot * count / top
            if high > 0:
                y -= high
                bars.append(Bar(x, y, width, high, css, title))
        if found.escalated:
            high = plot * found.escalated / top
            bars.append(Bar(x + width * 0.6, DAY_HEIGHT - high, width * 0.4, high, "escalated", title))
    labels.append(Label(0, DAY_HEIGHT + 14, since.isoformat()))
    labels.append(Label(WIDTH, DAY_HEIGHT + 14, until.isoformat(), "end"))
    total = sum(d.questions for d in days)
    return Chart(
        WIDTH, DAY_HEIGHT + 20, tuple(bars), tuple(labels), f"{total} questions from {since} to {until}"
    )


def ranked(rows: Sequence[Named], what: str) -> Chart:
    """One horizontal bar per row, longest first as given, the count at its end."""
    top = max([r.count for r in rows] or [1])
    room = WIDTH - LABEL_WIDTH - 60
    bars, labels = [], []
    for n, row in enumerate(rows):
        y = n * ROW_HEIGHT
        width = max(room * row.count / top, 1)
        css = "hidden" if row.hidden else "answered"
        bars.append(Bar(LABEL_WIDTH, y + 3, width, ROW_HEIGHT - 6, css, f"{row.name}: {row.count} {what}"))
        labels.append(Label(LABEL_WIDTH - 8, y + 15, _short(row.name), "end"))
        labels.append(Label(LABEL_WIDTH + width + 6, y + 15, str(row.count)))
    height = max(len(rows), 1) * ROW_HEIGHT
    described = ", ".join(f"{r.name} {r.count}" for r in rows) or "none"
    return Chart(WIDTH, height, tuple(bars), tuple(labels), f"{what}: {described}")


def shares(parts: Sequence[Named], what: str, css: Sequence[str] = ()) -> Chart:
    """One bar split into the parts' shares (answered, abstained, helpful …), each painted
    by its class in `css` (by default, by its place)."""
    total = sum(p.count for p in parts) or 1
    x = 0.0
    bars = []
    for n, part in enumerate(parts):
        width = WIDTH * part.count / total
        if width > 0:
            share = round(100 * part.count / total)
            painted = css[n] if n < len(css) else f"share{n % 4}"
            bars.append(Bar(x, 0, width, 28, painted, f"{part.name}: {part.count} ({share}%)"))
        x += width
    labels = tuple(Label(0, 44 + 16 * n, f"{p.name}: {p.count}") for n, p in enumerate(parts))
    described = ", ".join(f"{p.name} {p.count}" for p in parts)
    return Chart(WIDTH, 36 + 16 * len(parts), tuple(bars), labels, f"{what}: {described}")


def _short(text: str, most: int = 28) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"
