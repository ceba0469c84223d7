"""The gate's memory of recently checked tokens, which lets alert intake skip a database round per alert."""

import pytest
from starlette.requests import Request

from web.http import gate
from web.http.gate import RECENT_S, RECENT_TOKENS, RecentTokens
from web.http.security import Principal

SENDER = Principal(name="sender", kind="token", scopes=frozenset({"alerts:write"}))


def _request(authorization: str | None) -> Request:
    headers = [(b"authorization", authorization.encode())] if authorization else []
    return Request({"type": "http", "method": "POST", "path": "/api/v1/alerts", "headers": headers})


def test_a_remembered_token_is_known_by_its_secret_only() -> None:
    recent = RecentTokens()
    recent.remember(_request("Bearer rops_one"), SENDER)
    assert recent.get(_request("Bearer rops_one")) == SENDER
    assert recent.get(_request("bearer  rops_one ")) == SENDER
    assert recent.get(_request("Bearer rops_two")) is None
    assert recent.get(_request(None)) is None
    assert recent.get(_request("Basic rops_one")) is None


def test_a_remembered_token_is_forgotten_after_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(gate, "monotonic", lambda: now[0])
    recent = RecentTokens()
    recent.remember(_request("Bearer rops_one"), SENDER)
    now[0] += RECENT_S
    assert recent.get(_request("Bearer rops_one")) == SENDER
    now[0] += 0.001
    assert recent.get(_request("Bearer rops_one")) is None


def test_people_are_never_remembered() -> None:
    recent = RecentTokens()
    person = Principal(name="ana", kind="user", scopes=frozenset({"read"}), role="viewer")
    recent.remember(_request("Bearer rops_one"), person)
    recent.remember(_request(None), SENDER)
    assert recent.get(_request("Bearer rops_one")) is None


def test_the_oldest_token_makes_room() -> None:
    recent = RecentTokens()
    for i in range(RECENT_TOKENS + 1):
        recent.remember(_request(f"Bearer rops_{i}"), SENDER)
    assert recent.get(_request("Bearer rops_0")) is None
    assert recent.get(_request("Bearer rops_1")) == SENDER
    assert recent.get(_request(f"Bearer rops_{RECENT_TOKENS}")) == SENDER
