"""``recallops memory sync [--retry-failed]`` as an operator runs it beside a server whose worker is off."""

from pathlib import Path

from tests.e2e.resolution_helpers import (
    POST_MORTEM,
    client,
    issue_token,
    memory_documents,
    memory_locked,
    memory_state,
    open_incident,
)
from tests.support.server import LiveServer


def test_sync_delivers_what_is_owed_and_retry_failed_retries_at_once(tmp_path: Path) -> None:
    env = {"RECALLOPS_RUN_WORKER": "false", "RECALLOPS_MEMORY_TIMEOUT_S": "1"}
    server = LiveServer(tmp_path / "data", env=env).start()
    try:
        with client(server, issue_token(server)) as http:
            assert http.get("/readyz").json()["checks"]["memory"]["ok"]
            first = open_incident(http, "checkout-service", "CheckoutLatencyHigh")
            second = open_incident(http, "auth-service", "AuthErrors")
            assert http.post(f"/api/v1/incidents/{first}/resolve", json=POST_MORTEM).status_code == 201

            done = server.cli("memory", "sync")
            assert "synced 1, failed 0; queue: 0 pending, 0 failing" in done.stdout
            assert memory_state(http, first)["state"] == "synced"

            assert http.post(f"/api/v1/incidents/{second}/resolve", json=POST_MORTEM).status_code == 201
            with memory_locked(server.data_dir):
                down = server.cli("memory", "sync", check=False)
            assert down.returncode == 1
            assert "synced 0, failed 1; queue: 0 pending, 1 failing" in down.stdout
            assert "oldest unsynced write since" in down.stdout

            retried = server.cli("memory", "sync", "--retry-failed")
            assert "synced 1, failed 0; queue: 0 pending, 0 failing" in retried.stdout
            assert memory_documents(server.data_dir, second) == 1
    finally:
        server.stop()
