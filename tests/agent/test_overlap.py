"""The lexical half of a match: forgiving of wording, strict on codes, blind to the alert's own name."""

from agent.core.overlap import lexical, stem
from tests.agent.fakes import record


def test_plural_and_tense_meet_halfway() -> None:
    assert stem("logins") == stem("login")
    assert stem("resolving") == stem("resolve")
    assert stem("services") == stem("service")
    assert stem("process") == "process" and stem("pods") == "pods"


def test_the_alert_name_alone_is_no_evidence_of_the_same_failure() -> None:
    lookalike = record("PM-1", "search-service", error_signature="SearchLatencyHigh: p95 3.0 s")
    alert = "SearchLatencyHigh: search p95 4.0s, queries rejected by the data nodes"
    assert lexical(lookalike, "", alert, "SearchLatencyHigh") < lexical(lookalike, "", alert)
