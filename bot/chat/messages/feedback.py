"""Feedback on answers (👍/👎) and its review by the people who look after the indexes."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat.messages._words import and_list, plural
from bot.chat.mrkdwn import escape as e
from storage.access import Given

__all__ = [
    "FEEDBACK_COMMENT_LABEL",
    "FEEDBACK_FORM_TITLE",
    "FEEDBACK_REASONS",
    "NO_FEEDBACK",
    "REVIEW_LEAD",
    "feedback_thanks",
    "feedback_withheld",
]


def feedback_thanks(helpful: bool, indexes: Sequence[str], given: Given) -> str:
    """After 👍/👎: who will see it (never a promise of learning that does not happen)."""
    lead = "Thanks! Glad it helped." if helpful else "Thanks for telling me."
    if given == Given.DM:
        return (
            f"{lead} It stays with you: say “show feedback” in your DM with me to see it. "
            "Workspace admins only see that an answer was judged, never what it said."
        )
    if given == Given.PRIVATE_CHANNEL:
        return (
            f"{lead} Members of this channel who look after its indexes will see it (“show feedback” "
            "here); workspace admins only see that an answer was judged."
        )
    if not indexes:
        return f"{lead} Workspace admins will see it (“show feedback”)."
    names = and_list([f"*{e(name)}*" for name in indexes])
    return (
        f"{lead} The people who look after the {names} {'index' if len(indexes) == 1 else 'indexes'} "
        "and workspace admins will see it (“show feedback”)."
    )


FEEDBACK_FORM_TITLE = "What went wrong?"
FEEDBACK_REASONS = {
    "wrong": "It's wrong",
    "outdated": "It's out of date",
    "missing source": "A source is missing",
    "other": "Something else",
}
FEEDBACK_COMMENT_LABEL = "Tell the people who look after these documents more (optional)"
NO_FEEDBACK = (
    "Nothing to review: no answer from the indexes you look after was marked unhelpful, "
    "none of their questions went unanswered or to the experts, and they keep no verified answer."
)


def feedback_withheld(count: int) -> str:
    """Answers a reviewer may count but not read (given in someone's DM or a private channel)."""
    was, them = ("was", "it") if count == 1 else ("were", "them")
    return (
        f"{plural(count, 'more answer')} {was} given where you can't read {them} "
        "(someone's DM, or a private channel you are not in here): counted, not shown."
    )


REVIEW_LEAD = (
    "Answers that didn't help, questions I couldn't answer, what was asked of the experts and "
    "the verified answers, by index (newest first):"
)
