"""Small words the sentences share: counts, lists, durations."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["and_list", "duration", "plural"]


def duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 passage`, `3 passages` (or the plural given)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def and_list(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
