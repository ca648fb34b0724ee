"""Adding documents: pages, files and Slack threads saved to an index, and why one was not."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat.messages._words import and_list, plural
from bot.chat.mrkdwn import escape as e

__all__ = [
    "NOT_YOUR_CONVERSATION",
    "PICK_ANOTHER",
    "PICK_ANOTHER_LABEL",
    "PICK_LABEL",
    "added",
    "already",
    "dm_files_added",
    "download_failed",
    "failed_file",
    "fetching",
    "foreign_file_refused",
    "kept_private",
    "login_page",
    "shortcut_saved",
    "thread_partly_read",
    "thread_saved",
    "thread_unchanged",
    "thread_unreadable",
    "too_big",
    "updated",
]


def added(name: str, index: str, chunks: int) -> str:
    return f"Added *{e(name)}* to the *{e(index)}* index ({plural(chunks, 'passage')}). Ask me about it any time."


def updated(name: str, index: str, chunks: int) -> str:
    return (
        f"Updated *{e(name)}* in the *{e(index)}* index with its new content ({plural(chunks, 'passage')})."
    )


def already(name: str, index: str) -> str:
    return f"*{e(name)}* is already in memory (the *{e(index)}* index); nothing to do."


def thread_saved(index: str, count: int, authors: Sequence[str], chunks: int, *, updated: bool) -> str:
    who = and_list(list(authors[:5]) + ([f"{len(authors) - 5} more"] if len(authors) > 5 else []))
    what = f"{plural(count, 'message')} from {who}" if who else plural(count, "message")
    if updated:
        return f"Updated this thread in the *{index}* index: now {what} ({plural(chunks, 'passage')})."
    return f"Saved this thread to the *{index}* index: {what} ({plural(chunks, 'passage')}). Ask me about it any time; I'll link back here."


def kept_private(index: str, default: str) -> str:
    """A private channel's thread went to its own index, not the conversation's default."""
    return (
        f"This channel is private, so I kept it in its own *{e(index)}* index, which only its members "
        f"can read, not in *{e(default)}*."
    )


def shortcut_saved(index: str, what: str, count: int, unchanged: bool) -> str:
    if unchanged:
        return f"That thread is already in the *{index}* index ({what}) as it is now."
    return f"Saved that thread ({plural(count, 'message')}) to the *{index}* index ({what}). Only you can see this note."


PICK_ANOTHER = "Save it to another index"
PICK_ANOTHER_LABEL = "Choose another index to save this thread to"
PICK_LABEL = "Save the thread to"
NOT_YOUR_CONVERSATION = (
    "I can only save messages from conversations you are in: a channel or group DM you are a "
    "member of, or your DM with me."
)


def thread_partly_read(error: str) -> str:
    """The shortcut saved the message, but not the rest of its thread."""
    return (
        f"I couldn't read the rest of its thread (Slack said {e(error)}), so I kept the message alone; "
        "invite me to the channel to save whole threads."
    )


def thread_unreadable(error: str) -> str:
    return f"I couldn't read this thread: Slack said {error}. Check that I'm a member of this channel."


def thread_unchanged(index: str) -> str:
    return f"This thread is already in the *{index}* index as it is now; nothing to do."


def dm_files_added(names: Sequence[str]) -> str:
    return f"I added {and_list([e(n) for n in names])} to your personal index. Ask me about {'it' if len(names) == 1 else 'them'} here any time."


def failed_file(reason: str) -> str:
    """A plain-text reason (an error's) as a sentence, escaped."""
    reason = e(reason)
    return reason[0].upper() + reason[1:] + ("" if reason.endswith((".", "?", "!")) else ".")


def too_big(name: str, size_mb: float, limit_mb: int) -> str:
    return f"I couldn't read {name}: it is {size_mb:.0f} MB; the limit is {limit_mb} MB."


def login_page(name: str) -> str:
    return (
        f"I couldn't download {name}: Slack sent a sign-in page instead of the file. "
        "Check that I have the files:read scope and am a member of this channel."
    )


def download_failed(name: str, detail: str) -> str:
    return f"I couldn't download {name}: {detail}."


def foreign_file_refused(name: str, host: str, reason: str) -> str:
    """A shared file whose link is not on Slack: Slack's credentials never go there."""
    return (
        f"I couldn't download {name}: it is stored at {host}, not on Slack, and I fetch such links "
        f"only as public web pages, never with Slack credentials: {reason}."
    )


def fetching(url: str) -> str:
    return f"Reading {e(url)}…"
