"""One retry policy for the HTTP requests Lore makes to other sites and services (the
crawler, the connectors): an answer whose status the caller names (429, 503 …) is tried again
after the wait its `Retry-After` asks for, else after 1, 2, 4 … seconds, at most `retries`
times; a wait longer than `max_wait` gives up at once (tenacity runs the loop). A client with
rules of its own (GitHub's rate-limit resets, Notion's separate budget for 429s) passes any
`Backoff` instead: it is asked once per failed attempt, in order, so it may count."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Protocol, TypeVar

from tenacity import AsyncRetrying, RetryCallState

from knowledge.sources.robots import retry_after
from knowledge.sources.web import HttpStatus

T = TypeVar("T")


class Backoff(Protocol):
    def wait(self, exc: BaseException | None, attempt: int) -> float | None:
        """Seconds to wait after `exc` on the `attempt`th try (from 1), or None to give up."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    statuses: Collection[int]
    retries: int
    max_wait: float

    def wait(self, exc: BaseException | None, attempt: int) -> float | None:
        """Seconds to wait after `exc` on the `attempt`th try (from 1), or None to give up."""
        if not isinstance(exc, HttpStatus) or exc.status not in self.statuses or attempt > self.retries:
            return None
        asked = retry_after(exc.retry_after)
        wait = 2.0 ** (attempt - 1) if asked is None else asked
        return wait if wait <= self.max_wait else None


async def retried(
    call: Callable[[], Awaitable[T]],
    policy: Backoff,
    *,
    sleep: Callable[[float], Awaitable[object]],
    before_wait: Callable[[HttpStatus, float], Awaitable[None]],
) -> T:
    """`call()`'s result, tried again as `policy` says; the last error is raised as it came.
    `before_wait` hears of each wait before `sleep` waits it."""
    decided: dict[int, float | None] = {}

    def wait_of(state: RetryCallState) -> float | None:
        if state.attempt_number not in decided:  # tenacity asks three times per attempt
            exc = state.outcome.exception() if state.outcome else None
            decided[state.attempt_number] = policy.wait(exc, state.attempt_number)
        return decided[state.attempt_number]

    async def announce(state: RetryCallState) -> None:
        exc, wait = state.outcome.exception() if state.outcome else None, wait_of(state)
        assert isinstance(exc, HttpStatus) and wait is not None  # only what is retried is waited for
        await before_wait(exc, wait)

    async def pause(seconds: float) -> None:
        await sleep(seconds)

    retrying = AsyncRetrying(
        retry=lambda state: wait_of(state) is not None,
        wait=lambda state: wait_of(state) or 0.0,
        sleep=pause,
        before_sleep=announce,
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity returns the result or raises the last error")
