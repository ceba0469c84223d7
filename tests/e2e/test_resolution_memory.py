"""Resolving teaches memory, whatever memory is doing: faults injected into a live server over HTTP.

The embedded memory file is locked by the test (memory down), the server is killed with SIGKILL between
the commit and the delivery, resolves are submitted twice and concurrently. Every time: the resolve
succeeds, the outbox catches up once memory is back, and memory holds exactly one record per incident.
"""

import secrets
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.e2e.resolution_helpers import (
    POST_MORTEM,
    client,
    issue_token,
    memory_documents,
    memory_locked,
    memory_state,
    open_incident,
    wait_synced,
)
from tests.support.net import wait_for
from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e
FAST = {
    "RECALLOPS_MEMORY_TIMEOUT_S": "1",
    "RECALLOPS_PROFILE_REFRESH_DEBOUNCE_S": "1",
    "RECALLOPS_PROFILE_CHECK_S": "0.2",
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path / "data", env=FAST)
    live.start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with client(server, issue_token(server)) as session:
        wait_for(lambda: session.get("/readyz").json()["checks"]["memory"]["ok"], what="memory open")
        yield session


def metric(http: httpx.Client, name: str) -> float:
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no metric {name}")


def test_memory_down_while_resolving_then_delivered_once_after_recovery(
    server: LiveServer, http: httpx.Client
) -> None:
    incident = open_incident(http, "checkout-service", "CheckoutLatencyHigh")
    with memory_locked(server.data_dir):
        response = http.post(f"/api/v1/incidents/{incident}/resolve", json=POST_MORTEM)
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["status"] == "resolved" and body["resolution"]["resolved_by"] == "oncall-dana"
        assert body["memory"]["state"] in ("pending", "failing")

        failing = wait_for(
            lambda: (s := memory_state(http, incident))["state"] == "failing" and s, what="outbox failing"
        )
        assert failing["last_error"] and failing["next_attempt_at"] and failing["attempts"] >= 1
        assert metric(http, 'recallops_memory_outbox_depth{state="failing"}') == 1.0
        assert metric(http, "recallops_memory_outbox_oldest_pending_seconds") > 0

    synced = wait_synced(http, incident)
    assert synced["last_error"] is None and synced["documents"] == 1
    assert memory_documents(server.data_dir, incident) == 1
    assert metric(http, 'recallops_memory_outbox_depth{state="failing"}') == 0.0
    timeline = http.get(f"/api/v1/incidents/{incident}").json()["timeline"]
    assert [e["kind"] for e in timeline].count("memory_synced") == 1


def test_killed_between_commit_and_delivery_delivers_after_restart_once(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = LiveServer(data_dir, env={**FAST, "RECALLOPS_RUN_WORKER": "false"}).start()
    token = issue_token(first)
    try:
        with client(first, token) as http:
            incident = open_incident(http, "payment-gateway", "ConfirmationTimeouts")
            assert http.post(f"/api/v1/incidents/{incident}/resolve", json=POST_MORTEM).status_code == 201
            assert memory_state(http, incident)["state"] == "pending"
    finally:
        first.stop(signal.SIGKILL)
    assert first.process is not None and first.process.returncode == -signal.SIGKILL

    second = LiveServer(data_dir, env=FAST).start()
    try:
        with client(second, token) as http:
            wait_synced(http, incident)
            assert memory_documents(data_dir, incident) == 1
    finally:
        second.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_database_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """A live server on a SQLite file, or on a fresh database of the test PostgreSQL."""
    env = dict(FAST)
    if request.param == "postgres":
        base = request.getfixturevalue("postgres_url").rsplit("/", 1)[0]
        name = f"resolve_{secrets.token_hex(4)}"
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        env["RECALLOPS_DATABASE_URL"] = f"{base}/{name}"
    live = LiveServer(tmp_path / "data", env=env).start()
    try:
        yield live
    finally:
        live.stop()


def test_the_same_resolve_twice_and_concurrent_resolves_make_one_record_each(
    any_database_server: LiveServer,
) -> None:
    server = any_database_server
    with client(server, issue_token(server)) as http:
        incidents = [open_incident(http, f"service-{n}", f"Alert{n}") for n in range(4)]
        submissions = [incidents[0], *incidents]  # the first incident is resolved twice, at the same time

        def resolve(incident: str) -> int:
            return http.post(f"/api/v1/incidents/{incident}/resolve", json=POST_MORTEM).status_code

        with ThreadPoolExecutor(max_workers=len(submissions)) as pool:
            codes = list(pool.map(resolve, submissions))

        assert sorted(codes[:2]) == [200, 201] and codes[2:] == [201, 201, 201]
        for incident in incidents:
            state = wait_synced(http, incident)
            assert state["documents"] == 1
            assert memory_documents(server.data_dir, incident) == 1
        again = http.post(
            f"/api/v1/incidents/{incidents[0]}/resolve", json={**POST_MORTEM, "outcome": "different"}
        )
        assert again.status_code == 409 and "already resolved" in again.json()["detail"]
