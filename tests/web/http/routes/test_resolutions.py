"""The resolve, edit, correction and memory-status API, in-process on SQLite and PostgreSQL."""

from typing import Any

import pytest

from tests.web.http.routes.conftest import Api
from tests.web.http.routes.test_memory import import_, jsonl, post_mortem

POST_MORTEM = {
    "symptom": "p99 latency over 4 s on /checkout",
    "error_signature": "HikariPool-1 - Connection is not available",
    "root_cause": "Connection pool sized for average load",
    "resolution_steps": "Raised the pool; added a circuit breaker",
    "runbook_used": "runbooks/checkout-db-pool.md",
    "outcome": "Recovered in 6 minutes",
    "failed_attempts": "Adding pods made it worse",
}


def open_incident(api: Api, service: str = "checkout-service") -> str:
    response = api.post("/api/v1/alerts", {"title": "p99 high", "service": service, "alertname": "Latency"})
    assert response.status_code in (200, 202), response.text
    return response.json()["incidents"][0]


def resolve(api: Api, incident: str, body: dict[str, Any], who: str = "automation") -> Any:
    return api.post(f"/api/v1/incidents/{incident}/resolve", body, who=who)


def test_resolve_records_the_caller_as_resolver_and_owes_memory(api: Api) -> None:
    incident = open_incident(api)
    response = resolve(api, incident, POST_MORTEM)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["created"] and body["status"] == "resolved"
    assert body["resolution"]["resolved_by"] == "automation" and body["resolution"]["version"] == 1
    assert body["memory"] == {**body["memory"], "state": "pending", "documents": 1}
    detail = api.incident(incident)
    assert detail["status"] == "resolved"
    assert [e["kind"] for e in detail["timeline"]][-1] == "resolved"

    again = resolve(api, incident, POST_MORTEM)
    assert again.status_code == 200 and not again.json()["created"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({k: v for k, v in POST_MORTEM.items() if k != "root_cause"}, "root_cause"),
        ({**POST_MORTEM, "symptom": "   "}, "symptom"),
        ({**POST_MORTEM, "resolved_by": "someone else"}, "resolved_by"),
        ({**POST_MORTEM, "outcome": "x" * 5001}, "outcome"),
        ({**POST_MORTEM, "failed_attempts": "nul\x00byte"}, "failed_attempts"),
    ],
)
def test_validation_errors_name_the_field(api: Api, body: dict[str, Any], field: str) -> None:
    incident = open_incident(api)
    response = resolve(api, incident, body)
    assert response.status_code == 422
    assert field in response.json()["detail"]
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert api.incident(incident)["status"] == "triggered"


def test_resolving_needs_the_incidents_write_scope(api: Api) -> None:
    incident = open_incident(api)
    assert api.client.post(f"/api/v1/incidents/{incident}/resolve", json=POST_MORTEM).status_code == 401
    assert resolve(api, incident, POST_MORTEM, who="reader").status_code == 403
    assert resolve(api, "INC-9999", POST_MORTEM).status_code == 404


def test_edits_bump_the_version_and_corrections_get_their_own_document(api: Api) -> None:
    incident = open_incident(api)
    assert (
        api.client.patch(
            f"/api/v1/incidents/{incident}/resolution", json={"outcome": "x"}, headers=api.auth("automation")
        ).status_code
        == 409
    )
    resolve(api, incident, POST_MORTEM)

    patched = api.client.patch(
        f"/api/v1/incidents/{incident}/resolution",
        json={"root_cause": "Idle-in-transaction sessions held connections"},
        headers=api.auth("automation"),
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["resolution"]["version"] == 2
    replaced = api.client.put(
        f"/api/v1/incidents/{incident}/resolution", json=POST_MORTEM, headers=api.auth("automation")
    )
    assert replaced.json()["resolution"]["version"] == 3
    assert replaced.json()["resolution"]["root_cause"] == POST_MORTEM["root_cause"]

    corrected = api.post(
        f"/api/v1/incidents/{incident}/corrections",
        {"text": "It was idle-in-transaction sessions"},
        who="automation",
    )
    assert corrected.status_code == 201, corrected.text
    assert corrected.json()["document_id"].startswith(f"{incident}-correction-")
    assert corrected.json()["memory"]["documents"] == 2
    repeated = api.post(
        f"/api/v1/incidents/{incident}/corrections",
        {"text": "It was idle-in-transaction sessions"},
        who="automation",
    )
    assert repeated.status_code == 200 and not repeated.json()["created"]
    assert repeated.json()["correction"]["id"] == corrected.json()["correction"]["id"]
    listed = api.client.get(f"/api/v1/incidents/{incident}/corrections", headers=api.auth("reader")).json()
    assert [c["author"] for c in listed] == ["automation"]
    kinds = [e["kind"] for e in api.incident(incident)["timeline"]]
    assert kinds.count("resolution_edited") == 2 and kinds.count("correction_added") == 1
    memory = api.client.get(f"/api/v1/incidents/{incident}/memory", headers=api.auth("reader")).json()
    assert memory["state"] == "pending"
    empty = api.post(f"/api/v1/incidents/{incident}/corrections", {"text": " "}, who="automation")
    assert empty.status_code == 422 and "text" in empty.json()["detail"]


def test_imported_history_is_rewritten_only_with_the_right_to_rewrite_it(api: Api) -> None:
    """An ``incidents:write`` automation edits live incidents' post-mortems, not the team's history: an
    edit of an imported record needs ``history:replace``, as an import with ``replace`` does, and its
    timeline line keeps what it replaced."""
    assert import_(api, jsonl(post_mortem("PM-7"))).status_code == 200
    path = "/api/v1/incidents/PM-7/resolution"
    rewrite = {"resolution_steps": "Deleted the index by hand."}
    for edit in (
        api.client.patch(path, json=rewrite, headers=api.auth("automation")),
        api.client.put(path, json={**POST_MORTEM, **rewrite}, headers=api.auth("automation")),
    ):
        assert edit.status_code == 403 and "history:replace" in edit.json()["detail"]
    kept = api.client.get(path, headers=api.auth("reader")).json()["resolution"]
    assert (kept["version"], kept["resolution_steps"]) == (1, post_mortem("PM-7")["resolution_steps"])

    edited = api.client.patch(path, json=rewrite, headers=api.auth("historian"))
    assert edited.status_code == 200 and edited.json()["resolution"]["version"] == 2
    [line] = [e for e in api.incident("PM-7")["timeline"] if e["kind"] == "history_updated"]
    assert line["actor"] == "historian"
    assert line["data"]["previous"] == {"resolution_steps": post_mortem("PM-7")["resolution_steps"]}
