"""Bad input at the edge is a clear 4xx on SQLite and PostgreSQL, never a 500: NUL in ids and filters,
numbers past what a column holds, start times in year 9999 or before 1970."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.incidents.alerts.captures import grafana
from tests.web.http.routes.conftest import Api
from tests.web.http.routes.test_memory import import_, jsonl, post_mortem

NUL_PATHS = [
    "/api/v1/incidents/INC%00-1",
    "/api/v1/incidents/INC%00-1/briefing",
    "/api/v1/incidents/INC%00-1/resolution",
    "/api/v1/incidents/INC%00-1/corrections",
    "/api/v1/incidents/INC%00-1/memory",
    "/api/v1/incidents?service=check%00out",
    "/api/v1/profile?service=check%00out",
    "/api/v1/memory/search?q=pool%00",
]


@pytest.mark.parametrize("path", NUL_PATHS)
def test_a_nul_in_an_id_or_filter_is_a_422(api: Api, path: str) -> None:
    response = api.client.get(path, headers=api.auth("automation"))
    assert response.status_code == 422, response.text
    assert "NUL" in response.json()["detail"]


@pytest.mark.parametrize("path", ["/api/v1/incidents/INC%00-1/replay", "/api/v1/incidents/INC%00-1/resolve"])
def test_a_nul_in_the_id_of_a_write_is_a_422(api: Api, path: str) -> None:
    response = api.client.post(path, json={}, headers=api.auth("automation"))
    assert response.status_code == 422


@pytest.mark.parametrize("query", ["version=2147483648", "version=99999999999999999999", "version=0"])
def test_version_numbers_are_bounded(api: Api, query: str) -> None:
    incident = api.post("/api/v1/alerts", {"title": "pool exhausted", "service": "checkout"}).json()
    path = f"/api/v1/incidents/{incident['incidents'][0]}/briefing?{query}"
    assert api.client.get(path, headers=api.auth("reader")).status_code == 422


def test_list_offsets_are_bounded(api: Api) -> None:
    response = api.client.get("/api/v1/incidents?offset=99999999999999999999", headers=api.auth("reader"))
    assert response.status_code == 422


@pytest.mark.parametrize(
    ("starts_at", "problem"),
    [("9999-12-31T23:59:59Z", "more than a day in the future"), ("1969-07-20T20:17:00Z", "before 1970")],
)
def test_a_start_time_far_off_is_a_422(api: Api, starts_at: str, problem: str) -> None:
    response = api.post("/api/v1/alerts", {"title": "x", "service": "checkout", "starts_at": starts_at})
    assert response.status_code == 422
    assert problem in response.json()["detail"]
    assert api.incidents() == []


def test_a_start_time_within_a_day_ahead_is_taken(api: Api) -> None:
    soon = (datetime.now(UTC) + timedelta(hours=2)).isoformat()
    response = api.post("/api/v1/alerts", {"title": "x", "service": "checkout", "starts_at": soon})
    assert response.status_code == 200, response.text


def test_alertmanager_start_times_are_checked_too(api: Api) -> None:
    payload = {
        "version": "4",
        "status": "firing",
        "receiver": "recallops",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager",
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": "PoolExhausted", "service": "checkout"},
                "annotations": {},
                "startsAt": "9999-12-31T23:59:59Z",
                "endsAt": "0001-01-01T00:00:00Z",
            }
        ],
    }
    response = api.post("/api/v1/alerts/alertmanager", payload)
    assert response.status_code == 422 and "future" in response.json()["detail"]


def test_an_imported_post_mortem_from_year_9999_is_rejected_with_the_reason(api: Api) -> None:
    summary = import_(api, jsonl(post_mortem("PM-50", timestamp="9999-12-31T00:00:00Z"))).json()
    assert summary["imported"] == 0
    assert "more than a day in the future" in summary["rejected"][0]["reasons"][0]


@pytest.mark.parametrize(
    ("method", "path", "who"),
    [
        ("post", "/api/v1/ask", "reader"),
        ("post", "/api/v1/incidents/INC-0001/resolve", "automation"),
        ("put", "/api/v1/incidents/INC-0001/resolution", "automation"),
    ],
)
@pytest.mark.parametrize(
    "body",
    [b"{not json", b'{"text": "a"', b"[1,]", b'{"text": "\xff"}'],
    ids=["syntax", "cut", "comma", "latin-1"],
)
def test_a_body_that_is_not_json_is_a_400_saying_so(
    api: Api, method: str, path: str, who: str, body: bytes
) -> None:
    """As on the intake routes: a 400 that says the body is not JSON, not a 422 located at an offset."""
    headers = {**api.auth(who), "Content-Type": "application/json"}
    response = api.client.request(method, path, content=body, headers=headers)
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert detail.startswith("body is not") and "JSON" in detail and "decode error" not in detail
    assert response.json()["errors"] == [{"field": "body", "message": detail}]


@pytest.mark.parametrize("since", ["0.5", "0", "1700000000", "-1e3"])
def test_a_since_given_as_a_number_is_a_422_naming_it(api: Api, since: str) -> None:
    """Read as seconds since 1970, 0.5 would list every incident with no word said."""
    response = api.client.get("/api/v1/incidents", params={"since": since}, headers=api.auth("reader"))
    assert response.status_code == 422, response.text
    assert "since: " in response.json()["detail"] and "not a time" in response.json()["detail"]


@pytest.mark.parametrize(("field", "value"), [("ends_at", 0), ("starts_at", 1764450000), ("ends_at", "0.5")])
def test_an_alert_time_given_as_a_number_is_a_422_naming_it(api: Api, field: str, value: object) -> None:
    response = api.post("/api/v1/alerts", {"title": "x", "service": "checkout", field: value})
    assert response.status_code == 422, response.text
    assert f"{field}: " in response.json()["detail"] and "not a time" in response.json()["detail"]
    assert api.incidents() == []


def test_an_imported_time_given_as_a_number_is_a_rejected_line(api: Api) -> None:
    response = import_(api, jsonl(post_mortem("PM-8", timestamp=1730541600)))
    assert response.status_code == 200, response.text
    [rejected] = response.json()["rejected"]
    assert "timestamp" in " ".join(rejected["reasons"]) and "not a time" in " ".join(rejected["reasons"])


CONVERSATION = "/api/v1/incidents/INC-0001/resolution-conversation"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/api/v1/incidents/INC-0001/resolution-conversation",
            {"notes": "fixed it", "commit": "yes"},
            "commit",
        ),
        ("/api/v1/incidents/INC-0001/resolution-conversation", {"notes": "fixed it", "commit": 1}, "commit"),
        ("/api/v1/ask", {"text": "pool\u0000 exhausted"}, "text"),
        ("/api/v1/ask", {"text": "pool exhausted", "service": "check\u0000out"}, "service"),
        ("/api/v1/incidents/INC-0001/check-action", {"action": "scale\u0000 up"}, "action"),
    ],
)
def test_a_value_read_as_something_else_is_a_422_naming_it(
    api: Api, path: str, body: dict[str, object], field: str
) -> None:
    """No silent coercion: "yes" is no boolean, and a NUL is no character of alert text."""
    response = api.post(path, body, who="automation")
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith(f"{field}: ")


@pytest.mark.parametrize("value", ["NaN", "22.4", "Infinity"])
def test_a_grafana_value_that_is_no_number_is_a_422_naming_it(api: Api, value: str) -> None:
    raw = grafana("firing")
    raw["alerts"][0]["values"] = {"B": value}
    response = api.post("/api/v1/alerts/grafana", raw)
    assert response.status_code == 422, response.text
    assert "alerts.0.values.B" in response.json()["detail"]
    assert api.incidents() == []


def test_an_end_before_its_start_is_said_without_pydantics_prefix(api: Api) -> None:
    alert = {"title": "x", "starts_at": "2026-12-05T21:00:00Z", "ends_at": "2026-12-05T20:00:00Z"}
    response = api.post("/api/v1/alerts", alert)
    assert response.status_code == 422, response.text
    assert "body: ends_at 2026-12-05T20:00:00+00:00 is before starts_at" in response.json()["detail"]
    assert "Value error" not in response.text
