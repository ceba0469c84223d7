"""Record items: the steps and failed attempts a briefing compares, keyed as the embedder reads them."""

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memory.items import item_key, record_items, steps, without_details
from memory.schema import IncidentRecord

RECORD = IncidentRecord(
    incident_id="INC-1",
    service="checkout-service",
    timestamp=datetime(2026, 1, 5, tzinfo=UTC),
    symptom="Checkout times out.",
    error_signature="pool timeout",
    root_cause="The pool was too small.",
    resolution_steps="1. Checked pg_stat_activity (on db-2).\n2. Raised the pool to 40; added a breaker.",
    runbook_used="RB-1",
    outcome="Resolved.",
    failed_attempts="Restarting pods did not help.",
    resolved_by="dana",
)


def test_steps_split_list_items_clauses_and_sentences() -> None:
    assert steps(RECORD.resolution_steps) == [
        "Checked pg_stat_activity (on db-2)",
        "Raised the pool to 40",
        "added a breaker",
    ]


def test_a_record_keys_every_step_and_failed_attempt_with_and_without_details() -> None:
    assert record_items(RECORD) == [
        "checked pg_stat_activity (on db-2)",
        "checked pg_stat_activity",
        "raised the pool to 40",
        "added a breaker",
        "restarting pods did not help",
    ]
    assert without_details("Raised the pool (to 40) now") == "Raised the pool now"


@given(st.text(max_size=60))
def test_the_key_ignores_case_and_spacing_only(text: str) -> None:
    key = item_key(text)
    assert item_key(f"  {text.upper()} ") == item_key(text.upper()) and key == item_key(key)
    assert key.split() == text.lower().split()
