"""`GET /v1/feedback`: for the indexes the key may review (`Action.REVIEW`: a personal
index's owner, a shared index's creator, admins), the answers people found unhelpful and
the questions Lore could not answer, with the question, the answer, the documents cited
and what people said. Who gave the feedback is not shown. Answers given where the key may
not read them (someone's DM, a private channel: `storage.access.FEEDBACK`) are counted,
never shown."""

from __future__ import annotations

from datetime import datetime

from aiohttp import web
from pydantic import BaseModel, Field

from bot.api.auth import caller
from bot.api.bodies import query_params
from bot.api.routes import Reply, Route
from bot.api.state import state
from bot.app.actions import IndexReview
from storage.records import ReviewItem

TAG = "feedback"


class FeedbackQuery(BaseModel):
    index: str | None = Field(None, min_length=1, max_length=120, description="Only this index.")
    limit: int = Field(50, ge=1, le=200, description="At most this many answers, newest first.")


class CitedOut(BaseModel):
    name: str
    url: str | None = None
    index: str | None = None
    document_id: int | None = None


class VerdictOut(BaseModel):
    helpful: bool
    reason: str | None = Field(description="wrong, outdated, missing source or other.")
    comment: str | None
    at: datetime


class ReviewedAnswer(BaseModel):
    answer_id: int
    question: str
    answer: str | None = Field(description="The answer as given (absent for old answers).")
    asked_at: datetime
    cited: list[CitedOut]
    feedback: list[VerdictOut]


class IndexFeedback(BaseModel):
    index: str
    index_id: int
    scope: str
    unhelpful: list[ReviewedAnswer] = Field(description="Answers someone marked unhelpful.")
    unanswered: list[ReviewedAnswer] = Field(description="Questions Lore could not answer.")
    withheld_unhelpful: int = Field(
        0, description="Unhelpful answers given where this key may not read them (a DM, a private channel)."
    )
    withheld_unanswered: int = Field(0, description="Unanswered questions likewise counted, not shown.")


class FeedbackList(BaseModel):
    indexes: list[IndexFeedback] = Field(description="Only indexes with something to review.")


def _reviewed(item: ReviewItem) -> ReviewedAnswer:
    answer = item.answer
    cited = [
        CitedOut(
            name=str(c.get("name") or ""),
            url=c.get("url"),
            index=c.get("index"),
            document_id=c.get("document_id"),
        )
        for c in answer.cited
    ]
    return ReviewedAnswer(
        answer_id=answer.id,
        question=answer.question,
        answer=answer.text,
        asked_at=answer.created_at,
        cited=cited,
        feedback=[
            VerdictOut(helpful=f.helpful, reason=f.reason, comment=f.comment, at=f.updated_at)
            for f in item.feedback
        ],
    )


def _index(review: IndexReview) -> IndexFeedback:
    return IndexFeedback(
        index=review.index.name,
        index_id=review.index.id,
        scope=str(review.index.scope),
        unhelpful=[_reviewed(i) for i in review.unhelpful],
        unanswered=[_reviewed(i) for i in review.unanswered],
        withheld_unhelpful=review.withheld_unhelpful,
        withheld_unanswered=review.withheld_unanswered,
    )


async def list_feedback(request: web.Request) -> web.Response:
    query = query_params(request, FeedbackQuery)
    actions = state(request).services.actions
    reviews = await actions.feedback.review(caller(request).place, query.index, limit=query.limit)
    body = FeedbackList(indexes=[_index(r) for r in reviews])
    return web.json_response(body.model_dump(mode="json"))


ROUTES = [
    Route(
        "GET",
        "/v1/feedback",
        list_feedback,
        "Unhelpful answers and unanswered questions, by index, for the indexes this key may "
        "review, with the question, the answer, the documents cited and the comments.",
        TAG,
        {200: Reply("Feedback by index.", FeedbackList)},
        query=FeedbackQuery,
    ),
]
