"""The body gate: the credential is checked from headers before a byte of the body is read, and every
route's body is capped while it streams (in-process on SQLite and PostgreSQL)."""

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.web.http.routes.conftest import MAX_BODY, Api
from web.http.gate import DEFAULT_MAX_BYTES

CHUNK = b" " * 65536


@dataclass
class CountedBody:
    """A streamed body that counts how much of it the server pulled."""

    chunks: int
    sent: int = 0

    def __iter__(self) -> Iterator[bytes]:
        yield b'{"text": "'
        for _ in range(self.chunks):
            self.sent += 1
            yield CHUNK
        yield b'"}'


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    "path", ["/api/v1/ask", "/api/v1/incidents/INC-0001/resolve", "/api/v1/profile/refresh"]
)
def test_no_token_is_401_before_the_body_is_read(api: Api, path: str) -> None:
    body = CountedBody(chunks=4800)  # 300 MiB, were it read
    response = api.client.post(path, content=body, headers=JSON)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert body.sent == 0


@pytest.mark.parametrize("path", ["/api/v1/ask", "/api/v1/alerts/alertmanager"])
def test_a_wrong_token_is_401_before_the_body_is_read(api: Api, path: str) -> None:
    body = CountedBody(chunks=100)
    response = api.client.post(path, content=body, headers={**JSON, "Authorization": "Bearer nope"})
    assert response.status_code == 401 and body.sent == 0


def test_a_declared_length_over_the_limit_is_413_unread(api: Api) -> None:
    headers = {**JSON, **api.auth("automation"), "Content-Length": str(DEFAULT_MAX_BYTES + 1)}
    body = CountedBody(chunks=5)
    response = api.client.post("/api/v1/ask", content=body, headers=headers)
    assert response.status_code == 413
    assert f"over the {DEFAULT_MAX_BYTES}-byte limit" in response.json()["detail"]
    assert body.sent == 0


@pytest.mark.parametrize("path", ["/api/v1/ask", "/api/v1/alerts", "/incidents/INC-0001/acknowledge"])
def test_without_a_credential_the_size_limit_is_not_told(api: Api, path: str) -> None:
    """The credential is judged first: a caller without one learns nothing of the body limits."""
    headers = {**JSON, "Content-Length": str(DEFAULT_MAX_BYTES * 1000)}
    response = api.client.post(path, content=CountedBody(chunks=1), headers=headers, follow_redirects=False)
    assert response.status_code in (401, 303), response.text
    assert "limit" not in response.text


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/incidents", "GET"),
        ("PUT", "/incidents/INC-0001/resolve", "GET, POST"),
        ("PATCH", "/signin", "GET, POST"),
        ("DELETE", "/api/v1/incidents/INC-0001/resolution", "GET, PUT, PATCH"),
        ("POST", "/api/v1/drafts/1", "GET, PATCH"),
        ("GET", "/api/v1/alerts/alertmanager", "POST"),
    ],
)
@pytest.mark.parametrize("who", [None, "automation"])
def test_a_method_no_route_takes_is_405_listing_every_one_that_does(
    api: Api, method: str, path: str, allow: str, who: str | None
) -> None:
    """Signed in or not: a page does not send a wrong method to sign in, and Allow names the methods of
    every route at the path, not only the first one's."""
    headers = api.auth(who) if who else {}
    response = api.client.request(method, path, headers=headers, follow_redirects=False)
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == allow


def test_a_streamed_body_over_the_limit_is_413_on_every_json_route(api: Api) -> None:
    for path in ("/api/v1/ask", "/api/v1/incidents/INC-0001/resolve"):
        response = api.client.post(
            path, content=CountedBody(chunks=8), headers={**JSON, **api.auth("automation")}
        )
        assert response.status_code == 413, path
        assert response.json()["detail"] == f"body is over the {DEFAULT_MAX_BYTES}-byte limit"
    alerts = api.client.post(
        "/api/v1/alerts", content=CountedBody(chunks=2), headers={**JSON, **api.auth("sender")}
    )
    assert alerts.status_code == 413 and str(MAX_BODY) in alerts.json()["detail"]


def test_within_the_limit_the_route_answers_as_before(api: Api) -> None:
    response = api.post("/api/v1/ask", {"text": "checkout 502s after deploy"}, who="reader")
    assert response.status_code == 200, response.text
    assert api.post("/api/v1/ask", {"text": "x"}, who="sender").status_code == 403


def test_pages_need_a_session_before_their_form_is_read(api: Api) -> None:
    body = CountedBody(chunks=10)
    response = api.client.post(
        "/incidents/INC-0001/acknowledge",
        content=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert response.status_code == 303 and response.headers["location"] == "/signin?next=/incidents"
    assert body.sent == 0


def test_sign_in_is_open_but_capped(api: Api) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    huge = api.client.post("/signin", content=b"name=a&password=" + b"x" * 20_000, headers=form)
    assert huge.status_code == 413
    wrong = api.client.post("/signin", content=b"name=a&password=b", headers=form)
    assert wrong.status_code in (401, 403)  # judged on its form, not refused at the gate


def test_metrics_stay_open_until_a_token_is_set(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    assert api.client.get("/metrics").status_code == 200
    monkeypatch.setattr(api.client.app.state.container.settings.web, "metrics_token", "scrape-me")
    assert api.client.get("/metrics").status_code == 401
    assert api.client.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    scraped = api.client.get("/metrics", headers={"Authorization": "Bearer scrape-me"})
    assert scraped.status_code == 200 and "recallops_" in scraped.text


def test_a_token_sent_without_bearer_is_told_how_to_send_it(api: Api) -> None:
    """``Authorization: rops_...`` (the scheme forgotten) names the fix, on a write and on a read."""
    bare = {"Authorization": api.auth("automation")["Authorization"].removeprefix("Bearer ")}
    for response in (
        api.client.post("/api/v1/alerts", json={"title": "x"}, headers=bare),
        api.client.get("/api/v1/incidents", headers=bare),
    ):
        assert response.status_code == 401, response.text
        assert "needs the Bearer scheme: send 'Authorization: Bearer <token>'" in response.json()["detail"]
    assert "Bearer scheme" not in api.client.get("/api/v1/incidents").json()["detail"]
