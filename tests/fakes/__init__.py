"""Loopback fakes of the services Lore talks to, and the harness they share.

- `openai_server.FakeOpenAI`: an OpenAI-compatible server (chat completions, embeddings,
  models) answering from a script of replies.
- `slack_server.FakeSlack`: the Slack Web API (`/api/<method>`) plus private file downloads.

Both are aiohttp apps bound to 127.0.0.1 on a port the OS picks. Run one inside the test's
event loop with `async with`, or on a private loop in a daemon thread with plain `with` (or
`start_in_thread()` / `stop()`) when the code under test is synchronous or a subprocess.

This module holds the harness: `LoopbackServer` (start, stop, threads) and `Recorder` (a log
that tests can wait on from any thread or event loop, without polling).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from types import TracebackType
from typing import Generic, Self, TypeVar

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

__all__ = ["LoopbackServer", "Recorder", "copy_headers"]

T = TypeVar("T")

_HOST = "127.0.0.1"
_THREAD_TIMEOUT = 10.0


def copy_headers(request: web.Request) -> Mapping[str, str]:
    """A request's headers, kept after the request ends; lookups ignore case."""
    return CIMultiDictProxy(CIMultiDict(request.headers))


class Recorder(Generic[T]):
    """An append-only, thread-safe log that readers can wait on from any thread or loop.

    `describe` names an entry in timeout messages, e.g. a Slack call by its method.
    """

    def __init__(self, describe: Callable[[T], str] = repr) -> None:
        self._items: list[T] = []
        self._describe = describe
        self._condition = threading.Condition()
        self._wakers: set[Callable[[], object]] = set()

    def append(self, item: T) -> None:
        with self._condition:
            self._items.append(item)
            self._condition.notify_all()
            wakers = list(self._wakers)
        for wake in wakers:
            wake()

    def snapshot(self) -> list[T]:
        with self._condition:
            return list(self._items)

    async def wait_for(
        self,
        match: Callable[[T], bool],
        count: int,
        timeout: float,  # noqa: ASYNC109 - on expiry, the error lists what did arrive
        what: str,
    ) -> list[T]:
        """Return the matching entries once there are `count`; raise TimeoutError otherwise."""
        loop = asyncio.get_running_loop()
        event = asyncio.Event()

        def wake() -> None:
            # The writer may be on another thread, and this loop may already be gone.
            with suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

        with self._condition:
            self._wakers.add(wake)
        try:
            async with asyncio.timeout(timeout):
                while len(found := [x for x in self.snapshot() if match(x)]) < count:
                    await event.wait()
                    event.clear()
                return found
        except TimeoutError:
            raise self._shortfall(count, what) from None
        finally:
            with self._condition:
                self._wakers.discard(wake)

    def wait_for_sync(self, match: Callable[[T], bool], count: int, timeout: float, what: str) -> list[T]:
        """Blocking twin of `wait_for`, for tests that run the fake in a thread."""
        with self._condition:
            if self._condition.wait_for(lambda: sum(map(match, self._items)) >= count, timeout):
                return [x for x in self._items if match(x)]
        raise self._shortfall(count, what)

    def _shortfall(self, count: int, what: str) -> TimeoutError:
        seen = [self._describe(x) for x in self.snapshot()]
        return TimeoutError(f"expected {count} {what}; everything so far: {seen}")


class LoopbackServer:
    """Serves the app from `build_app()` on 127.0.0.1 with an OS-assigned port.

    Subclasses build the app; this class owns the lifecycle. `pause()` is a sleep that ends
    early when the server shuts down, so scripted delays never hold up a test's teardown.
    """

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._closing: asyncio.Event | None = None
        self._thread: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None

    def build_app(self) -> web.Application:
        raise NotImplementedError

    @property
    def port(self) -> int:
        if self._port is None:
            name = type(self).__name__
            raise RuntimeError(f"{name} is not running; use `async with {name}()` or `with`.")
        return self._port

    @property
    def base_url(self) -> str:
        """Scheme, host and port, without a trailing slash: 'http://127.0.0.1:PORT'."""
        return f"http://{_HOST}:{self.port}"

    async def start(self) -> None:
        self._closing = asyncio.Event()
        runner = web.AppRunner(
            self.build_app(),
            handle_signals=False,
            access_log=None,
            shutdown_timeout=1.0,
            # A client that hangs up (say, after its own timeout) cancels the handler.
            handler_cancellation=True,
        )
        await runner.setup()
        await web.TCPSite(runner, _HOST, 0).start()
        self._runner = runner
        self._port = runner.addresses[0][1]

    async def close(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
        self._runner = None
        self._port = None

    async def pause(self, seconds: float) -> None:
        """Sleep for `seconds`, or less if the server is shutting down."""
        assert self._closing is not None
        with suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def start_in_thread(self) -> Self:
        """Run the server on its own event loop in a daemon thread; returns once it listens."""
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__} is already running in a thread.")
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name=f"{type(self).__name__}-loop", daemon=True)
        thread.start()
        self._thread = (loop, thread)
        try:
            asyncio.run_coroutine_threadsafe(self.start(), loop).result(_THREAD_TIMEOUT)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Shut down a server started with `start_in_thread()` and join its thread."""
        if self._thread is None:
            return
        loop, thread = self._thread
        self._thread = None
        try:
            asyncio.run_coroutine_threadsafe(self.close(), loop).result(_THREAD_TIMEOUT)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(_THREAD_TIMEOUT)
            loop.close()

    def __enter__(self) -> Self:
        return self.start_in_thread()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
