"""Blocking calls under a deadline that ends the wait: a stuck thread is abandoned and counted.

Some clients have no async form (Apprise). Each call runs on a thread of its own, never on a shared
pool, where one receiver's hung calls would queue every other receiver's behind them. When the
deadline passes, or the awaiting task is cancelled, the caller goes on at once and the thread is left
to finish or hang on its own: counted once in ``recallops_abandoned_calls_total``, and in
``recallops_stuck_calls`` until it returns.

Threads are counted per ``what`` (one Apprise channel): at most ``MAX_THREADS`` of one ``what`` are
alive at once, running or abandoned, each reserved under one lock before its thread starts. Past that
a new call of that ``what`` is refused rather than add another thread, so a receiver that hangs uses
up its own calls and nobody else's.
"""

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from web.app.metrics import ABANDONED_CALLS, ABANDONED_CALLS_TOTAL

T = TypeVar("T")
MAX_THREADS = 16  # per ``what``: above the delivery lane's default of 4 sends in flight per channel

_lock = threading.Lock()
_alive: Counter[str] = Counter()
_abandoned = 0


class TooManyStuckCalls(RuntimeError):
    pass


def abandoned() -> int:
    """Calls given up on whose threads have not returned yet."""
    return _abandoned


def _reserve(what: str) -> None:
    with _lock:
        if _alive[what] >= MAX_THREADS:
            raise TooManyStuckCalls(
                f"{_alive[what]} earlier calls to {what} are still running; not starting another"
            )
        _alive[what] += 1


def _returned(what: str) -> None:
    """Called under ``_lock`` when a call's thread is done (or never started)."""
    _alive[what] -= 1
    if not _alive[what]:
        del _alive[what]


async def call_with_deadline(fn: Callable[[], T], *, timeout_s: float, what: str) -> T:
    """``fn()`` on its own thread; raises ``TimeoutError`` after ``timeout_s`` without waiting for it."""
    _reserve(what)
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
            _returned(what)
            if state["abandoned"]:
                _release()
                return
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, result, error)

    try:
        threading.Thread(target=target, name=f"call {what}", daemon=True).start()
    except BaseException:
        with _lock:
            _returned(what)
        raise
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
