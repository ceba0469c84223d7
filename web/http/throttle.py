"""Sign-in throttling: after too many failed sign-ins for one name or one client address, wait.

Counts live in this process only (a restart forgets them, and each server process counts on its
own), which is enough to turn password guessing from thousands of tries a minute into a handful per
quarter hour. An attempt is counted *before* its password is checked, under a lock, so parallel
guesses cannot slip past the limit while the (slow) hash is verified; a success clears the counts of
its name and address. A refused attempt is not counted, so the wait never grows by trying again.
"""

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

FAILURE_LIMIT = 5
WINDOW_S = 15 * 60.0
MAX_KEYS = 10_000  # bounds memory when names or addresses are sprayed


def keys_for(name: str, address: str | None) -> list[str]:
    """What an attempt is counted against: the name (case-folded) and the client address."""
    keys = [f"name:{name.casefold()}"] if name else []
    return keys + ([f"addr:{address}"] if address else [])


@dataclass
class SignInThrottle:
    limit: int = FAILURE_LIMIT
    window_s: float = WINDOW_S
    clock: Callable[[], float] = time.monotonic
    max_keys: int = MAX_KEYS
    _attempts: dict[str, deque[float]] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def admit(self, keys: Iterable[str]) -> float | None:
        """``None`` and the attempt counted, or the seconds to wait (nothing counted) when any key is over."""
        keys = list(keys)
        with self._lock:
            now = self.clock()
            wait = max((self._wait(key, now) for key in keys), default=0.0)
            if wait > 0:
                return wait
            for key in keys:
                self._attempts.setdefault(key, deque()).append(now)
            if len(self._attempts) > self.max_keys:
                self._sweep(now)
            return None

    def succeeded(self, keys: Iterable[str]) -> None:
        """A correct password: every counted attempt of these keys is forgiven."""
        with self._lock:
            for key in keys:
                self._attempts.pop(key, None)

    def _wait(self, key: str, now: float) -> float:
        attempts = self._attempts.get(key)
        if not attempts:
            return 0.0
        while attempts and attempts[0] <= now - self.window_s:
            attempts.popleft()
        if not attempts:
            del self._attempts[key]
            return 0.0
        if len(attempts) < self.limit:
            return 0.0
        return attempts[-self.limit] + self.window_s - now

    def _sweep(self, now: float) -> None:
        """Drop expired keys; if still too many, forget the oldest ones (insertion order)."""
        for key in [k for k, a in self._attempts.items() if not a or a[-1] <= now - self.window_s]:
            del self._attempts[key]
        while len(self._attempts) > self.max_keys:
            del self._attempts[next(iter(self._attempts))]
