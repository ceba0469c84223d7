"""Match strength reads what the alert says: a status code the alert names tells two records apart."""

from agent.core.evidence import AlertInput, match_strength
from memory import RecalledIncident
from memory.schema import IncidentRecord, format_record
from tests.agent.fakes import record


def recalled(rec: IncidentRecord, rank: int) -> RecalledIncident:
    ranks = {"semantic": rank, "keyword": rank}
    return RecalledIncident(rec.incident_id, format_record(rec), rec, 0.5, ranks, [], {}, rec.timestamp)


THROTTLED = record(
    "PM-1",
    "payment-gateway",
    symptom="Payment confirmations timing out",
    error_signature="ProcessorRateLimited: HTTP 429 Too Many Requests from acquirer",
    root_cause="Retries without backoff got us rate-limited",
)
OUTAGE = record(
    "PM-2",
    "payment-gateway",
    symptom="Card authorisations failing",
    error_signature="acquirer returned 502 Bad Gateway",
    root_cause="The acquirer's own outage",
)


def test_the_record_with_the_alerts_status_code_is_the_stronger_match() -> None:
    alert = AlertInput(
        text="payment-gateway answering 429 from the acquirer, calls time out", service="checkout"
    )
    assert match_strength(recalled(THROTTLED, 2), alert) > match_strength(recalled(OUTAGE, 2), alert)


def test_an_alert_without_a_code_is_not_faulted_for_not_repeating_one() -> None:
    oom = record("PM-3", "inventory-service", error_signature="OOMKilled (exit code 137)")
    with_code = AlertInput(text="container OOMKilled exit code 137", service="inventory-service")
    without = AlertInput(text="container OOMKilled exit code", service="inventory-service")
    assert match_strength(recalled(oom, 1), without) == match_strength(recalled(oom, 1), with_code)
