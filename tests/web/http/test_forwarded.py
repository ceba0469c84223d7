"""Forwarded headers over a real server: believed only from RECALLOPS_TRUSTED_PROXIES (none by default).

With nobody trusted, a guesser spraying names who makes up ``X-Forwarded-For`` on each try is still
counted at its real address; behind a configured proxy, the forwarded address is the one that counts."""

import re
from pathlib import Path

import httpx
import pytest

from incidents.auth.throttle import ADDRESS_LIMIT
from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def _attempts(server: LiveServer, count: int) -> list[int]:
    codes = []
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        for n in range(count):
            match = CSRF.search(browser.get("/signin").text)
            assert match
            response = browser.post(
                "/signin",
                data={"name": f"guess{n}", "password": "wrong password!", "csrf_token": match.group(1)},
                headers={"X-Forwarded-For": f"198.51.100.{n + 1}"},
            )
            codes.append(response.status_code)
    return codes


@pytest.mark.parametrize(("trusted", "last"), [("", 429), ("127.0.0.1", 401)])
def test_forwarded_for_counts_only_from_a_trusted_proxy(tmp_path: Path, trusted: str, last: int) -> None:
    env = {"RECALLOPS_TRUSTED_PROXIES": f'["{trusted}"]' if trusted else "[]"}
    server = LiveServer(tmp_path / "data", env=env)
    server.cli("db", "upgrade")
    server.start()
    try:
        codes = _attempts(server, ADDRESS_LIMIT + 1)
    finally:
        server.stop()
    assert codes[:ADDRESS_LIMIT] == [401] * ADDRESS_LIMIT
    assert codes[ADDRESS_LIMIT] == last
