"""What Lore says about the conversation itself: help, prompts, the shell's slips, errors."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat.commands import DECLARATIONS, Section
from bot.chat.messages._words import and_list
from bot.chat.mrkdwn import escape as e

__all__ = [
    "ANSWER_FAILED_NOTE",
    "CONNECT_SLACK",
    "HELP_LEAD",
    "INDEX_GONE",
    "NOTHING_TO_ASK",
    "NOT_IN_A_THREAD",
    "NO_FILES",
    "PARTNERS_NOT_ANSWERED",
    "PROMPTS_TITLE",
    "SUGGESTED_PROMPTS",
    "did_you_mean",
    "help_text",
    "internal_error",
    "mentions_required",
    "no_such_path",
]


HELP_LEAD = "Here's what I can do:\n• *Ask me anything* — I answer from this conversation's enabled indexes and cite my sources."


def help_text() -> str:
    """`help`: every command, by section, with how people say it (from the declarations)."""
    lines = [HELP_LEAD]
    for section in Section:
        declared = [d for d in DECLARATIONS if d.section == section]
        if declared:
            examples = "; ".join(" or ".join(f"“{x}”" for x in d.examples) for d in declared)
            lines.append(f"• *{section.value}*: {examples}.")
    return "\n".join(lines)


PROMPTS_TITLE = "Ask me about what your team knows"
SUGGESTED_PROMPTS = (
    ("What can you do?", "help"),
    ("What do you remember?", "what's in your memory?"),
    ("Which indexes can I use?", "list indexes"),
    ("Ask about the channel I'm in", "What has been decided in the channel I'm looking at?"),
)
CONNECT_SLACK = (
    "Slack is not configured, so Lore runs in your terminal. "
    "To connect Slack, set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (see README: Connect Slack)."
)
NO_FILES = (
    "I don't see any files on this message or on the message it replies to. "
    "Attach the files and mention me again, or reply “remember this” under the message that has them."
)
NOT_IN_A_THREAD = (
    "Say “remember this thread” as a reply in the thread you want me to save, and I'll keep "
    "every message in it, who wrote it and when, with a link back to it."
)
PARTNERS_NOT_ANSWERED = (
    "Lore answers only the people of the workspace it is installed in here "
    "(its admins have turned it off for other organisations in shared channels)."
)
NOTHING_TO_ASK = "What would you like to know? Ask me a question, or say “help”."
INDEX_GONE = "That index no longer exists."
ANSWER_FAILED_NOTE = "I couldn't answer this one; I've told the asker why."


def did_you_mean(said: str, examples: Sequence[str]) -> str:
    """A line that starts like a command but is none: the closest commands."""
    shown = " or ".join(f"“{e(x)}”" for x in examples)
    return f"I didn't understand “{e(said)}” as a command. Did you mean {shown}? Say “help” for all of them."


def no_such_path(paths: Sequence[str], where: str) -> str:
    """Files named in a shell line that are not there."""
    names = and_list([f"“{e(p)}”" for p in paths])
    return f"I can't find {names} (looking in {e(where)}). Name a file or folder that exists, like ./docs."


def mentions_required(required: bool, is_dm: bool) -> str:
    if is_dm:
        return "In a DM I always answer; this setting matters in channels."
    if required:
        return "From now on I answer here only when mentioned, also in threads I've answered in."
    return "From now on I also answer follow-ups in threads I've answered in here, without a mention."


def internal_error() -> str:
    return "Something went wrong on my side while handling that; nothing you sent was lost. Please try again in a moment."
