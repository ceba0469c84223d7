"""Resolving an incident grades its briefings, over real HTTP on SQLite and PostgreSQL: the grade is on
the incident page and its timeline, aggregated on the profile page and exported on /metrics."""

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import issue
from tests.support.net import wait_for
from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse battery staple"
ALERT = {
    "service": "checkout-service",
    "title": "Checkout p99 latency over 2s",
    "description": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "severity": "critical",
}
# The spring flash-sale cause (INC-2025-014's), in the resolving engineer's words.
POST_MORTEM = {
    "symptom": "Checkout p99 over 2 s during the sale",
    "error_signature": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "root_cause": "The checkout Postgres connection pool was sized for average load; the sale burst needed "
    "far more concurrent transactions, so requests queued for a connection until the 30 s timeout",
    "resolution_steps": "1. Raised maximumPoolSize after checking max_connections\n2. Rolled the pods",
    "outcome": "Error rate back to normal in 15 minutes",
}


@pytest.fixture
def seeded(database_url: str, tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path / "server", env={"RECALLOPS_DATABASE_URL": database_url})
    server.cli("seed")
    server.start()
    try:
        server.cli("user", "add", "ana", "--role", "engineer", "--password", PASSWORD)
        yield server
    finally:
        server.stop()


def _signed_in(server: LiveServer) -> httpx.Client:
    http = httpx.Client(base_url=server.url, timeout=30)
    form = http.get("/signin").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token
    response = http.post("/signin", data={"name": "ana", "password": PASSWORD, "csrf_token": token.group(1)})
    assert response.status_code in (200, 303), response.text
    return http


def test_resolving_grades_every_briefing_version(seeded: LiveServer) -> None:
    server = seeded
    sender = {"Authorization": f"Bearer {issue(server, 'sender', 'alerts:write')}"}
    token = server.cli(
        "token", "create", "--name", "engineer", "--scope", "incidents:write", "--scope", "read"
    )
    writer = {"Authorization": f"Bearer {token.stdout.strip()}"}
    [incident] = httpx.post(f"{server.url}/api/v1/alerts", headers=sender, json=ALERT, timeout=30).json()[
        "incidents"
    ]

    def briefed(versions: int) -> bool:
        r = httpx.get(f"{server.url}/api/v1/incidents/{incident}/briefings", headers=writer, timeout=10)
        return r.status_code == 200 and len(r.json()) >= versions

    wait_for(lambda: briefed(1), timeout=120, interval=0.5, what="briefing v1")
    rerun = httpx.post(f"{server.url}/api/v1/incidents/{incident}/briefing", headers=writer, timeout=120)
    assert rerun.status_code == 201, rerun.text
    wait_for(lambda: briefed(2), timeout=120, interval=0.5, what="briefing v2")

    resolved = httpx.post(
        f"{server.url}/api/v1/incidents/{incident}/resolve", headers=writer, json=POST_MORTEM, timeout=30
    )
    assert resolved.status_code == 201, resolved.text

    def graded() -> list[dict[str, object]]:
        detail = httpx.get(f"{server.url}/api/v1/incidents/{incident}", headers=writer, timeout=10).json()
        return [e for e in detail["timeline"] if e["kind"] == "graded"]

    wait_for(lambda: len(graded()) == 2, timeout=60, interval=0.5, what="both versions graded")
    scores = {e["data"]["version"]: e["data"]["score"] for e in graded()}  # type: ignore[index]
    assert set(scores) == {1, 2} and all(s in (100, 65) for s in scores.values()), scores

    http = _signed_in(server)
    page = http.get(f"/incidents/{incident}").text
    assert page.count('class="badge grade-') == 2 and "briefing v1" in page
    profile = http.get("/profile").text
    assert "Briefings graded in the last 90 days: 2; mean score" in profile
    metrics = httpx.get(f"{server.url}/metrics", timeout=10).text
    assert 'recallops_briefing_grades_90d{figure="count"} 2.0' in metrics
    mean = re.search(r'recallops_briefing_grades_90d\{figure="mean_score"\} ([0-9.]+)', metrics)
    assert mean and float(mean.group(1)) == sum(scores.values()) / 2
    printed = server.cli("grades", "--since", "1d").stdout
    assert f"{incident} v1" in printed and "2 briefing version(s) graded" in printed
    share = sum(s == 100 for s in scores.values()) * 50
    assert printed.rstrip().endswith(f"of 100; {share}% of them scored 100"), printed
