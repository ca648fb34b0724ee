"""A conversation's indexes and settings: enabling, the default, answer modes, creating, deleting, forgetting."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat.messages._words import and_list, plural
from bot.chat.mrkdwn import escape as e

__all__ = [
    "already_enabled",
    "confirm_delete",
    "created",
    "delete_cancelled",
    "deleted",
    "disabled",
    "documents_only",
    "enabled",
    "forgot",
    "made_default",
    "mode_set",
    "no_index_here",
    "not_enabled",
    "nothing_to_forget",
    "settings_locked",
    "strategy_set",
    "unknown_mode",
]


def enabled(index: str, what: str) -> str:
    return f"Enabled the *{e(index)}* index ({e(what)}) here. I'll search it for every question."


def already_enabled(index: str, what: str) -> str:
    return f"The *{e(index)}* index ({e(what)}) is already enabled here."


def disabled(index: str, what: str) -> str:
    return f"Disabled the *{e(index)}* index ({e(what)}) here."


def not_enabled(index: str, what: str) -> str:
    return f"The *{e(index)}* index ({e(what)}) wasn't enabled here."


def made_default(index: str, what: str) -> str:
    return f"New documents here now go into the *{e(index)}* index ({e(what)})."


def documents_only(index: str, what: str, on: bool) -> str:
    if on:
        return (
            f"Answers that draw on the *{e(index)}* index ({e(what)}) now come from its documents alone, "
            "wherever it is enabled: when they don't say, I'll say I don't know."
        )
    return f"Answers that draw on the *{e(index)}* index ({e(what)}) may use general knowledge again, labelled as such."


def settings_locked(locked: bool) -> str:
    if locked:
        return "Locked this channel's settings: only workspace admins can change its indexes and answer mode now."
    return "Unlocked this channel's settings: its members can enable and disable indexes again."


def created(index: str) -> str:
    return f"Created the shared *{e(index)}* index and enabled it here. Anyone in the workspace can enable it too."


def confirm_delete(index: str, documents: int) -> str:
    return f"Delete the *{e(index)}* index and its {plural(documents, 'document')}? This cannot be undone."


def deleted(index: str) -> str:
    return f"Deleted the *{e(index)}* index."


def delete_cancelled(index: str) -> str:
    return f"Kept the *{e(index)}* index."


def forgot(names: Sequence[str], index: str) -> str:
    return f"Forgot {and_list([f'*{e(n)}*' for n in names])} (from the *{e(index)}* index)."


def nothing_to_forget(reference: str, index: str) -> str:
    return f"I couldn't find a document matching “{e(reference)}” in the *{e(index)}* index. Say “what's in your memory” to see its documents."


def no_index_here() -> str:
    return "There is no index enabled here. Enable one with “enable the <name> index” or create one with “create an index called <name>”."


def mode_set(mode: str) -> str:
    return f"Answers here now use *{e(mode)}* mode."


def strategy_set(strategy: str) -> str:
    return f"Retrieval strategy here is now *{e(strategy)}*."


def unknown_mode(mode: str) -> str:
    return f"I don't know the {e(mode)} mode. Try rag only, llm only, hybrid, smart fallback, rag priority or llm priority."
