"""`GET /v1/feedback`: unhelpful answers and unanswered questions by index, for the indexes
the key may review, with the question, the answer, the documents cited and the comments."""

from __future__ import annotations

import pytest

from storage.repositories.answers import AnswerEntry, AnswerRepository
from storage.repositories.api_keys import ApiKeyRepository
from storage.values import FeedbackReason
from tests.api.conftest import TENANT, LoreApi
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.asyncio(loop_scope="module")


CHANNELS = {"general": ("CPUB", False), "secret-plans": ("CPRIV", True)}


def answer(api: LoreApi, question: str, index: str, *, where: str = "general", **extra: object) -> int:
    """An answer from `index`, given in a channel (`where`) or in ada's DM (`dm`)."""
    ref = api.indexes[index]
    directory = api.services.directory
    if where == "dm":
        ada = directory.ensure_user(TENANT, "UADA", "ada")
        conversation, extra = directory.dm_conversation(ada), {"user_id": ada.id, **extra}
    else:
        external_id, private = CHANNELS[where]
        conversation = directory.channel_conversation(
            directory.ensure_channel(TENANT, external_id, where, is_private=private)
        )
    values: dict[str, object] = {"mode": "rag_only", "fallback": None, "abstained": False, "cited": []}
    values |= {"conversation_id": conversation.id}
    entry = AnswerEntry(tenant_id=TENANT, question=question, searched=[ref.id], **{**values, **extra})  # type: ignore[arg-type]
    return AnswerRepository(api.services.db).record(entry)


async def test_feedback_by_index_for_those_who_look_after_it(api: LoreApi) -> None:
    handbook = await api.create_index("fb-handbook")  # created by the service key: its owner
    api.indexes["fb-handbook"] = api.services.indexes.get(handbook["id"])
    directory, answers = api.services.directory, AnswerRepository(api.services.db)
    bea = directory.ensure_user(TENANT, "UBEA", "bea")
    cited = [
        {
            "n": 1,
            "name": "deploy.md",
            "url": None,
            "index": "fb-handbook",
            "index_id": handbook["id"],
            "document_id": 3,
        }
    ]
    wrong = answer(api, "how do we deploy?", "fb-handbook", text="With FTP [1]", cited=cited)
    answers.set_feedback(
        wrong, TENANT, bea.id, False, reason=FeedbackReason.OUTDATED, comment="We use CI now."
    )
    liked = answer(api, "who approves deploys?", "fb-handbook", text="Ops [1]", cited=cited)
    answers.set_feedback(liked, TENANT, bea.id, True)
    unanswered = answer(
        api, "what is the VPN password?", "fb-handbook", text="I couldn't find", abstained=True
    )
    secret = answer(api, "when is the rename?", "secret-plans", where="secret-plans")
    answers.set_feedback(secret, TENANT, bea.id, False)
    public = answer(api, "when is standup?", "general")
    answers.set_feedback(public, TENANT, bea.id, False, comment="It moved again.")
    mine = answer(api, "where is the key?", "personal", where="dm")
    ada = directory.ensure_user(TENANT, "UADA", "ada")
    answers.set_feedback(mine, TENANT, ada.id, False, reason=FeedbackReason.WRONG)

    status, body = await api.call("GET", "/v1/feedback")
    assert status == 200
    [index] = [i for i in body["indexes"] if i["index"] == "fb-handbook"]
    assert {i["index"] for i in body["indexes"]} == {"fb-handbook"}  # not a channel's, not ada's
    [bad] = index["unhelpful"]
    assert (
        bad["answer_id"] == wrong
        and bad["question"] == "how do we deploy?"
        and bad["answer"] == "With FTP [1]"
    )
    assert bad["cited"] == [{"name": "deploy.md", "url": None, "index": "fb-handbook", "document_id": 3}]
    [verdict] = bad["feedback"]
    assert (verdict["helpful"], verdict["reason"], verdict["comment"]) == (
        False,
        "outdated",
        "We use CI now.",
    )
    assert "user" not in verdict and "user_id" not in verdict
    assert [q["answer_id"] for q in index["unanswered"]] == [unanswered]

    status, body = await api.call("GET", "/v1/feedback", key="ada")  # ada's key: her own index only
    assert [(i["index"], [a["answer_id"] for a in i["unhelpful"]]) for i in body["indexes"]] == [
        ("personal", [mine])
    ]
    status, body = await api.call("GET", "/v1/feedback", key="ada", params={"index": "fb-handbook"})
    assert status == 403, body
    assert "fb-handbook" in assert_error(body, "permission_error")
    status, body = await api.call("GET", "/v1/feedback", params={"index": "no-such-index"})
    assert status == 404 and assert_error(body, "not_found_error")
    status, body = await api.call("GET", "/v1/feedback", key="other_tenant")
    assert (status, body) == (200, {"indexes": []})

    boss = directory.ensure_user(TENANT, "UBOSS", "boss", is_admin=True)
    admin_key = ApiKeyRepository(api.services.db).create(TENANT, "boss", user_id=boss.id).secret
    status, body = await api.call("GET", "/v1/feedback", key=admin_key, params={"limit": "10"})
    assert {i["index"] for i in body["indexes"]} == {"fb-handbook", "general"}  # a private channel's never
    status, body = await api.call("GET", "/v1/feedback", params={"limit": "0"})
    assert status == 400


async def test_the_route_is_in_the_openapi_document(api: LoreApi) -> None:
    status, document = await api.call("GET", "/openapi.json", key=None)
    assert status == 200
    operation = document["paths"]["/v1/feedback"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {"index", "limit"}
    assert "200" in operation["responses"]


async def test_a_review_never_shows_what_a_document_restricted_from_the_reviewer_said(api: LoreApi) -> None:
    """An answer that drew on a page its source lets only finance read keeps its question and
    verdicts in a review, not its text nor that page's citation, for a reviewer outside finance."""
    from storage.document_access import DocumentAccess
    from storage.records import NewChunk
    from storage.repositories.documents import DocumentRepository
    from tests.storage.test_repositories import new_doc

    review = await api.create_index("fb-restricted")
    index = api.services.indexes.get(review["id"])
    api.indexes["fb-restricted"] = index
    documents = DocumentRepository(api.services.db)
    payroll, _ = documents.create_pending(
        new_doc(index.id, key="payroll.md", access=DocumentAccess.restricted({"9:group:finance"})),
        [NewChunk(0, "", "The payroll cutoff is the 23rd.")],
    )
    documents.mark_ready(payroll.id)
    cited = [
        {"n": 1, "name": "payroll.md", "url": "https://wiki/payroll", "index": "fb-restricted",
         "index_id": index.id, "document_id": payroll.id},
        {"n": 2, "name": "calendar.md", "url": None, "index": "fb-restricted", "index_id": index.id,
         "document_id": payroll.id + 1000},
    ]  # fmt: skip
    said = answer(
        api,
        "when is the payroll cutoff?",
        "fb-restricted",
        text="The 23rd [1]",
        cited=cited,
        restricted=[payroll.id],
    )
    bea = api.services.directory.ensure_user(TENANT, "UBEA2", "bea")
    AnswerRepository(api.services.db).set_feedback(said, TENANT, bea.id, False, comment="Check it")
    status, body = await api.call("GET", "/v1/feedback", params={"index": "fb-restricted"})
    assert status == 200
    [item] = body["indexes"][0]["unhelpful"]
    assert item["question"] == "when is the payroll cutoff?" and item["feedback"][0]["comment"] == "Check it"
    assert item["answer"] is None and "23rd" not in str(body) and "payroll.md" not in str(body)
    assert [c["name"] for c in item["cited"]] == ["calendar.md"]
