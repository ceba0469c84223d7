"""The review queue's API: a file in, drafts read with their spans, edited, accepted or rejected."""

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.web.http.routes.conftest import Api

FILES = Path(__file__).parents[3] / "memory" / "extraction" / "files"


def _import(api: Api, name: str, data: bytes | None = None, who: str = "automation") -> httpx.Response:
    body = (FILES / name).read_bytes() if data is None else data
    return api.client.post(
        "/api/v1/drafts/import", params={"name": name}, content=body, headers=api.auth(who)
    )


def test_a_file_is_drafted_once_and_its_fields_point_into_its_source(api: Api) -> None:
    first = _import(api, "incidentio-incidents.json")
    assert first.status_code == 200, first.text
    report = first.json()
    assert (report["files"], report["documents"], report["drafts"], report["unchanged"]) == (1, 1, 1, 0)
    assert report["filled"]["service"] == 1
    again = _import(api, "incidentio-incidents.json").json()
    assert (again["drafts"], again["unchanged"]) == (0, 1)

    [listed] = api.client.get("/api/v1/drafts", headers=api.auth("reader")).json()
    draft = api.client.get(f"/api/v1/drafts/{listed['id']}", headers=api.auth("reader")).json()
    assert draft["source_name"] == "incidentio-incidents.json#INC-212"
    assert draft["fields"]["service"] == {"value": "notification-worker", "spans": [], "origin": "meta"}
    for field in draft["fields"].values():
        for start, end in field["spans"]:
            assert draft["source_text"][start:end].strip()


def test_an_unreadable_file_is_a_422_naming_why_and_drafts_nothing(api: Api) -> None:
    response = _import(api, "notes.txt", "Panne de données".encode("latin-1"))
    assert response.status_code == 422
    assert "notes.txt: not UTF-8 text" in response.json()["detail"]
    assert _import(api, "x.csv", b"ticket,owner\n1,dana\n").status_code == 422
    assert _import(api, "empty.md", b"").status_code == 422
    assert api.client.get("/api/v1/drafts", headers=api.auth("reader")).json() == []


def test_a_draft_is_edited_then_accepted_by_the_caller_and_only_once(api: Api) -> None:
    _import(api, "checkout-db-failover.md")
    [listed] = api.client.get("/api/v1/drafts", headers=api.auth("reader")).json()
    url = f"/api/v1/drafts/{listed['id']}"
    edited = api.client.patch(
        url, json={"fields": {"runbook_used": "RB-db-failover"}}, headers=api.auth("automation")
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["fields"]["runbook_used"] == {
        "value": "RB-db-failover",
        "spans": [],
        "origin": "edited",
    }
    accepted = api.client.post(f"{url}/accept", headers=api.auth("automation"))
    assert accepted.status_code == 200, accepted.text
    public_id = accepted.json()["incident_id"]
    incident = api.incident(public_id)
    assert incident["status"] == "resolved" and incident["service"] == "checkout-api"
    again = api.client.post(f"{url}/accept", headers=api.auth("automation"))
    assert again.status_code == 409 and "already accepted" in again.json()["detail"]
    refused = api.client.patch(url, json={"fields": {"symptom": "x"}}, headers=api.auth("automation"))
    assert refused.status_code == 409


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"symtpom": "pool exhausted"}, "symtpom: not a drafted field"),
        ({"symptom": "ok", "owner": "dana"}, "owner: not a drafted field"),
        ({"symptom": "pool\u0000 exhausted"}, "symptom: contains a NUL character"),
        ({"timestamp": "1969-07-20T20:17:00Z"}, "timestamp: "),
    ],
)
def test_an_edit_naming_a_wrong_field_or_value_is_a_422_naming_it(
    api: Api, fields: dict[str, str], named: str
) -> None:
    """The request is wrong, not the draft's state (that is a 409): the draft is left as it was."""
    _import(api, "checkout-db-failover.md")
    [listed] = api.client.get("/api/v1/drafts", headers=api.auth("reader")).json()
    url = f"/api/v1/drafts/{listed['id']}"
    before = api.client.get(url, headers=api.auth("reader")).json()
    refused = api.client.patch(url, json={"fields": fields}, headers=api.auth("automation"))
    assert refused.status_code == 422, refused.text
    assert named in refused.json()["detail"]
    assert api.client.get(url, headers=api.auth("reader")).json() == before


def test_incomplete_drafts_are_refused_and_rejections_need_a_reason(api: Api) -> None:
    _import(api, "thin.md", b"# Outage\n\nSomething broke.\n")
    [listed] = api.client.get("/api/v1/drafts", headers=api.auth("reader")).json()
    url = f"/api/v1/drafts/{listed['id']}"
    early = {"fields": {"timestamp": "1969-07-20T20:17:00Z", "outcome": "Recovered"}}
    dated = api.client.patch(url, json=early, headers=api.auth("automation"))
    assert dated.status_code == 422 and dated.json()["detail"].startswith("timestamp: ")
    assert "before 1970" in dated.json()["detail"] and "outcome" not in dated.json()["detail"]
    refused = api.client.post(f"{url}/accept", headers=api.auth("automation"))
    assert refused.status_code == 409 and "symptom" in refused.json()["detail"]
    assert (
        api.client.post(f"{url}/reject", json={"reason": ""}, headers=api.auth("automation")).status_code
        == 422
    )
    surrogate = api.client.patch(
        url,
        content=b'{"fields": {"symptom": "\\ud800"}}',
        headers=api.auth("automation") | {"Content-Type": "application/json"},
    )
    assert surrogate.status_code == 422
    rejected = api.client.post(f"{url}/reject", json={"reason": "a drill"}, headers=api.auth("automation"))
    assert rejected.json()["state"] == "rejected" and rejected.json()["reason"] == "a drill"


def test_readers_read_the_queue_but_cannot_import_or_decide(api: Api) -> None:
    assert _import(api, "checkout-db-failover.md", who="reader").status_code == 403
    assert api.client.post("/api/v1/drafts/1/accept", headers=api.auth("reader")).status_code == 403
    assert api.client.get("/api/v1/drafts/9", headers=api.auth("reader")).status_code == 404
    assert api.client.get(f"/api/v1/drafts/{'9' * 25}", headers=api.auth("reader")).status_code == 422


def _revised(api: Api, old: str, new: str) -> dict[str, Any]:
    text = (FILES / "checkout-db-failover.md").read_text()
    assert _import(api, "checkout-db-failover.md", text.replace(old, new).encode()).json()["revisions"] == 1
    [listed] = api.client.get(
        "/api/v1/drafts", params={"state": "pending"}, headers=api.auth("reader")
    ).json()
    return dict(listed)


def test_an_edited_file_is_a_revision_that_replaces_its_incidents_record_or_is_filed_as_new(api: Api) -> None:
    _import(api, "checkout-db-failover.md")
    [listed] = api.client.get("/api/v1/drafts", headers=api.auth("reader")).json()
    public_id = api.client.post(
        f"/api/v1/drafts/{listed['id']}/accept", headers=api.auth("automation")
    ).json()["incident_id"]

    revision = _revised(api, "health check was disabled", "health check was turned off")
    assert revision["revises"] == public_id
    assert revision["revision_reason"] == "a new version of checkout-db-failover.md"
    accepted = api.client.post(f"/api/v1/drafts/{revision['id']}/accept", headers=api.auth("automation"))
    assert accepted.json() == {"draft": revision["id"], "incident_id": public_id, "revised": True}
    record = api.client.get(f"/api/v1/incidents/{public_id}/resolution", headers=api.auth("reader")).json()
    assert record["resolution"]["version"] == 2 and "turned off" in record["resolution"]["root_cause"]

    other = _revised(api, "18%", "a third")
    filed = api.client.post(
        f"/api/v1/drafts/{other['id']}/accept", params={"as_new": "true"}, headers=api.auth("automation")
    ).json()
    assert filed == {"draft": other["id"], "incident_id": other["incident_id"], "revised": False}
    assert filed["incident_id"] != public_id
