"""The words a match is compared by: forgiving of wording, strict on codes, blind to the alert's own name."""

from agent.core.overlap import codes, stem, terms


def test_plural_and_tense_meet_halfway() -> None:
    assert stem("logins") == stem("login")
    assert stem("resolving") == stem("resolve")
    assert stem("services") == stem("service")
    assert stem("process") == "process" and stem("pods") == "pods"


def test_the_alert_name_alone_is_no_evidence_of_the_same_failure() -> None:
    alert = "SearchLatencyHigh: search p95 4.0s, queries rejected by the data nodes"
    assert "searchlatencyhigh" in terms(alert)
    assert "searchlatencyhigh" not in terms(alert, masked=frozenset({"searchlatencyhigh"}))


def test_status_codes_count_only_where_asked() -> None:
    assert codes("HTTP 429 from the acquirer, not 5xx") == {"429"}
    assert "429" not in terms("HTTP 429 from the acquirer", with_codes=False)
