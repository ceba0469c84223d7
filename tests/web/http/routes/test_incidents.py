"""The incident API: listing with filters and pages, detail, acknowledgement, and its errors."""

import pytest

from tests.incidents.alerts.captures import body, capture, capture_files
from tests.web.http.routes.conftest import Api

AM = "/api/v1/alerts/alertmanager"


@pytest.fixture
def loaded(api: Api) -> Api:
    for path in capture_files("alertmanager"):
        assert api.post(AM, body(path)).status_code == 200
    return api


def test_list_filters_and_pages(loaded: Api) -> None:
    everything = loaded.incidents()
    # Newest first by when each was first seen (its alerts' startsAt), not by when it was stored.
    assert [i["id"] for i in everything] == ["INC-0004", "INC-0005", "INC-0002", "INC-0003", "INC-0001"]
    assert {i["service"] for i in loaded.incidents(service="checkout-api")} == {"checkout-api"}
    # A severity filters by its level: Alertmanager's "page" is critical, and "page" lists "critical".
    paging = {"DiskFull", "HighErrorRate", "CheckoutHighErrorRate"}
    for asked in ("critical", "CRITICAL", "page"):
        assert {i["alertname"] for i in loaded.incidents(severity=asked)} == paging, asked
    assert {i["alertname"] for i in loaded.incidents(severity="warning")} == {"PostgresReplicationLag"}
    assert loaded.incidents(status="resolved") == []
    assert len(loaded.incidents(status="open")) == 5
    assert loaded.incidents(since="2999-01-01T00:00:00Z") == []
    page = loaded.client.get("/api/v1/incidents?limit=2&offset=2", headers=loaded.auth("reader")).json()
    assert (page["total"], page["next_offset"], [i["id"] for i in page["items"]]) == (
        5,
        4,
        ["INC-0002", "INC-0003"],
    )
    last = loaded.client.get("/api/v1/incidents?limit=2&offset=4", headers=loaded.auth("reader")).json()
    assert last["next_offset"] is None


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("status=closed", "status"),
        ("since=yesterday", "since"),
        ("since=0001-01-01T00:00:00%2B05:00", "out of range"),
        ("limit=0", "limit"),
        ("limit=100000", "limit"),
        ("offset=-1", "offset"),
        ("service=a%00b", "NUL"),
        ("severity=%00", "NUL"),
    ],
)
def test_bad_filters_are_422_naming_the_field(loaded: Api, query: str, problem: str) -> None:
    response = loaded.client.get(f"/api/v1/incidents?{query}", headers=loaded.auth("reader"))
    assert response.status_code == 422
    assert problem in response.json()["detail"]


def test_detail_shows_alerts_and_timeline(loaded: Api) -> None:
    detail = loaded.incident("INC-0001")
    assert detail["alertname"] == "HighErrorRate"
    assert [a["status"] for a in detail["alerts"]] == ["firing", "resolved"]
    assert detail["alerts"][0]["cleared"] is True
    assert detail["active_alerts"] == 0
    assert [(e["kind"], e["actor"]) for e in detail["timeline"]] == [
        ("opened", "alertmanager (sender)"),
        ("alert_cleared", "alertmanager (sender)"),
    ]
    missing = loaded.client.get("/api/v1/incidents/INC-9999", headers=loaded.auth("reader"))
    assert missing.status_code == 404 and "INC-9999" in missing.json()["detail"]
    nul = loaded.client.get("/api/v1/incidents/INC%000001", headers=loaded.auth("reader"))
    assert nul.status_code == 422 and "NUL" in nul.json()["detail"]


def test_acknowledge_needs_incidents_write_and_names_the_actor(loaded: Api) -> None:
    path = "/api/v1/incidents/INC-0002/acknowledge"
    assert loaded.client.post(path).status_code == 401
    assert loaded.client.post(path, headers=loaded.auth("reader")).status_code == 403
    assert loaded.client.post(path, headers=loaded.auth("sender")).status_code == 403
    first = loaded.client.post(path, headers=loaded.auth("automation"))
    assert first.status_code == 200
    assert first.json()["changed"] is True
    assert first.json()["incident"]["acknowledged_by"] == "automation"
    assert loaded.client.post(path, headers=loaded.auth("automation")).json()["changed"] is False
    timeline = loaded.incident("INC-0002")["timeline"]
    assert [(e["kind"], e["actor"]) for e in timeline].count(("acknowledged", "automation")) == 1
    unknown = loaded.client.post("/api/v1/incidents/INC-0404/acknowledge", headers=loaded.auth("automation"))
    assert unknown.status_code == 404


def test_acknowledging_a_resolved_incident_is_409(loaded: Api) -> None:
    from incidents.database import transaction
    from incidents.incident.service import get_by_public_id

    with transaction(loaded.client.app.state.container.sessions) as db:  # type: ignore[attr-defined]
        incident = get_by_public_id(db_session=db, public_id="INC-0003")
        assert incident is not None
        incident.status = "resolved"
    response = loaded.client.post("/api/v1/incidents/INC-0003/acknowledge", headers=loaded.auth("automation"))
    assert response.status_code == 409 and "resolved" in response.json()["detail"]


def test_recurrence_is_linked_both_ways(api: Api) -> None:
    from incidents.database import transaction
    from incidents.incident.service import get_by_public_id

    first = capture("alertmanager", "amtool-1-firing")
    api.post(AM, first)
    with transaction(api.client.app.state.container.sessions) as db:  # type: ignore[attr-defined]
        incident = get_by_public_id(db_session=db, public_id="INC-0001")
        assert incident is not None
        incident.status = "resolved"
    first["alerts"][0]["startsAt"] = "2026-11-30T03:00:00Z"
    assert api.post(AM, first).json()["incidents"] == ["INC-0002"]
    assert api.incident("INC-0002")["recurrence_of"] == "INC-0001"
    assert api.incident("INC-0001")["recurrences"] == ["INC-0002"]


def test_detail_caps_alerts_to_the_newest_and_counts_them_all(api: Api) -> None:
    payload = capture("alertmanager", "amtool-1-firing")
    template = payload["alerts"][0]
    payload["alerts"] = [{**template, "fingerprint": f"storm{n:04d}"} for n in range(60)]
    assert api.post(AM, payload).json()["incidents"] == ["INC-0001"]
    resolve = {**payload, "status": "resolved"}
    resolve["alerts"] = [
        {**template, "fingerprint": "storm0000", "status": "resolved", "endsAt": "2026-11-29T22:00:00Z"}
    ]
    assert api.post(AM, resolve).status_code == 200

    detail = api.incident("INC-0001")
    assert (detail["alerts_total"], len(detail["alerts"]), detail["active_alerts"]) == (61, 50, 59)
    assert [a["fingerprint"] for a in detail["alerts"]][-2:] == ["storm0059", "storm0000"]
    assert detail["alerts"][-1]["status"] == "resolved"
    assert not any(a["cleared"] for a in detail["alerts"])

    headers = api.auth("reader")
    everything = api.client.get("/api/v1/incidents/INC-0001?alerts_limit=500", headers=headers).json()
    assert (everything["alerts_total"], len(everything["alerts"])) == (61, 61)
    assert [a["cleared"] for a in everything["alerts"] if a["fingerprint"] == "storm0000"] == [True, False]
    newest = api.client.get("/api/v1/incidents/INC-0001?alerts_limit=1", headers=headers).json()
    assert [(a["fingerprint"], a["status"]) for a in newest["alerts"]] == [("storm0000", "resolved")]
    for bad in ("0", "501", "x"):
        response = api.client.get(f"/api/v1/incidents/INC-0001?alerts_limit={bad}", headers=headers)
        assert response.status_code == 422 and "alerts_limit" in response.json()["detail"]
