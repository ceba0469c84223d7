"""``POST /api/v1/incidents/{id}/check-action`` on a real database and the real embedded bank: what the
guard answers from the records imported into memory."""

from typing import Any

from tests.web.http.routes.conftest import Api
from tests.web.http.routes.test_memory import import_, jsonl, post_mortem

INVENTORY = {
    "service": "inventory-service",
    "symptom": "Reservation calls fail with pool timeouts since the morning deploy.",
    "error_signature": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "root_cause": "A new error path returned early without closing its connection.",
}


def _check(api: Api, incident: str, action: str) -> Any:
    response = api.post(f"/api/v1/incidents/{incident}/check-action", {"action": action}, who="reader")
    assert response.status_code == 200, response.text
    return response.json()


def test_pods_that_restarted_as_a_rollback_took_effect_are_no_restart_that_worked(api: Api) -> None:
    """The rollback fixed it and the pods restarted as a result: "restart inventory pods" has not worked
    before, until a record whose move was the restart says it has."""
    rollback = post_mortem(
        "PM-1",
        **INVENTORY,
        resolution_steps="1. Rolled back the morning deploy; the pool recovered as pods restarted.",
    )
    assert import_(api, jsonl(rollback)).json()["imported"] == 1
    alert = {"title": "inventory reservations failing", "service": "inventory-service"}
    [incident] = api.post("/api/v1/alerts", alert).json()["incidents"]

    restart = _check(api, incident, "restart inventory pods")
    assert restart["verdict"] != "worked before" and "PM-1" not in restart["citations"]
    assert _check(api, incident, "roll back the deploy")["citations"] == ["PM-1"]

    restarted = post_mortem(
        "PM-2",
        **INVENTORY,
        timestamp="2024-12-02T10:00:00Z",
        resolution_steps="1. Restarted the inventory pods; errors stopped.",
    )
    assert import_(api, jsonl(restarted)).json()["imported"] == 1
    restart = _check(api, incident, "restart inventory pods")
    assert (restart["verdict"], restart["citations"]) == ("worked before", ["PM-2"])
