"""Free loopback ports and waiting on conditions with a deadline, never on fixed sleeps."""

import socket
import time
from collections.abc import Callable
from typing import TypeVar

import httpx

T = TypeVar("T")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(
    condition: Callable[[], T | None], *, timeout: float = 30.0, interval: float = 0.05, what: str = ""
) -> T:
    """Poll ``condition`` until it returns something truthy, or fail naming what never happened."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception as exc:
            last_error = exc
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what or condition!r}: {last_error!r}")


def http_ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False
