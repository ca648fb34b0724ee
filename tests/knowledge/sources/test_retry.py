"""The one retry policy of the crawler and the connectors: Retry-After honoured, else 1, 2,
4 … seconds; a status not named, another error, or a wait past the limit is not retried."""

from __future__ import annotations

import pytest

from knowledge.sources.retry import Backoff, RetryPolicy, retried
from knowledge.sources.web import FetchError, HttpStatus

POLICY = RetryPolicy(frozenset({429, 503}), retries=3, max_wait=60.0)


class Service:
    """Answers with each of `answers` in turn: an exception is raised, anything else returned."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.calls = 0
        self.slept: list[float] = []
        self.heard: list[tuple[int, float]] = []

    async def call(self) -> object:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    async def before_wait(self, exc: HttpStatus, wait: float) -> None:
        self.heard.append((exc.status, wait))

    async def run(self, policy: Backoff = POLICY) -> object:
        return await retried(self.call, policy, sleep=self.sleep, before_wait=self.before_wait)


async def test_a_busy_answer_is_tried_again_after_the_wait_it_asks_for() -> None:
    service = Service(HttpStatus(429, "Too Many", "7"), HttpStatus(503, "Busy", None), "page")
    assert await service.run() == "page"
    assert service.calls == 3
    assert service.slept == [7.0, 2.0], "Retry-After, then the second backoff step"
    assert service.heard == [(429, 7.0), (503, 2.0)], "each wait is announced before it is waited"


async def test_it_gives_up_after_its_retries_with_the_last_error() -> None:
    service = Service(*(HttpStatus(503, "Busy", None) for _ in range(5)))
    with pytest.raises(HttpStatus) as raised:
        await service.run()
    assert raised.value.status == 503 and service.calls == 4 and service.slept == [1.0, 2.0, 4.0]


async def test_a_wait_past_the_limit_gives_up_at_once() -> None:
    service = Service(HttpStatus(429, "Too Many", "600"), "page")
    with pytest.raises(HttpStatus):
        await service.run()
    assert service.calls == 1 and service.slept == [] and service.heard == []


@pytest.mark.parametrize("error", [HttpStatus(404, "Not Found", "1"), FetchError("connection reset")])
async def test_other_answers_and_errors_are_not_retried(error: Exception) -> None:
    service = Service(error, "page")
    with pytest.raises(type(error)):
        await service.run()
    assert service.calls == 1 and service.slept == []


class Counting:
    """A `Backoff` that counts what it was asked: 429s may be waited for twice, 503s once,
    each budget apart (as Notion's client keeps them)."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.spent = {429: 0, 503: 0}

    def wait(self, exc: BaseException | None, attempt: int) -> float | None:
        assert isinstance(exc, HttpStatus)
        self.asked.append(attempt)
        self.spent[exc.status] += 1
        return 0.5 if self.spent[exc.status] <= {429: 2, 503: 1}[exc.status] else None


async def test_a_backoff_is_asked_once_per_failed_attempt_so_it_may_count() -> None:
    busy, limited = HttpStatus(503, "Busy", None), HttpStatus(429, "Too Many", None)
    service, backoff = Service(limited, busy, limited, busy), Counting()
    with pytest.raises(HttpStatus) as raised:
        await service.run(backoff)
    assert backoff.asked == [1, 2, 3, 4], "once each, in order"
    assert raised.value is busy and service.calls == 4 and service.slept == [0.5, 0.5, 0.5]
