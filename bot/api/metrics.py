"""Prometheus metrics of the HTTP API, kept in memory and written in the text format.

Counters and histograms with labels, no client library: requests by route and status,
their latency, answers by mode, documents ingested by outcome. Labels are bounded (route
templates, not paths), so memory stays small however many requests arrive.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence

Labels = tuple[tuple[str, str], ...]

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _labels(values: Mapping[str, str]) -> Labels:
    return tuple(sorted(values.items()))


def _format_labels(labels: Labels, extra: Labels = ()) -> str:
    pairs = [*labels, *extra]
    if not pairs:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class Counter:
    def __init__(self, name: str, help_text: str) -> None:
        self.name = name
        self.help = help_text
        self._values: dict[Labels, float] = {}
        self._lock = threading.Lock()

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = _labels(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        return self._values.get(_labels(labels), 0.0)

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        with self._lock:
            items = sorted(self._values.items())
        lines += [f"{self.name}{_format_labels(k)} {_number(v)}" for k, v in items]
        return lines


class Histogram:
    def __init__(self, name: str, help_text: str, buckets: Sequence[float] = LATENCY_BUCKETS) -> None:
        self.name = name
        self.help = help_text
        self._buckets = tuple(buckets)
        self._series: dict[Labels, tuple[list[int], float, int]] = {}
        self._lock = threading.Lock()

    def observe(self, value: float, **labels: str) -> None:
        key = _labels(labels)
        with self._lock:
            counts, total, n = self._series.get(key, ([0] * len(self._buckets), 0.0, 0))
            for i, bound in enumerate(self._buckets):
                if value <= bound:
                    counts[i] += 1
            self._series[key] = (counts, total + value, n + 1)

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        with self._lock:
            items = sorted((k, (list(c), s, n)) for k, (c, s, n) in self._series.items())
        for labels, (counts, total, n) in items:
            for bound, count in zip(self._buckets, counts, strict=True):
                lines.append(f"{self.name}_bucket{_format_labels(labels, (('le', _number(bound)),))} {count}")
            lines.append(f"{self.name}_bucket{_format_labels(labels, (('le', '+Inf'),))} {n}")
            lines.append(f"{self.name}_sum{_format_labels(labels)} {_number(total)}")
            lines.append(f"{self.name}_count{_format_labels(labels)} {n}")
        return lines


class Metrics:
    """The API's metrics; `render()` gives the Prometheus text exposition."""

    def __init__(self) -> None:
        self.requests = Counter("lore_http_requests_total", "HTTP API requests by method, route and status.")
        self.latency = Histogram("lore_http_request_duration_seconds", "HTTP API request latency by route.")
        self.answers = Counter(
            "lore_answers_total",
            "Answers by endpoint (an API route, or slack), response mode and fallback used.",
        )
        self.ingested = Counter(
            "lore_ingested_documents_total", "Documents added through the API by outcome."
        )

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.inc(method=method, route=route, status=str(status))
        self.latency.observe(seconds, route=route)

    def answer(self, endpoint: str, mode: str, fallback: str | None) -> None:
        self.answers.inc(endpoint=endpoint, mode=mode, fallback=fallback or "none")

    def render(self, job_states: Mapping[str, int] | None = None) -> str:
        lines = [
            *self.requests.render(),
            *self.latency.render(),
            *self.answers.render(),
            *self.ingested.render(),
        ]
        if job_states is not None:
            lines += ["# HELP lore_indexing_jobs Indexing jobs by state.", "# TYPE lore_indexing_jobs gauge"]
            lines += [
                f'lore_indexing_jobs{{state="{_escape(s)}"}} {n}' for s, n in sorted(job_states.items())
            ]
        return "\n".join(lines) + "\n"
