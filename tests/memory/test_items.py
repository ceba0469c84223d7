"""Items: the lines of records and runbooks a briefing compares, keyed as the embedder reads them."""

from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memory.items import (
    document_items,
    done_part,
    failed,
    failed_steps,
    item_key,
    notice,
    record_items,
    runbook_items,
    steps,
    without_details,
    worked_steps,
)
from memory.schema import IncidentRecord, format_record
from tests.memory.test_runbooks import RUNBOOK

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


def test_a_record_keys_every_step_and_failed_attempt_with_and_without_details_and_consequence() -> None:
    assert record_items(RECORD) == [
        "checked pg_stat_activity (on db-2)",
        "checked pg_stat_activity",
        "raised the pool to 40",
        "added a breaker",
        "restarting pods did not help",
        "restarting pods",
    ]
    assert without_details("Raised the pool (to 40) now") == "Raised the pool now"
    assert (
        done_part("Scaling to 18 pods first made it worse: each pod opened 20") == "Scaling to 18 pods first"
    )


def test_a_runbook_keys_its_checks_mitigations_and_risky_actions_as_the_head_and_the_guard_read_them() -> (
    None
):
    keys = runbook_items(RUNBOOK)
    # As written (the action guard), without the closing period (the head), without details, and the move
    # without what it did.
    assert "pool dashboard: active == max and pending climbing." in keys
    assert "pool dashboard: active == max and pending climbing" in keys
    assert "pool dashboard" in keys
    assert "postgres: compare pg_stat_activity with max_connections and the per-service budget" in keys
    assert "raise the pool only after computing pods x pool size" in keys
    assert "scaling pods out without checking database limits (inc-0001)." in keys
    assert "scaling pods out without checking database limits" in keys
    assert not any(k.startswith(("when", "hikaripool", "database connection pool")) for k in keys)


def test_a_stored_text_has_the_items_of_what_it_is() -> None:
    assert document_items(format_record(RECORD)) == record_items(RECORD)
    assert document_items(RUNBOOK) == runbook_items(RUNBOOK)
    assert document_items("a note that is neither") == []


@given(st.text(max_size=60))
def test_the_key_ignores_case_and_spacing_only(text: str) -> None:
    key = item_key(text)
    assert item_key(f"  {text.upper()} ") == item_key(text.upper()) and key == item_key(key)
    assert key.split() == text.lower().split()


def test_a_sentence_about_the_one_before_stays_with_it() -> None:
    failed = (
        "10:10 on-call scaled search-api from 6 to 12 pods. It did not help. "
        "Restarted the cluster; this made it worse."
    )
    assert steps(failed) == [
        "10:10 on-call scaled search-api from 6 to 12 pods. It did not help",
        "Restarted the cluster; this made it worse",
    ]
    assert [done_part(step) for step in steps(failed)] == [
        "10:10 on-call scaled search-api from 6 to 12 pods",
        "Restarted the cluster",
    ]


def test_a_resolution_step_that_says_it_did_not_help_is_a_failed_attempt() -> None:
    tried = replace(
        RECORD, resolution_steps="1. Restarted the pods, which did not help.\n2. Raised the pool to 40."
    )
    assert worked_steps(tried) == ["Raised the pool to 40"]
    assert failed_steps(tried) == ["Restarting pods did not help", "Restarted the pods, which did not help"]
    assert {"raised the pool to 40", "restarted the pods, which did not help"} <= set(record_items(tried))


LINES = [
    "Raised the pool",
    "Restarting did not help",
    "Rolled back",
    "the 5xx got worse",
    "14:20 alert fired",
]


@given(st.lists(st.sampled_from(LINES)))
def test_every_recorded_step_is_worked_failed_or_a_notice_and_only_one(lines: list[str]) -> None:
    text = "\n".join(f"- {line}" for line in lines)
    split = replace(RECORD, resolution_steps=text, failed_attempts="")
    notices = [step for step in steps(text) if notice(step)]
    assert sorted(worked_steps(split) + failed_steps(split) + notices) == sorted(steps(text))


def test_a_notice_is_how_the_team_heard_of_it_not_a_move() -> None:
    heard = [
        "14:20 alert fired",
        "14:23 acked by oncall",
        "10:07 on-call paged the search team",
        "02:10 declared a SEV2",
    ]
    assert all(map(notice, heard))
    moves = [
        "Silenced the alert for an hour",
        "Paged the DB team, who failed over the primary",
        "Joined the two configs",
    ]
    assert not any(map(notice, moves))


def test_a_clause_that_says_what_came_of_a_move_stays_with_it_and_says_whether_it_failed() -> None:
    text = "1. Restarted envoy pods; 504s continue.\n2. Rolled back the deploy; no change.\n3. Reverted it"
    assert steps(text) == [
        "Restarted envoy pods; 504s continue",
        "Rolled back the deploy; no change",
        "Reverted it",
    ]
    assert [failed(step) for step in steps(text)] == [True, True, False]
    assert steps("Killed the idle sessions; latency back to normal") == [
        "Killed the idle sessions; latency back to normal"
    ]
    assert steps("Paused the import; rolled back the deploy") == [
        "Paused the import",
        "rolled back the deploy",
    ]
    for worked in ("Waited for the import to finish; no change made", "We continued to roll back the nodes"):
        assert not any(map(failed, steps(worked)))
    assert not failed("Sent confirmations that still failed to a dead-letter queue")
    assert failed("Drained the node; still failing") and failed("Raised the pool; errors persisted")
    assert steps("Restarted the pods. This did not help; writes kept failing") == [
        "Restarted the pods. This did not help; writes kept failing"
    ]
    assert failed("Scaled the pods; latency kept climbing")
    assert steps("We kept failing over by hand; restored the primary") == [
        "We kept failing over by hand",
        "restored the primary",
    ]


def test_a_steps_effect_is_not_part_of_the_move_it_did() -> None:
    """What happened as a result ("the pool recovered", "pods restarted") is no move anyone made."""
    effects = {
        "Rolled back the deploy; the pool recovered as pods restarted": "Rolled back the deploy",
        "Rolled back the deploy as pods restarted": "Rolled back the deploy",
        "Rolled back the deploy, then the pods restarted": "Rolled back the deploy",
        "Killed the idle sessions, and latency returned to normal": "Killed the idle sessions",
        "Created the missing index, after which p99 dropped": "Created the missing index",
        "Replayed the dead letters once the index was built": "Replayed the dead letters",
        "Failed over the primary so writes resumed": "Failed over the primary",
        "Removed the loss fault; errors and retransmissions fell to baseline": "Removed the loss fault",
        "Restarted the inventory pods; errors stopped": "Restarted the inventory pods",
    }
    assert {step: done_part(step) for step in effects} == effects
    moves = [
        "Rolled back the deploy and restarted the pods",
        "Rolled back the deploy, then restarted the pods",
        "Rolled back the deploy and the team restarted the pods",
        "Cordoned and drained the three skewed nodes",
        "Re-sent the dropped invites in a throttled batch",
        "Pods restarted one at a time",
    ]
    assert [done_part(step) for step in moves] == moves


DONE = [
    "Rolled back the morning deploy",
    "Restarted the inventory pods",
    "Raised the pool (to 40) after checking max_connections",
    "Cordoned and drained the skewed nodes",
    "Rolled back the deploy, then restarted the pods",
    "Scaling to 18 pods first made it worse",
    "Paused the import: it held the lock",
]
OPENERS = ["; ", ", ", " as ", ", then ", " and ", " once ", ", after which ", " so ", " until ", ". "]
SUBJECTS = ["the pool", "pods", "p99 latency", "errors and retries", "all pods", "the queue", "the index"]
STATE_CHANGES = ["recovered", "restarted", "returned to normal", "came back", "was built", "resumed"]


@given(
    st.sampled_from(DONE),
    st.sampled_from(OPENERS),
    st.sampled_from(SUBJECTS),
    st.sampled_from(STATE_CHANGES),
    st.sampled_from(["", " within minutes", " at 14:20"]),
)
def test_an_effect_appended_to_a_step_never_changes_its_move_part(
    step: str, opener: str, subject: str, change: str, tail: str
) -> None:
    assert done_part(f"{step}{opener}{subject} {change}{tail}") == done_part(step)


def test_an_effect_after_a_semicolon_stays_with_the_step_it_came_of() -> None:
    assert steps("1. Rolled back the deploy; pods restarted.\n2. Fixed the leak") == [
        "Rolled back the deploy; pods restarted",
        "Fixed the leak",
    ]
