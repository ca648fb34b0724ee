"""Help channels: answering unasked, the experts, and verified answers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from bot.chat.messages._words import and_list
from bot.chat.mrkdwn import escape as e

__all__ = [
    "ASK_EXPERT",
    "ASK_EXPERTS_INSTEAD",
    "ASK_EXPERT_LABEL",
    "HOME_VERIFIED",
    "HOME_VERIFIED_EDIT",
    "HOME_VERIFIED_EXPIRE",
    "HOME_VERIFIED_REMOVE",
    "HOME_VERIFIED_RENEW",
    "NOT_A_REPLY",
    "NOT_SURE_OFFER",
    "NO_QUESTION",
    "NO_VERIFIED",
    "SAVE_AS_ANSWER",
    "SAVE_AS_ANSWER_LABEL",
    "VERIFIED_FORM_LABEL",
    "VERIFIED_FORM_QUESTION",
    "VERIFIED_FORM_TITLE",
    "VERIFY",
    "VERIFY_LABEL",
    "escalated_line",
    "escalation",
    "experts_set",
    "help_mode",
    "mention",
    "offer_to_save",
    "verified_edited",
    "verified_expired",
    "verified_line",
    "verified_mark",
    "verified_removed",
    "verified_renewed",
    "verified_review_line",
    "verified_saved",
]


VERIFY = "Verify"
VERIFY_LABEL = "Mark this answer as the right one (experts)"
ASK_EXPERT = "Ask an expert"
ASK_EXPERT_LABEL = "Ask this channel's experts in the thread"
SAVE_AS_ANSWER = "Save as the answer"
SAVE_AS_ANSWER_LABEL = "Save your reply as the verified answer to this thread's question"
NOT_A_REPLY = (
    "“Save as the answer” works on a reply in a thread: the thread's first message is the "
    "question, the reply you pick is its answer."
)


A_TEAMMATE = "a teammate"
"""Who verified an answer, once they were forgotten (`lore forget-user`)."""


def verified_mark(question: str, verified_by: str, when: datetime, link: str | None) -> str:
    """Under a verified answer: whose it is, when, and its thread (each already made safe)."""
    verified_by = verified_by or A_TEAMMATE
    day = f"{when.day} {when:%b}" if when.year == datetime.now(UTC).year else f"{when.day} {when:%b %Y}"
    thread = f" · <{link}|the thread>" if link else ""
    return f"✅ Verified by {verified_by} on {day}, answering “{question}”{thread}"


def help_mode(on: bool, threshold: float) -> str:
    if on:
        return (
            "From now on I answer questions posted here without a mention, when I'm at least "
            f"{threshold:.0%} sure; otherwise I stay quiet (mention me to hear what I found). "
            "Mark a good reply with “Save as the answer” (or ✅) and I'll answer with it next time."
        )
    return "I no longer answer questions here unless I'm mentioned."


def experts_set(experts: Sequence[str]) -> str:
    if not experts:
        return "This channel has no experts now; I won't offer to ask anyone."
    return (
        f"Experts here: {and_list([mention(e) for e in experts])}. When I can't answer, I'll offer to ask "
        "them, and they can verify my answers."
    )


def mention(slack_id: str) -> str:
    """A Slack id stored as an expert, as a mention (a person or a user group)."""
    return f"<!subteam^{slack_id}>" if slack_id.startswith("S") else f"<@{slack_id}>"


def escalation(experts: Sequence[str], asking: str, question: str) -> str:
    """Lore asks the experts in the thread ("Ask an expert", pressed by `asking`)."""
    shown = e(question if len(question) <= 300 else question[:299] + "…")
    return (
        f"{' '.join(mention(x) for x in experts)}: <@{asking}> would like an expert's answer to “{shown}”; "
        "I may not have the right answer. Could one of you reply here? Your reply can become "
        "the verified answer."
    )


NOT_SURE_OFFER = "I'm not sure enough to answer this here. Want me to ask this channel's experts?"

"""To the asker alone, in a help channel with experts, when Lore found something but is not sure."""
ASK_EXPERTS_INSTEAD = "Want me to ask this channel's experts for the right answer?"

"""After 👎 on an answer, where the channel has experts."""


def offer_to_save(question: str) -> str:
    shown = e(question if len(question) <= 200 else question[:199] + "…")
    return f"Thanks for answering “{shown}”. Save your reply as the answer, so I can give it next time?"


def verified_saved(question: str, updated: bool = False) -> str:
    shown = e(question if len(question) <= 200 else question[:199] + "…")
    return (
        f"Saved as the verified answer to “{shown}”. I'll answer with it first when someone asks that again."
    )


NO_QUESTION = "(no question: whoever asked it was forgotten; edit it to write the question it answers)"


def verified_line(question: str, answer: str, by: str, flagged: str | None) -> str:
    if not question:
        question = NO_QUESTION
    q = e(question if len(question) <= 150 else question[:149] + "…")
    a = e(answer if len(answer) <= 200 else answer[:199] + "…")
    state = f" _(awaiting review: {e(flagged)})_" if flagged else ""
    return f"*“{q}”*{state}\n{a}\n_verified by {e(by or A_TEAMMATE)}_"


def verified_removed(question: str) -> str:
    return f"Removed the verified answer to “{e(question[:150])}”."


def verified_expired(question: str) -> str:
    return f"Set aside for review: the answer to “{e(question[:150])}” won't be given until an expert verifies it again."


def verified_renewed(question: str) -> str:
    return f"Verified again: the answer to “{e(question[:150])}”."


def verified_edited(question: str) -> str:
    return f"Updated the verified answer to “{e(question[:150])}”."


def escalated_line(question: str, when: str) -> str:
    return f"“{e(question[:200])}”, asked of the experts {when}"


def verified_review_line(question: str, by: str, when: str, flagged: str | None) -> str:
    state = f" — awaiting review ({e(flagged)})" if flagged else ""
    return f"“{e(question[:200])}”, verified by {e(by or A_TEAMMATE)} {when}{state}"


NO_VERIFIED = "No verified answers here yet. Mark a good reply in a thread with “Save as the answer”."
HOME_VERIFIED = "Verified answers"
HOME_VERIFIED_EDIT = "Edit"
HOME_VERIFIED_EXPIRE = "Set aside for review"
HOME_VERIFIED_RENEW = "Verify again"
HOME_VERIFIED_REMOVE = "Remove"
VERIFIED_FORM_TITLE = "Edit the answer"
VERIFIED_FORM_QUESTION = "The question it answers"
VERIFIED_FORM_LABEL = "The verified answer"
