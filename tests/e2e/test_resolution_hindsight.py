"""Resolving while the Hindsight server is down: the write waits in the outbox and lands once, after."""

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.resolution_helpers import (
    POST_MORTEM,
    client,
    issue_token,
    memory_state,
    open_incident,
    wait_synced,
)
from tests.support.hindsight import HindsightServer
from tests.support.net import wait_for
from tests.support.server import LiveServer

pytestmark = [pytest.mark.e2e, pytest.mark.hindsight]


@pytest.fixture
def bank_id() -> str:
    return f"resolve-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def server(tmp_path: Path, hindsight: HindsightServer, bank_id: str) -> Iterator[LiveServer]:
    env = {
        "RECALLOPS_MEMORY": "hindsight",
        "HINDSIGHT_BASE_URL": hindsight.url,
        "RECALLOPS_BANK_ID": bank_id,
        "RECALLOPS_MEMORY_TIMEOUT_S": "5",
        "RECALLOPS_PROFILE_REFRESH_DEBOUNCE_S": "1",
        "RECALLOPS_PROFILE_CHECK_S": "0.5",
    }
    live = LiveServer(tmp_path / "data", env=env).start()
    try:
        yield live
    finally:
        live.stop()


def test_hindsight_stopped_while_resolving_then_one_record_after_it_is_back(
    server: LiveServer, hindsight: HindsightServer, bank_id: str
) -> None:
    with client(server, issue_token(server)) as http:
        incident = open_incident(http, "checkout-service", "CheckoutLatencyHigh")
        hindsight.stop_api()
        try:
            response = http.post(f"/api/v1/incidents/{incident}/resolve", json=POST_MORTEM)
            assert response.status_code == 201, response.text
            failing = wait_for(
                lambda: (s := memory_state(http, incident))["state"] == "failing" and s, what="outbox failing"
            )
            assert failing["last_error"] and failing["next_attempt_at"]
        finally:
            hindsight.start_api()
        wait_synced(http, incident, timeout=180)

        ids = [d["id"] for d in hindsight.documents(bank_id)]
        assert ids.count(incident) == 1

        operation = http.post("/api/v1/profile/refresh")
        assert operation.status_code == 202, operation.text
        done = wait_for(
            lambda: (
                (op := http.get(f"/api/v1/operations/{operation.json()['id']}").json())["status"]
                in ("completed", "failed")
                and op
            ),
            timeout=120,
            what="profile refresh on Hindsight",
        )
        assert done["status"] == "completed", done
        profile = wait_for(
            lambda: (p := http.get("/api/v1/profile").json())["last_refreshed_at"] and p,
            what="profile mirrored",
        )
        assert profile["source"] == "memory" and profile["last_memory_seen_at"]

        hindsight.stop_api()
        try:
            offline = http.get("/api/v1/profile").json()
        finally:
            hindsight.start_api()
        assert offline["source"] == "snapshot" and offline["memory_error"]
        assert offline["last_refreshed_at"] == profile["last_refreshed_at"]
        assert offline["last_memory_seen_at"] == profile["last_memory_seen_at"]
