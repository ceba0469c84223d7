"""Keeping a lease alive while its work runs, so leases can be short and a dead worker's work moves fast.

Every claim the worker makes (a briefing job, a batch of memory outbox rows) carries a lease of
``lease_s`` seconds. While the work runs, a heartbeat renews it every third of that, on a thread of
its own, so neither a slow model call nor a blocked event loop lets a live lease lapse. A worker that
is killed stops renewing, and another replica claims the work once the lease runs out: the takeover
time is at most one lease plus one worker poll.

A renewal that finds the lease gone (the worker stalled past the expiry and another took over) stops
the heartbeat and marks it ``lost``; the work's own completion is fenced by the claim, so the result
of a lost claim is dropped rather than stored twice.
"""

import logging
import threading
from collections.abc import Callable
from types import TracebackType

log = logging.getLogger(__name__)

RENEWALS_PER_LEASE = 3


class Heartbeat:
    """Call ``renew`` every ``lease_s / 3`` until the block ends or ``renew`` reports the lease lost."""

    def __init__(self, renew: Callable[[], bool], *, lease_s: float, what: str) -> None:
        self._renew = renew
        self._interval_s = lease_s / RENEWALS_PER_LEASE
        self._what = what
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease {what}", daemon=True)
        self.lost = False

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                held = self._renew()
            except Exception:
                # The database may be back before the lease runs out; keep trying until then.
                log.warning("lease renewal failed", extra={"lease": self._what}, exc_info=True)
                continue
            if not held:
                self.lost = True
                log.warning("lease lost: another worker took the work over", extra={"lease": self._what})
                return
