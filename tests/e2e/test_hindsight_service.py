"""The whole service with its memory on a real Hindsight server, as an operator would run it.

Seeding goes through the CLI, search through the API (the web app's event loop), and the briefing of
a new alert through the worker thread (its own event loop) — all on one Hindsight bank.
"""

import uuid
from pathlib import Path

import httpx
import pytest

from tests.support.hindsight import HindsightServer
from tests.support.net import wait_for
from tests.support.server import LiveServer
from web.app.history import load_seeds

pytestmark = [pytest.mark.e2e, pytest.mark.hindsight]
POOL_INCIDENT = "INC-2025-014"
POOL_ERROR = "HikariPool-1 - Connection is not available, request timed out after 30000ms"


def test_seed_search_and_brief_from_hindsight_memory(hindsight: HindsightServer, tmp_path: Path) -> None:
    operator = LiveServer(
        data_dir=tmp_path / "data",
        env={
            "RECALLOPS_MEMORY": "hindsight",
            "HINDSIGHT_BASE_URL": hindsight.url,
            "RECALLOPS_BANK_ID": f"e2e-{uuid.uuid4().hex[:10]}",
            "RECALLOPS_MEMORY_TIMEOUT_S": "30",
        },
    )
    count = len(load_seeds().rows)
    assert f"imported {count}, updated 0, unchanged 0, rejected 0" in operator.cli("seed").stdout
    assert f"imported 0, updated 0, unchanged {count}, rejected 0" in operator.cli("seed").stdout
    secret = operator.cli(
        "token", "create", "--name", "oncall", "--scope", "alerts:write", "--scope", "read"
    ).stdout.strip()

    operator.start()
    try:
        with httpx.Client(
            base_url=operator.url, headers={"Authorization": f"Bearer {secret}"}, timeout=60
        ) as http:
            memory = http.get("/readyz").json()["checks"]["memory"]
            assert memory["ok"] and memory["driver"] == "hindsight", memory

            found = http.get(
                "/api/v1/memory/search",
                params={
                    "q": "checkout requests time out, HikariPool connection is not available",
                    "service": "checkout-service",
                },
            )
            assert found.status_code == 200, found.text
            incidents = found.json()["incidents"]
            assert incidents[0]["id"] == POOL_INCIDENT
            assert {i["service"] for i in incidents} == {"checkout-service"}
            assert "sized for" in incidents[0]["record"]["root_cause"]

            fired = http.post(
                "/api/v1/alerts",
                json={
                    "title": "Checkout database connections exhausted",
                    "service": "checkout-service",
                    "severity": "critical",
                    "description": POOL_ERROR,
                },
            )
            assert fired.status_code in (200, 202), fired.text
            [incident] = fired.json()["incidents"]
            incident_id = incident["id"] if isinstance(incident, dict) else incident
            stored = wait_for(
                lambda: (
                    (r := http.get(f"/api/v1/incidents/{incident_id}/briefing")).status_code == 200
                    and r.json()
                ),
                timeout=120,
                what="the briefing built from Hindsight memory",
            )
            briefing = stored["briefing"]
            assert briefing["memory"] == "on"
            assert POOL_INCIDENT in [r["id"] for r in briefing["related_incidents"]]
    finally:
        operator.stop()


def test_a_service_on_hindsight_stopped_by_sigterm_logs_no_error(
    hindsight: HindsightServer, tmp_path: Path
) -> None:
    """A rolling update stops every replica: a clean stop must not write ERROR lines an operator alerts on
    (each worker lane's HTTP session to the server is closed on that lane's loop, not left to the GC)."""
    operator = LiveServer(
        data_dir=tmp_path / "data",
        env={
            "RECALLOPS_MEMORY": "hindsight",
            "HINDSIGHT_BASE_URL": hindsight.url,
            "RECALLOPS_BANK_ID": f"e2e-{uuid.uuid4().hex[:10]}",
        },
    )
    operator.cli("seed")
    operator.start()
    try:
        # the profile lane has talked to the server on its own loop once it asked for a refresh
        wait_for(lambda: "profile refresh started" in operator.log(), timeout=60, what="a profile refresh")
    finally:
        operator.stop()
    assert " ERROR " not in operator.log() and "Unclosed" not in operator.log(), operator.log()
