"""The team reliability profile learns from resolutions, over HTTP and the CLI of a live server."""

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.resolution_helpers import POST_MORTEM, client, issue_token, open_incident, wait_synced
from tests.support.net import wait_for
from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e
JWT_POST_MORTEM = {
    "symptom": "Wave of 401s on login and API calls from a third of requests",
    "error_signature": "401 Unauthorized: JWT signature verification failed (kid=2026-03)",
    "root_cause": "Signing-key rotation reached only 2 of 6 pods; the rest still verified with the old key",
    "resolution_steps": "Compared the key id served by each pod; rolled the key secret to all pods",
    "runbook_used": "runbooks/auth-key-rotation.md",
    "outcome": "401 rate back to baseline in 4 minutes",
    "failed_attempts": "Restarting the pods without the new secret did nothing",
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    env = {"RECALLOPS_PROFILE_REFRESH_DEBOUNCE_S": "1", "RECALLOPS_PROFILE_CHECK_S": "0.2"}
    live = LiveServer(tmp_path / "data", env=env).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with client(server, issue_token(server)) as session:
        yield session


def cited(profile: dict[str, Any], incident: str) -> list[dict[str, Any]]:
    return [p for p in profile["patterns"] if incident in p["incidents"]]


def test_a_new_pattern_appears_in_the_profile_after_the_refresh_cited(
    server: LiveServer, http: httpx.Client
) -> None:
    first = open_incident(http, "checkout-service", "CheckoutLatencyHigh")
    assert http.post(f"/api/v1/incidents/{first}/resolve", json=POST_MORTEM).status_code == 201
    wait_synced(http, first)

    operation = http.post("/api/v1/profile/refresh")
    assert operation.status_code == 202, operation.text
    done = wait_for(
        lambda: (
            (op := http.get(f"/api/v1/operations/{operation.json()['id']}").json())["status"]
            in ("completed", "failed")
            and op
        ),
        what="refresh operation finished",
    )
    assert done["status"] == "completed", done
    before = http.get("/api/v1/profile").json()
    assert before["name"] == "Team-wide Production Reliability Profile"
    assert cited(before, first) and before["last_refreshed_at"] and before["last_memory_seen_at"]

    second = open_incident(http, "auth-service", "AuthErrorRateHigh")
    assert http.post(f"/api/v1/incidents/{second}/resolve", json=JWT_POST_MORTEM).status_code == 201
    synced_at = datetime.fromisoformat(wait_synced(http, second)["synced_at"])

    # No button pressed: the worker refreshes after the sync (debounced).
    after = wait_for(
        lambda: cited(profile := http.get("/api/v1/profile").json(), second) and profile,
        timeout=90,
        what="the new pattern in the profile",
    )
    assert datetime.fromisoformat(after["last_refreshed_at"]) > datetime.fromisoformat(
        before["last_refreshed_at"]
    )
    assert datetime.fromisoformat(after["last_memory_seen_at"]) >= synced_at
    assert not after["stale"]
    [pattern] = cited(after, second)
    assert pattern["incidents"] == [second] and pattern["uncertain"] is True
    assert pattern["services"] == [{"text": "auth-service", "citations": [second]}]
    assert any(second in item["citations"] for item in pattern["recorded_root_causes"])
    assert any("Restarting the pods" in item["text"] for item in pattern["risky_actions"])
    assert cited(after, first) != [pattern], "different failures are different patterns"

    own = wait_for(
        lambda: (
            cited(p := http.get("/api/v1/profile", params={"service": "auth-service"}).json(), second) and p
        ),
        what="the auth-service profile",
    )
    assert own["id"] != after["id"] and not cited(own, first)

    shown = json.loads(server.cli("profile", "show", "--json").stdout)
    assert cited(shown, second)
    refreshed = server.cli("profile", "refresh", "--wait")
    assert "completed" in refreshed.stdout
    latest = http.get("/api/v1/profile").json()
    assert datetime.fromisoformat(latest["last_refreshed_at"]) > datetime.fromisoformat(
        after["last_refreshed_at"]
    )
