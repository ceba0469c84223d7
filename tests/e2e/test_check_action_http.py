"""The action guard over real HTTP on the seeded demo history: a viewer asks, memory answers, the timeline
records it (a viewer's token holds no write scope, so the check can write nothing else)."""

from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.conftest import issue
from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e

DEMO_POOL_ALERT = {
    "service": "checkout-service",
    "title": "Checkout p99 latency over 2s",
    "description": "remaining connection slots are reserved; pool timeout acquiring connection",
    "severity": "critical",
}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str, str]]:
    server = LiveServer(tmp_path_factory.mktemp("check-action") / "data")
    server.cli("seed")
    server.start()
    try:
        yield server, issue(server, "sender", "alerts:write"), issue(server, "viewer", "read")
    finally:
        server.stop()


def test_scale_the_pods_is_risky_on_the_demo_pool_incident(seeded: tuple[LiveServer, str, str]) -> None:
    server, sender, reader = seeded
    posted = httpx.post(
        f"{server.url}/api/v1/alerts", headers={"Authorization": f"Bearer {sender}"}, json=DEMO_POOL_ALERT
    )
    assert posted.status_code in (200, 202), posted.text
    [incident] = posted.json()["incidents"]
    as_viewer = {"Authorization": f"Bearer {reader}"}
    url = f"{server.url}/api/v1/incidents/{incident}/check-action"

    risky = httpx.post(url, headers=as_viewer, json={"action": "Scale the pods"}, timeout=60)
    assert risky.status_code == 200, risky.text
    body = risky.json()
    assert (body["verdict"], body["scope"]) == ("risky", "service")
    assert body["citations"][0] == "INC-2025-014"
    assert body["matches"][0]["kind"] == "failed attempt" and "made it worse" in body["matches"][0]["text"]

    calm = httpx.post(url, headers=as_viewer, json={"action": "update the status page"}, timeout=60)
    assert calm.json()["verdict"] == "no record" and calm.json()["citations"] == []

    detail = httpx.get(f"{server.url}/api/v1/incidents/{incident}", headers=as_viewer, timeout=10).json()
    checks = [e for e in detail["timeline"] if e["kind"] == "action-checked"]
    assert [c["actor"] for c in checks] == ["viewer", "viewer"]
    assert "'Scale the pods'" in checks[0]["message"] and "risky" in checks[0]["message"]


def test_bad_requests_are_named(seeded: tuple[LiveServer, str, str]) -> None:
    server, _, reader = seeded
    as_viewer = {"Authorization": f"Bearer {reader}"}
    missing = httpx.post(
        f"{server.url}/api/v1/incidents/INC-9999/check-action", headers=as_viewer, json={"action": "x"}
    )
    assert missing.status_code == 404 and "INC-9999" in missing.text
    empty = httpx.post(
        f"{server.url}/api/v1/incidents/INC-9999/check-action", headers=as_viewer, json={"action": " "}
    )
    assert empty.status_code == 422 and "action" in empty.text
    anonymous = httpx.post(f"{server.url}/api/v1/incidents/INC-9999/check-action", json={"action": "x"})
    assert anonymous.status_code == 401
