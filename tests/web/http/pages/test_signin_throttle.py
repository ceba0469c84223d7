"""Sign-in throttling through the page: 429 after five failures, password unchecked, reset on success."""

from starlette.testclient import TestClient

from tests.web.http.pages.conftest import PASSWORD, Site
from web.http.throttle import SignInThrottle


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def _attempt(site: Site, name: str, password: str):  # type: ignore[no-untyped-def]
    data = {"name": name, "password": password, "csrf_token": site.csrf()}
    return site.client.post("/signin", data=data, follow_redirects=False)


def _fake_clock(site: Site) -> Clock:
    clock = Clock()
    site.client.app.state.signin_throttle = SignInThrottle(clock=clock)  # type: ignore[attr-defined]
    return clock


def test_after_five_failures_even_the_right_password_waits(site: Site) -> None:
    site.add_user("ana")
    clock = _fake_clock(site)
    for _ in range(5):
        assert _attempt(site, "ana", "wrong password!").status_code == 401
    refused = _attempt(site, "ana", PASSWORD)
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "900"
    assert "Too many failed sign-ins" in refused.text and "UTC (in 15 min)" in refused.text
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303  # not signed in
    clock.now += 900
    assert _attempt(site, "ana", PASSWORD).status_code == 303


def test_the_client_address_is_throttled_across_names(site: Site) -> None:
    site.add_user("ana")
    _fake_clock(site)
    for n in range(5):
        assert _attempt(site, f"guess{n}", "wrong password!").status_code == 401
    assert _attempt(site, "ana", PASSWORD).status_code == 429
    other = TestClient(site.client.app, client=("192.0.2.9", 50000))
    token = Site(other).csrf()
    response = other.post(
        "/signin", data={"name": "ana", "password": PASSWORD, "csrf_token": token}, follow_redirects=False
    )
    assert response.status_code == 303


def test_a_success_resets_the_count(site: Site) -> None:
    site.add_user("ana")
    _fake_clock(site)
    for _ in range(4):
        _attempt(site, "ana", "wrong password!")
    assert _attempt(site, "ana", PASSWORD).status_code == 303
    site.client.cookies.clear()
    for _ in range(4):
        assert _attempt(site, "ana", "wrong password!").status_code == 401
    assert _attempt(site, "ana", PASSWORD).status_code == 303
