"""A real Alertmanager delivers to a running server with a bearer token: fire, clear, redeliver."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Running
from tests.support.alertmanager import Alertmanager, WebhookCapture
from tests.support.net import wait_for

pytestmark = pytest.mark.e2e
LABELS = {"alertname": "CheckoutDown", "service": "checkout-api", "severity": "critical"}


@pytest.fixture
def capture() -> Iterator[WebhookCapture]:
    capture = WebhookCapture().start()
    yield capture
    capture.stop()


@pytest.fixture
def alertmanager(running: Running, capture: WebhookCapture, tmp_path: Path) -> Iterator[Alertmanager]:
    manager = Alertmanager(
        tmp_path / "alertmanager",
        webhook_url=f"{running.server.url}/api/v1/alerts/alertmanager",
        token=running.sender,
        extra_webhooks=[capture.url],
    )
    manager.start()
    yield manager
    manager.stop()


def intake_events(detail: dict[str, Any]) -> list[tuple[str, str]]:
    """Timeline lines written by intake (the briefing worker adds its own as it runs)."""
    return [(e["kind"], e["actor"]) for e in detail["timeline"] if e["actor"].startswith("alertmanager")]


def _incident(running: Running) -> dict[str, Any] | None:
    items = running.get("/api/v1/incidents?service=checkout-api")["items"]
    return running.get(f"/api/v1/incidents/{items[0]['id']}") if items else None


def test_fire_clear_and_redeliver(
    running: Running, alertmanager: Alertmanager, capture: WebhookCapture
) -> None:
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    alertmanager.amtool_add(LABELS, start=start, summary="checkout returns 503")

    incident = wait_for(lambda: _incident(running), timeout=30, what="incident from alertmanager")
    assert (incident["alertname"], incident["severity"], incident["status"]) == (
        "CheckoutDown",
        "critical",
        "triggered",
    )
    assert incident["title"] == "checkout returns 503"
    assert intake_events(incident)[0] == ("opened", "alertmanager (alertmanager)")

    alertmanager.amtool_add(LABELS, start=start, end=datetime.now(UTC) - timedelta(seconds=1))

    def cleared() -> dict[str, Any] | None:
        detail = _incident(running)
        return detail if detail and detail["active_alerts"] == 0 else None

    detail = wait_for(cleared, timeout=30, what="alert cleared on the incident")
    assert detail["status"] == "triggered"  # cleared, not resolved: an engineer resolves
    assert intake_events(detail) == [
        ("opened", "alertmanager (alertmanager)"),
        ("alert_cleared", "alertmanager (alertmanager)"),
    ]
    assert [a["status"] for a in detail["alerts"]] == ["firing", "resolved"]

    # Alertmanager's own bytes, captured by a second receiver, delivered again: nothing changes.
    def captured() -> list[dict[str, Any]] | None:
        payloads = capture.payloads()
        resolved = any(alert["status"] == "resolved" for payload in payloads for alert in payload["alerts"])
        return payloads if resolved else None

    payloads = wait_for(captured, timeout=30, what="captured resolved payload")
    for payload in payloads:
        response = httpx.post(
            f"{running.server.url}/api/v1/alerts/alertmanager",
            json=payload,
            headers={"Authorization": f"Bearer {running.sender}"},
            timeout=10,
        )
        assert response.status_code == 200
        assert response.json()["stored"] == 0
    again = _incident(running)
    assert again is not None
    assert (again["alert_count"], len(again["alerts"]), intake_events(again)) == (1, 2, intake_events(detail))
    assert len(running.get("/api/v1/incidents")["items"]) == 1


def test_wrong_token_is_refused_and_nothing_is_stored(running: Running, tmp_path: Path) -> None:
    manager = Alertmanager(
        tmp_path / "alertmanager-bad",
        webhook_url=f"{running.server.url}/api/v1/alerts/alertmanager",
        token="rops_wrong",
    ).start()
    try:
        manager.amtool_add(LABELS, start=datetime.now(UTC) - timedelta(seconds=5))
        wait_for(lambda: "status code 401" in manager.log(), timeout=30, what="alertmanager sees the 401")
    finally:
        manager.stop()
    assert running.get("/api/v1/incidents")["items"] == []
