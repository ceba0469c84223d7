"""Precedent confidence reads what the alert says: a status code the alert names tells two records apart."""

from agent.core.confidence import FEATURES, features, precedent_confidence
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


def named(values: list[float]) -> dict[str, float]:
    return dict(zip(FEATURES, values, strict=True))


def test_the_record_with_the_alerts_status_code_is_the_likelier_precedent() -> None:
    alert = "payment-gateway answering 429 from the acquirer, calls time out"
    throttled = named(features(recalled(THROTTLED, 2), alert, same_service=True))
    outage = named(features(recalled(OUTAGE, 2), alert, same_service=True))
    assert throttled["code_agrees"] == 1.0 and throttled["code_conflicts"] == 0.0
    assert outage["code_agrees"] == 0.0 and outage["code_conflicts"] == 1.0
    likely = precedent_confidence(recalled(THROTTLED, 2), alert, same_service=True)
    unlikely = precedent_confidence(recalled(OUTAGE, 2), alert, same_service=True)
    assert likely.probability > unlikely.probability


def test_an_alert_without_a_code_is_not_faulted_for_not_repeating_one() -> None:
    oom = record("PM-3", "inventory-service", error_signature="OOMKilled (exit code 137)")
    with_code = named(features(recalled(oom, 1), "container OOMKilled exit code 137", same_service=True))
    without = named(features(recalled(oom, 1), "container OOMKilled exit code", same_service=True))
    assert without["code_conflicts"] == 0.0 and without["signature_repeated"] == 1.0
    assert with_code["code_agrees"] == 1.0


def test_the_alerts_own_name_is_no_evidence() -> None:
    lookalike = record("PM-4", "search-service", symptom="SearchLatencyHigh paged during the snapshot")
    alert = "SearchLatencyHigh: p95 above 3 s"
    masked = named(features(recalled(lookalike, 1), alert, same_service=True, alertname="SearchLatencyHigh"))
    unmasked = named(features(recalled(lookalike, 1), alert, same_service=True))
    assert masked["symptom_overlap"] < unmasked["symptom_overlap"]
