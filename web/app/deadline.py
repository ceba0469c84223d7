"""Blocking calls under a deadline that ends the wait: a stuck thread is abandoned and counted.

Some clients have no async form (Apprise). Their call runs on a thread of its own; when the deadline
passes, or the awaiting task is cancelled, the caller goes on at once and the thread is left to
finish or hang on its own: counted once in ``recallops_abandoned_calls_total``, and in
``recallops_stuck_calls`` until it returns. At most ``MAX_ABANDONED`` may hang at once: past that a
new call is refused rather than add another thread.
"""

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from web.app.metrics import ABANDONED_CALLS, ABANDONED_CALLS_TOTAL

T = TypeVar("T")
MAX_ABANDONED = 32

_lock = threading.Lock()
_abandoned = 0


class TooManyStuckCalls(RuntimeError):
    pass


def abandoned() -> int:
    """Calls given up on whose threads have not returned yet."""
    return _abandoned


async def call_with_deadline(fn: Callable[[], T], *, timeout_s: float, what: str) -> T:
    """``fn()`` on its own thread; raises ``TimeoutError`` after ``timeout_s`` without waiting for it."""
    if _abandoned >= MAX_ABANDONED:
        raise TooManyStuckCalls(f"{_abandoned} earlier {what} calls are still stuck; not starting another")
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    state = {"finished": False, "abandoned": False}

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = fn()
        except BaseException as exc:  # handed to the caller, who decides
            error = exc
        with _lock:
            state["finished"] = True
            if state["abandoned"]:
                _release()
                return
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=target, name=f"call {what}", daemon=True).start()
    try:
        async with asyncio.timeout(timeout_s):
            return await asyncio.shield(future)
    except (TimeoutError, asyncio.CancelledError):
        with _lock:
            if not state["finished"]:
                state["abandoned"] = True
                _abandon()
        raise


def _abandon() -> None:
    global _abandoned
    _abandoned += 1
    ABANDONED_CALLS.set(_abandoned)
    ABANDONED_CALLS_TOTAL.inc()


def _release() -> None:
    global _abandoned
    _abandoned -= 1
    ABANDONED_CALLS.set(_abandoned)
