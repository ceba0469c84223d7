"""Alert intake over the HTTP API: every capture, authentication, and every kind of bad input."""

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from tests.incidents.alerts.captures import body, capture, capture_files, grafana
from tests.web.http.routes.conftest import MAX_BODY, Api
from web.app.logs import details

AM = "/api/v1/alerts/alertmanager"


def test_every_alertmanager_capture_and_its_redelivery(api: Api) -> None:
    for path in capture_files("alertmanager"):
        raw = body(path)
        first = api.post(AM, raw)
        assert first.status_code == 200, first.text
        assert first.json()["accepted"] == len(raw["alerts"])
        again = api.post(AM, raw).json()
        assert (again["stored"], again["duplicates"]) == (0, len(raw["alerts"]))
    listed = api.incidents()
    assert len(listed) == 5
    lag = next(i for i in listed if i["alertname"] == "PostgresReplicationLag")
    detail = api.incident(lag["id"])
    assert detail["active_alerts"] == 0 and detail["status"] == "triggered"
    assert all(a["cleared"] for a in detail["alerts"] if a["status"] == "firing")
    assert [e["kind"] for e in detail["timeline"]].count("alert_cleared") == 2


@pytest.mark.parametrize("path", ["/v2/enqueue", "/api/v1/alerts/pagerduty"])
def test_pagerduty_captures_answer_like_pagerduty(api: Api, path: str) -> None:
    for capture_path in capture_files("pagerduty"):
        raw = {**body(capture_path), "routing_key": api.secrets["sender"]}
        response = api.client.post(path, json=raw)
        assert response.status_code == 202, response.text
        assert response.json() == {
            "status": "success",
            "message": "Event processed",
            "dedup_key": raw["dedup_key"],
        }
    [incident] = api.incidents()
    assert incident["dedup_key"] == "chk-5xx-1"
    assert api.incident(incident["id"])["timeline"][-1]["kind"] == "alert_cleared"


def test_grafana_and_generic(api: Api) -> None:
    assert api.post("/api/v1/alerts/grafana", grafana("firing")).json()["stored"] == 2
    generic = api.post(
        "/api/v1/alerts", {"title": "Queue depth high", "service": "payments", "severity": "page"}
    )
    assert generic.status_code == 200
    [opened] = generic.json()["incidents"]
    assert api.incident(opened)["service"] == "payments"


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        ("/api/v1/alerts", {"title": " \n\t", "service": "payments"}, "title"),
        ("/v2/enqueue", {"payload": {"summary": "   ", "source": "db-1", "severity": "info"}}, "summary"),
        ("/v2/enqueue", {"payload": {"summary": "Disk full", "source": " ", "severity": "info"}}, "source"),
    ],
)
def test_an_alert_named_by_whitespace_alone_is_refused_naming_the_field(
    api: Api, path: str, payload: dict[str, Any], field: str
) -> None:
    """Otherwise it opens an incident without a name, and every such alert of a service shares it."""
    if path == "/v2/enqueue":
        payload = {"routing_key": api.secrets["sender"], "event_action": "trigger", **payload}
    response = api.post(path, payload)
    assert response.status_code in (400, 422) and field in response.text
    assert api.incidents() == []


def test_pagerduty_errors_come_in_pagerduty_shape(api: Api) -> None:
    trigger = capture("pagerduty", "pdpyras-1-trigger")
    response = api.client.post(
        "/v2/enqueue", json={**trigger, "routing_key": api.secrets["sender"], "payload": {}}
    )
    assert response.status_code == 400
    error = response.json()
    assert (error["status"], error["message"]) == ("invalid event", "Event object is invalid")
    assert any("payload.summary" in e for e in error["errors"])
    unauthorized = api.client.post("/v2/enqueue", json=trigger)
    assert unauthorized.status_code == 401 and unauthorized.json()["status"] == "unauthorized"
    forbidden = api.client.post("/v2/enqueue", json={**trigger, "routing_key": api.secrets["reader"]})
    assert forbidden.status_code == 403 and "alerts:write" in forbidden.json()["detail"]
    by_header = api.client.post("/v2/enqueue", json=trigger, headers=api.auth("sender"))
    assert by_header.status_code == 202
    assert len(api.incidents()) == 1


@pytest.mark.parametrize(
    "details", [{f"k{i}": "v" for i in range(2000)}, {"service": "z" * 5000}], ids=["many", "long"]
)
def test_pagerduty_custom_details_are_held_to_the_label_limits(api: Api, details: dict[str, str]) -> None:
    trigger = capture("pagerduty", "pdpyras-1-trigger")
    trigger["payload"]["custom_details"] = details
    response = api.client.post(
        "/v2/enqueue", json={**trigger, "routing_key": api.secrets["sender"]}, headers=api.auth("sender")
    )
    assert response.status_code == 400, response.text
    assert "custom_details" in response.json()["detail"]
    assert api.incidents() == []


def test_senders_need_a_token_with_alerts_write(api: Api) -> None:
    raw = capture("alertmanager", "amtool-1-firing")
    missing = api.client.post(AM, json=raw)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    wrong = api.client.post(AM, json=raw, headers={"Authorization": "Bearer rops_not-a-token"})
    assert wrong.status_code == 401
    other_scheme = api.client.post(AM, json=raw, headers={"Authorization": f"Basic {api.secrets['sender']}"})
    assert other_scheme.status_code == 401
    scoped = api.post(AM, raw, who="reader")
    assert scoped.status_code == 403 and "alerts:write" in scoped.json()["detail"]
    assert api.incidents() == []


def test_revoked_token_is_refused(api: Api) -> None:
    from incidents.auth.tokens import revoke_token
    from incidents.database import transaction

    with transaction(api.client.app.state.container.sessions) as db:  # type: ignore[attr-defined]
        revoke_token(db_session=db, name="sender")
    assert api.post(AM, capture("alertmanager", "amtool-1-firing")).status_code == 401


def test_a_token_revoked_after_the_gate_let_it_in_stores_nothing(api: Api) -> None:
    """The gate lets intake in on a check from the last minute; the store transaction asks again."""
    from incidents.auth.tokens import revoke_token
    from incidents.database import transaction

    first = capture("alertmanager", "amtool-1-firing")
    assert api.post(AM, first).status_code == 200
    with transaction(api.client.app.state.container.sessions) as db:  # type: ignore[attr-defined]
        revoke_token(db_session=db, name="sender")
    second = _alert(labels={"alertname": "DiskFull", "service": "billing"}, fingerprint="f-revoked")
    refused = api.post(AM, second)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert [incident["alertname"] for incident in api.incidents()] == [
        first["alerts"][0]["labels"]["alertname"]
    ]


def _alert(**changes: Any) -> dict[str, Any]:
    raw = capture("alertmanager", "amtool-1-firing")
    raw["alerts"][0].update(changes)
    return raw


BAD_JSON_BODIES = [
    (b"", 400, "empty body"),
    (b"{not json", 400, "not valid JSON"),
    (b'{"a": NaN}', 400, "NaN"),
    (b'{"a": -1e400}', 400, "too large"),
    (b"\xff\xfe", 400, "UTF-8"),
    (b"[" * 5000 + b"]" * 5000, 400, "not valid JSON"),
    (json.dumps([{"x": 1}]).encode(), 422, "valid dictionary"),
    (json.dumps({"status": "firing"}).encode(), 422, "alerts: Field required"),
    (json.dumps({"status": "firing", "alerts": []}).encode(), 422, "at least 1"),
    (json.dumps({"status": "firing", "version": "3", "alerts": [{}]}).encode(), 422, "version"),
    (b'{"status": "firing", "alerts": ' + b"[" * 40 + b"]" * 40 + b"}", 422, "nested deeper"),
    (json.dumps(_alert(labels={"alertname": "A\u0000B"})).encode(), 422, "NUL"),
    (b'{"status": "firing", "alerts": [{"labels": {"a": "\\ud800"}}]}', 422, "surrogate"),
    (json.dumps(_alert(labels={f"l{i}": "v" for i in range(65)})).encode(), 422, "at most 64"),
    (json.dumps(_alert(labels={"alertname": "x" * 5000})).encode(), 422, "longer than 4096"),
    (json.dumps(_alert(labels="service=x")).encode(), 422, "valid dictionary"),
    (json.dumps(_alert(labels={"n": 5})).encode(), 422, "valid string"),
    (json.dumps(_alert(startsAt="yesterday")).encode(), 422, "startsAt"),
    (json.dumps(_alert(startsAt="0001-01-01T00:00:00+05:00")).encode(), 422, "out of range"),
    (json.dumps(_alert(status="pending")).encode(), 422, "'firing' or 'resolved'"),
]


@pytest.mark.parametrize(("content", "status", "problem"), BAD_JSON_BODIES)
def test_bad_bodies_get_a_4xx_that_names_the_problem(
    api: Api, content: bytes, status: int, problem: str
) -> None:
    headers = {**api.auth("sender"), "Content-Type": "application/json"}
    response = api.client.post(AM, content=content, headers=headers)
    assert response.status_code == status, response.text
    assert problem in response.json()["detail"]
    assert api.incidents() == []


def test_wrong_content_type_is_415(api: Api) -> None:
    raw = json.dumps(capture("alertmanager", "amtool-1-firing"))
    for content_type in ("text/plain", "application/x-www-form-urlencoded", ""):
        response = api.client.post(
            AM, content=raw, headers={**api.auth("sender"), "Content-Type": content_type}
        )
        assert response.status_code == 415, content_type
        assert "application/json" in response.json()["detail"]
    ok = api.client.post(
        AM, content=raw, headers={**api.auth("sender"), "Content-Type": "application/json; charset=utf-8"}
    )
    assert ok.status_code == 200


def test_oversized_body_is_413_even_when_streamed_without_length(api: Api) -> None:
    big = json.dumps({"status": "firing", "alerts": [], "pad": "x" * MAX_BODY}).encode()
    declared = api.client.post(
        AM, content=big, headers={**api.auth("sender"), "Content-Type": "application/json"}
    )
    assert declared.status_code == 413 and str(MAX_BODY) in declared.json()["detail"]

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 4096):
            yield big[start : start + 4096]

    streamed = api.client.post(
        AM, content=chunks(), headers={**api.auth("sender"), "Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    lying = api.client.post(
        AM,
        content=chunks(),
        headers={**api.auth("sender"), "Content-Type": "application/json", "Content-Length": "10"},
    )
    assert lying.status_code in (400, 413)
    assert api.incidents() == []


@pytest.mark.parametrize("streamed", [False, True])
def test_an_oversized_pagerduty_event_is_refused_in_pagerduty_shape(api: Api, streamed: bool) -> None:
    big = json.dumps({"event_action": "trigger", "pad": "x" * MAX_BODY}).encode()
    content: Any = iter([big[:4096], big[4096:]]) if streamed else big
    response = api.client.post("/v2/enqueue", content=content, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    error = response.json()
    assert error["status"] == "invalid event" and str(MAX_BODY) in error["errors"][0]
    assert api.incidents() == []


def test_unknown_source_is_404_naming_it(api: Api) -> None:
    response = api.post("/api/v1/alerts/nagios", {"title": "x"})
    assert response.status_code == 404
    assert "'nagios'" in response.json()["detail"]


def test_batch_with_one_bad_alert_stores_nothing(api: Api) -> None:
    raw = capture("alertmanager", "api-grouped-1-firing")
    raw["alerts"][1]["startsAt"] = "not a time"
    assert api.post(AM, raw).status_code == 422
    assert api.incidents() == []


def test_a_repeat_that_raised_the_severity_is_reported_as_such(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    """The answer and the log name an escalated repeat and both severities; a plain repeat is still a
    duplicate, and the counts still add up to what was accepted."""
    alert = {"title": "Queue depth high", "service": "payments", "severity": "warning"}
    [opened] = api.post("/api/v1/alerts", alert).json()["alerts"]
    assert (opened["outcome"], opened["severity"], opened["previous_severity"]) == ("stored", "warning", None)
    with caplog.at_level(logging.INFO, logger="web.http.routes.alerts"):
        answer = api.post("/api/v1/alerts", {**alert, "severity": "critical"}).json()
    assert (answer["accepted"], answer["stored"], answer["escalated"], answer["duplicates"]) == (1, 0, 1, 0)
    [escalated] = answer["alerts"]
    assert escalated["outcome"] == "escalated" and escalated["incident"] == opened["incident"]
    assert (escalated["previous_severity"], escalated["severity"]) == ("warning", "critical")
    [line] = [r for r in caplog.records if r.name == "web.http.routes.alerts"]
    assert details(line) == (
        f" source=generic sender=sender fingerprint={opened['fingerprint']} incident={opened['incident']}"
        ' severity="warning -> critical"'
    )
    again = api.post("/api/v1/alerts", {**alert, "severity": "critical"}).json()
    assert (again["escalated"], again["duplicates"], again["alerts"][0]["outcome"]) == (0, 1, "duplicate")
    assert 'recallops_alerts_total{outcome="escalated",source="generic"}' in api.client.get("/metrics").text


def test_a_syslog_alert_escalates_from_critical_to_alert_to_emergency(api: Api) -> None:
    """Syslog's three most urgent names share the critical level but keep their order: each step up
    escalates the alert and raises its incident; a step back down is a repeat."""
    alert = {"title": "Kernel panic on db-3", "service": "orders-db", "severity": "crit"}
    [opened] = api.post("/api/v1/alerts", alert).json()["alerts"]
    for was, now in (("crit", "alert"), ("alert", "EMERG")):
        [answer] = api.post("/api/v1/alerts", {**alert, "severity": now}).json()["alerts"]
        assert (answer["outcome"], answer["previous_severity"], answer["severity"]) == ("escalated", was, now)
    for milder in ("alert", "critical"):
        assert api.post("/api/v1/alerts", {**alert, "severity": milder}).json()["duplicates"] == 1
    incident = api.incident(opened["incident"])
    assert incident["severity"] == "EMERG"
    raised = [e["data"] for e in incident["timeline"] if e["kind"] == "severity_raised"]
    assert [(e["from"], e["to"]) for e in raised] == [("crit", "alert"), ("alert", "EMERG")]


def test_metrics_count_outcomes(api: Api) -> None:
    raw = capture("alertmanager", "amtool-1-firing")
    api.post(AM, raw)
    api.post(AM, raw)
    api.post(AM, {"nonsense": True})
    text = api.client.get("/metrics").text
    for line in (
        'recallops_alerts_total{outcome="stored",source="alertmanager"}',
        'recallops_alerts_total{outcome="duplicate",source="alertmanager"}',
        'recallops_alerts_total{outcome="rejected",source="alertmanager"}',
        'recallops_intake_seconds_count{source="alertmanager"}',
        "recallops_open_incidents 1.0",
    ):
        assert line in text, line


@pytest.mark.parametrize(
    ("path", "who"),
    [("/api/v1/alerts", "sender"), ("/v2/enqueue", "sender"), ("/api/v1/drafts/import", "automation")],
)
def test_a_client_gone_before_its_body_is_no_server_error(
    api: Api, caplog: pytest.LogCaptureFixture, path: str, who: str
) -> None:
    """The sender hung up: logged at INFO with the path, not as an error of the server."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"name=pm.md",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/json"),
            *((k.lower().encode(), v.encode()) for k, v in api.auth(who).items()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with caplog.at_level(logging.DEBUG):
        assert api.client.portal is not None
        api.client.portal.call(api.client.app, scope, receive, send)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert any("client went away" in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)
    assert api.incidents() == []
