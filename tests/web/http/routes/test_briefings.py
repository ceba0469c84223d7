"""Briefings through the API: the worker briefs a new incident, re-runs add versions, ask and replay store
nothing. In-process app on a real database (SQLite and PostgreSQL) and a real embedded memory bank."""

import asyncio
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from incidents.briefings.models import Briefing, Job
from memory.schema import IncidentRecord
from memory.service import log_incident
from tests.support.records import POOL, POOL_INCIDENT
from tests.web.http.routes.conftest import Api
from web.app.briefings import briefing_task
from web.app.container import Container


def container(api: Api) -> Container:
    return api.client.app.state.container  # type: ignore[attr-defined]


def seed(api: Api) -> None:
    records = [
        POOL_INCIDENT,
        IncidentRecord(
            incident_id="PM-0043",
            service="auth-service",
            timestamp=datetime(2026, 2, 1, tzinfo=UTC),
            symptom="401 wave",
            error_signature="JWT signature verification failed",
            root_cause="signing key rotation reached 2 of 6 pods",
            resolution_steps="Roll the key to all pods",
            runbook_used="runbooks/jwt.md",
            outcome="Logins recovered",
            resolved_by="lee",
        ),
    ]

    async def write() -> None:
        for record in records:
            await log_incident(container(api).bank, record)

    asyncio.run(write())


def open_incident(api: Api) -> str:
    response = api.post(
        "/api/v1/alerts",
        {
            "title": "Checkout database connections exhausted",
            "service": "checkout-service",
            "severity": "critical",
            "description": f"checkout-api errors: {POOL}",
        },
    )
    assert response.status_code == 200, response.text
    [opened] = response.json()["incidents"]
    return opened["id"] if isinstance(opened, dict) else opened


def briefings_stored(api: Api) -> int:
    with container(api).sessions() as db:
        return db.scalar(select(func.count(Briefing.id))) or 0


def test_the_worker_briefs_a_new_incident(api: Api) -> None:
    seed(api)
    public_id = open_incident(api)
    pending = api.client.get(f"/api/v1/incidents/{public_id}/briefing", headers=api.auth("reader"))
    assert pending.status_code == 404 and "briefing job is pending" in pending.json()["detail"]

    assert 'recallops_briefing_jobs{state="pending"} 1.0' in api.client.get("/metrics").text
    task = briefing_task(container(api))
    assert asyncio.run(task()) is True
    assert asyncio.run(task()) is False

    response = api.client.get(f"/api/v1/incidents/{public_id}/briefing", headers=api.auth("reader"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["incident"] == public_id and body["version"] == 1
    briefing = body["briefing"]
    assert briefing["mode"] == "evidence-only" and briefing["memory"] == "on"
    assert briefing["seen_before"] == "recurring"
    assert briefing["related_incidents"][0]["id"] == "PM-0042"
    assert any("max_connections" in r["text"] for r in briefing["risky_actions"])
    assert briefing["hops"][0]["calls"][0]["args"]["service"] == "checkout-service"
    with container(api).sessions() as db:
        assert db.scalar(select(Job.state)) == "done"
    assert 'recallops_briefing_jobs{state="pending"} 0.0' in api.client.get("/metrics").text
    events = api.incident(public_id)["timeline"]
    assert any(e["kind"] == "briefed" for e in events)


def test_rerun_adds_a_version_and_needs_write_scope(api: Api) -> None:
    public_id = open_incident(api)
    path = f"/api/v1/incidents/{public_id}/briefing"
    assert api.client.post(path, headers=api.auth("reader")).status_code == 403
    assert api.client.post(path).status_code == 401
    first = api.client.post(path, headers=api.auth("automation"))
    second = api.client.post(path, params={"memory": "off"}, headers=api.auth("automation"))
    assert (first.status_code, second.status_code) == (201, 201)
    assert (first.json()["version"], second.json()["version"]) == (1, 2)
    off = second.json()["briefing"]
    assert off["memory"] == "off" and off["summary"].startswith("No prior incident is known: memory is off")
    versions = api.client.get(f"/api/v1/incidents/{public_id}/briefings", headers=api.auth("reader")).json()
    assert [(v["version"], v["memory"]) for v in versions] == [(2, "off"), (1, "on")]
    old = api.client.get(path, params={"version": 1}, headers=api.auth("reader"))
    assert old.json()["briefing"]["memory"] == "on"
    assert (
        api.client.get("/api/v1/incidents/INC-9999/briefing", headers=api.auth("reader")).status_code == 404
    )


def test_ask_answers_and_stores_nothing(api: Api) -> None:
    seed(api)
    before = briefings_stored(api)
    response = api.client.post(
        "/api/v1/ask",
        json={"text": f"orders-db: {POOL}", "service": "orders-service"},
        headers=api.auth("reader"),
    )
    assert response.status_code == 200, response.text
    briefing = response.json()
    assert briefing["seen_before"] == "similar" and briefing["related_incidents"][0]["id"] == "PM-0042"
    assert "another service" in briefing["related_incidents"][0]["why"]
    assert briefings_stored(api) == before
    empty = api.client.post("/api/v1/ask", json={"text": " \n "}, headers=api.auth("reader"))
    assert empty.status_code == 422 and "text" in empty.json()["detail"]


def test_replay_diffs_memory_off_and_on_and_stores_nothing(api: Api) -> None:
    seed(api)
    public_id = open_incident(api)
    response = api.client.post(f"/api/v1/incidents/{public_id}/replay", headers=api.auth("reader"))
    assert response.status_code == 200, response.text
    replay = response.json()
    assert replay["memory_off"]["memory"] == "off" and replay["memory_on"]["memory"] == "on"
    diff = replay["diff"]
    assert diff["changed"] and diff["related_incidents"]["added"][0] == "PM-0042"
    assert diff["seen_before"] == {"off": "novel", "on": "recurring"}
    assert any("connection pool" in cause for cause in diff["likely_causes"]["added"])
    assert briefings_stored(api) == 0


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(max_size=300),
    service=st.one_of(st.none(), st.text(max_size=40)),
    memory=st.sampled_from(["on", "off"]),
)
def test_ask_answers_any_text_without_a_server_error(
    api: Api, text: str, service: str | None, memory: str
) -> None:
    response = api.client.post(
        "/api/v1/ask", json={"text": text, "service": service, "memory": memory}, headers=api.auth("reader")
    )
    assert response.status_code in (200, 422), response.text
    if response.status_code == 200:
        assert response.json()["citation_check"]["invalid_removed"] == 0
