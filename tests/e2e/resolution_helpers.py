"""Driving a live RecallOps over HTTP for the resolution tests: tokens, incidents, post-mortems, memory."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.net import wait_for
from tests.support.server import LiveServer

POST_MORTEM = {
    "symptom": "p99 latency over 4 s on /checkout; 5xx at 12%",
    "error_signature": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "root_cause": "Postgres connection pool sized for average load, exhausted by the flash-sale burst",
    "resolution_steps": "Checked pg_stat_activity; raised the pool from 20 to 60; added a circuit breaker",
    "runbook_used": "runbooks/checkout-db-pool.md",
    "outcome": "Latency normal after 6 minutes",
    "failed_attempts": "Adding pods made it worse: more pods, more connections",
}


def issue_token(server: LiveServer) -> str:
    done = server.cli(
        *("token", "create", "--name", "oncall-dana", "--scope", "alerts:write"),
        *("--scope", "incidents:write", "--scope", "read"),
        check=False,
    )
    assert done.returncode == 0, f"token create failed: {done.stderr}"
    return done.stdout.strip().splitlines()[-1]


def client(server: LiveServer, token: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def open_incident(http: httpx.Client, service: str, alertname: str) -> str:
    response = http.post(
        "/api/v1/alerts",
        json={
            "title": f"{alertname} on {service}",
            "service": service,
            "alertname": alertname,
            "severity": "critical",
        },
    )
    assert response.status_code in (200, 202), response.text
    [incident] = response.json()["incidents"]
    return incident


def memory_state(http: httpx.Client, incident: str) -> dict[str, Any]:
    response = http.get(f"/api/v1/incidents/{incident}/memory")
    assert response.status_code == 200, response.text
    return response.json()


def wait_synced(http: httpx.Client, incident: str, timeout: float = 90) -> dict[str, Any]:
    return wait_for(
        lambda: (state := memory_state(http, incident))["state"] == "synced" and state,
        timeout=timeout,
        what=f"{incident} synced to memory",
    )


def memory_documents(data_dir: Path, document_id: str) -> int:
    """How many records memory holds under this document id (read straight from the embedded file)."""
    with sqlite3.connect(f"file:{data_dir / 'memory.db'}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute(
            "SELECT count(*) FROM documents WHERE document_id = ?", (document_id,)
        ).fetchone()[0]


@contextmanager
def memory_locked(data_dir: Path) -> Iterator[None]:
    """Hold the embedded memory file's exclusive write lock: every write to memory waits, then times out.

    (The file is in WAL mode, where the server's open connections keep readers going; writes are what
    a resolution needs, and none can get through.)
    """
    conn = sqlite3.connect(data_dir / "memory.db", timeout=30, isolation_level=None)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()
