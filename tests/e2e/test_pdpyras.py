"""``pdpyras``, PagerDuty's own client, posts to a running server unchanged."""

import warnings

import pytest

with warnings.catch_warnings():
    # pdpyras announces its successor on import; the point here is that the client people run today works.
    warnings.filterwarnings("ignore", message='The package "pdpyras" is deprecated', category=UserWarning)
    import pdpyras

from tests.e2e.conftest import Running

pytestmark = pytest.mark.e2e


def test_trigger_acknowledge_resolve(running: Running) -> None:
    session = pdpyras.EventsAPISession(running.sender)
    session.url = running.server.url
    dedup_key = session.trigger(
        "payments API 5xx above 5%",
        "payments-api",
        dedup_key="pay-5xx",
        severity="error",
        custom_details={"error": "upstream reset"},
    )
    assert dedup_key == "pay-5xx"
    [incident] = running.get("/api/v1/incidents")["items"]
    assert (incident["service"], incident["dedup_key"], incident["severity"]) == (
        "payments-api",
        "pay-5xx",
        "error",
    )
    assert session.acknowledge(dedup_key) == dedup_key
    assert session.resolve(dedup_key) == dedup_key
    detail = running.get(f"/api/v1/incidents/{incident['id']}")
    assert detail["status"] == "acknowledged"
    intake = [e["kind"] for e in detail["timeline"] if e["actor"] == "pagerduty (alertmanager)"]
    assert intake == ["opened", "acknowledged", "alert_cleared"]


def test_a_routing_key_that_is_not_a_token_fails_in_the_client(running: Running) -> None:
    session = pdpyras.EventsAPISession("R0UTINGKEY0000000000000000000000")
    session.url = running.server.url
    with pytest.raises(pdpyras.PDClientError):
        session.trigger("x", "y")
    assert running.get("/api/v1/incidents")["items"] == []
