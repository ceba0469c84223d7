"""No scenario alert copies the record it expects, so a passing recall scenario means recall worked."""

from dataclasses import asdict

import pytest

from evals.scenarios import DEFAULT_SCENARIOS
from evals.scenarios.scenario import AlertIn, RecordIn, Scenario, load_scenarios, records_for
from evals.scenarios.verbatim import EXACT, MAX_EXACT_SHARE, copies, expected_ids, is_recall, words
from web.app.history import load_seeds

SCENARIOS = load_scenarios(DEFAULT_SCENARIOS)
SEEDS = [RecordIn.model_validate(asdict(row.record())) for _, row in load_seeds().rows]


def expected_records(scenario: Scenario) -> list[RecordIn]:
    pool = {r.incident_id: r for r in (SEEDS if scenario.memory.seeds else [])}
    pool |= {r.incident_id: r for r in records_for(scenario, DEFAULT_SCENARIOS)}
    missing = [i for i in expected_ids(scenario) if i not in pool]
    assert not missing, f"{scenario.id} expects records its memory does not hold: {missing}"
    return [pool[i] for i in expected_ids(scenario)]


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if EXACT not in s.kinds], ids=lambda s: s.id)
def test_the_alert_does_not_copy_the_record_it_expects(scenario: Scenario) -> None:
    found = copies(scenario, expected_records(scenario))
    assert found == [], "\n".join(f"{c.record} {c.kind}: {c.words!r}" for c in found)


def test_exact_recurrences_are_at_most_a_fifth_of_the_recall_scenarios() -> None:
    recall = [s for s in SCENARIOS if is_recall(s)]
    exact = [s for s in recall if EXACT in s.kinds]
    assert len(exact) <= MAX_EXACT_SHARE * len(recall), [s.id for s in exact]


def _scenario(description: str) -> Scenario:
    return Scenario(
        id="probe",
        title="probe",
        alert=AlertIn(source="generic", payload={"title": "t", "description": description}),
        expect={"top1": "PM-1"},  # type: ignore[arg-type]
    )


RECORD = RecordIn(
    incident_id="PM-1",
    service="checkout-service",
    timestamp="2025-01-01T00:00:00Z",  # type: ignore[arg-type]
    symptom="Checkout p99 latency above 5 s during the sale.",
    error_signature="HikariPool-1 - Connection is not available, request timed out after 30000ms",
    root_cause="The pool was sized for average load.",
    resolution_steps="Raised maximumPoolSize to 60.",
)


def test_case_and_punctuation_do_not_hide_a_copy() -> None:
    assert words("HikariPool-1 — Connection: is NOT available!") == [
        "hikaripool",
        "1",
        "connection",
        "is",
        "not",
        "available",
    ]
    found = copies(_scenario("HIKARIPOOL-1: connection... is not available"), [RECORD])
    assert [c.kind for c in found] == ["shingle"]


def test_a_five_word_overlap_is_allowed_and_a_short_signature_copied_whole_is_not() -> None:
    assert copies(_scenario("connection is not available, pool hikaripool"), [RECORD]) == []
    short = RECORD.model_copy(update={"error_signature": "OOMKilled (exit code 137)"})
    assert [c.kind for c in copies(_scenario("pod oomkilled exit code 137 again"), [short])] == ["signature"]
    assert copies(_scenario("reason=OOMKilled exitCode=137"), [short]) == []
