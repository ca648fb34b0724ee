"""What an answer says about itself beside its text (`Notice`): that Lore is unsure, searched
by keyword only, found passages for another project, or could not use the model. Values, not
wording: each surface words them (`bot/chat/messages/answers.py`).

They start here because retrieval is the first stage with something to say."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class NoticeKind(enum.StrEnum):
    HEDGED = "hedged"
    """Answered, but Lore is not sure the documents answer exactly this."""
    KEYWORD_ONLY = "keyword_only"
    """The embedder failed: the passages were found by keyword alone."""
    ELSEWHERE = "elsewhere"
    """What was found answers for another project (`found`) than the question names (`asked`)."""
    NO_MODEL = "no_model"
    """A response mode that needs a model (`detail`) ran without one: the documents are quoted."""
    UNVERIFIED = "unverified"
    """The model's answer did not rest every claim on a cited passage: the documents are quoted."""
    MODEL_FAILED = "model_failed"
    """The model could not answer (`detail` says why): the documents are quoted."""
    MODEL_SILENT = "model_silent"
    """The model gave no answer (`detail` may say why): the documents are quoted."""
    MODEL_PROBLEM = "model_problem"
    """Something about the model's reply worth saying (`detail`: cut off at its length limit …)."""
    GENERAL_KNOWLEDGE = "general_knowledge"
    """The answer is the model's general knowledge, not the documents."""
    PARTLY_GENERAL = "partly_general"
    """Sentences the model marked "(general knowledge)" are not from the documents."""
    MODEL_FIRST = "model_first"
    """The model answered from its own knowledge first; only what cites a source rests on the documents."""


@dataclass(frozen=True)
class Notice:
    kind: NoticeKind
    detail: str = ""
    """The mode, the failure or the problem the kind speaks of; for `ELSEWHERE`, the project found."""
    asked: tuple[str, ...] = ()
    """For `ELSEWHERE`: the projects the question names."""


HEDGED = Notice(NoticeKind.HEDGED)
