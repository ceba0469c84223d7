"""Precedent confidence reads what the alert says: a status code the alert names tells two records apart."""

from agent.core.confidence import FEATURES, features, precedent_confidence, shipped_fit
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


LOOKALIKE = record(
    "PM-5",
    "checkout-service",
    symptom="CheckoutLatencyHigh paged during the nightly import; error rate 0.1 %, no customer reports",
    error_signature="CheckoutLatencyHigh: p99 above 2 s; no 5xx, hikaricp_connections_pending 0",
    root_cause="The nightly import slowed price lookups; nothing failed",
)


def test_an_alert_that_contradicts_a_precedent_makes_it_less_likely() -> None:
    agrees = "checkout p99 2.4 s during the nightly import, no 5xx"
    contradicts = "checkout p99 2.4 s during the nightly import, pool timeout acquiring connection"
    assert named(features(recalled(LOOKALIKE, 1), agrees, same_service=True))["contradicted"] == 0.0
    assert named(features(recalled(LOOKALIKE, 1), contradicts, same_service=True))["contradicted"] == 1.0
    fit = shipped_fit()
    weight = dict(zip(FEATURES, fit.weights, strict=True))["contradicted"]
    assert weight < 0, "the shipped fit must count a contradiction against a precedent"


def test_the_same_components_in_other_words_are_shared() -> None:
    dns = record("PM-6", "coredns", error_signature="dial tcp: lookup payment-gateway.svc: i/o timeout")
    alert = "search pods cannot resolve es-data: DNS lookup timing out"
    values = named(features(recalled(dns, 3), alert, same_service=False))
    assert values["components_shared"] == 1.0 and values["same_service"] == 0.0
