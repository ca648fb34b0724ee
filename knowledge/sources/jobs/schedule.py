"""When an attached source is refreshed: `hourly`, `daily`, `weekly`, `every N hours|days|weeks`,
or `never`. A `Schedule` is parsed once from what a person typed and stored as its text."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

NAMED = {"hourly": timedelta(hours=1), "daily": timedelta(days=1), "weekly": timedelta(weeks=1)}
NEVER_WORDS = ("never", "off", "manual", "manually")
UNITS = ("hour", "day", "week")


@dataclass(frozen=True)
class Schedule:
    """A refresh schedule; `interval` None means never refreshed on its own."""

    text: str
    interval: timedelta | None

    @classmethod
    def parse(cls, text: str) -> Schedule | None:
        """The schedule a person typed ("Weekly", "every 6 hours", "off"), or None."""
        words = text.strip().lower().split()
        spelled = " ".join(words)
        if spelled in NEVER_WORDS:
            return NEVER
        if spelled in NAMED:
            return cls(spelled, NAMED[spelled])
        if len(words) == 3 and words[0] == "every" and words[1].isdigit() and int(words[1]) > 0:
            unit = words[2].removesuffix("s")
            if unit in UNITS:
                count = int(words[1])
                return cls(
                    f"every {count} {unit}{'s' if count > 1 else ''}", timedelta(**{f"{unit}s": count})
                )
        return None

    @classmethod
    def stored(cls, text: str) -> Schedule:
        """The schedule a source row holds (anything unreadable counts as never)."""
        return cls.parse(text) or NEVER

    @property
    def never(self) -> bool:
        return self.interval is None

    def __str__(self) -> str:
        return self.text


NEVER = Schedule("never", None)
DAILY = Schedule("daily", NAMED["daily"])
