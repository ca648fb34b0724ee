"""Keeping MCP results bounded: an agent's context window is small, and an index is large.

Every tool result and resource carries at most `LORE_MCP_MAX_CHARS` characters of text; what
had to be cut or left out is said in the result's notices, never silently dropped."""

from __future__ import annotations

CUT_MARK = " …"


class Budget:
    """Characters of text a result may still carry."""

    def __init__(self, chars: int) -> None:
        self.left = chars
        self.cut = 0
        """Texts shortened to fit."""
        self.dropped = 0
        """Texts left out: nothing was left for them."""

    def take(self, text: str) -> str | None:
        """`text`, shortened if only part of it fits; None when nothing is left."""
        if self.left <= 0:
            self.dropped += 1
            return None
        if len(text) <= self.left:
            self.left -= len(text)
            return text
        kept = text[: max(0, self.left - len(CUT_MARK))].rstrip() + CUT_MARK
        self.left = 0
        self.cut += 1
        return kept

    def notices(self, what: str, setting_chars: int) -> list[str]:
        """What the caller should know about the cuts, e.g. for `what` = "passages"."""
        said = []
        if self.cut:
            said.append(f"{self.cut} of the {what} was cut short ( …)")
        if self.dropped:
            said.append(f"{self.dropped} more {what} were left out")
        return [_keep_under(" and ".join(said), setting_chars)] if said else []


def cut_short(what: str, setting_chars: int) -> str:
    """The notice for one text (a document's) cut at the bound."""
    return _keep_under(f"The {what} was cut short", setting_chars)


def _keep_under(said: str, setting_chars: int) -> str:
    return (
        f"{said[:1].upper()}{said[1:]} to keep this result under {setting_chars:,} characters "
        "(LORE_MCP_MAX_CHARS); ask for less, or search for the passages you need."
    )


def capped(k: int, cap: int) -> tuple[int, list[str]]:
    """`k`, or `cap` with a notice when `k` is larger."""
    if k <= cap:
        return k, []
    return cap, [
        f"k={k:,} is more than the {cap} passages a search returns at most, so {cap} were asked for."
    ]
