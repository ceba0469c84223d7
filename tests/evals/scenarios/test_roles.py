"""The eval's in-role check: a claim counts as supported only by a field its role may rest on."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evals.scenarios.roles import ROLE_SOURCES, check_roles
from memory.schema import format_record
from tests.agent.fakes import record

RECORD = record("INC-0001")
EVIDENCE = [
    {"n": 1, "kind": "alert", "text": "checkout 500s: remaining connection slots are reserved"},
    {"n": 2, "kind": "incident", "text": format_record(RECORD)},
    {
        "n": 3,
        "kind": "runbook",
        "text": "RUNBOOK RB-1 — checkout-service\n"
        "Title: Checkout connection pool exhaustion\n"
        "First checks:\n1. Compare active connections with max_connections in pg_stat_activity.\n"
        "Mitigations that worked:\n- Enable the checkout circuit breaker so requests fail fast.\n"
        "Risky actions:\n- Restarting every checkout pod at once: reconnect storm and cold caches.",
    },
]
RUNBOOK_TEXT = {
    "first_checks": "Compare active connections with max_connections in pg_stat_activity",
    "suggested_fix": "Enable the checkout circuit breaker so requests fail fast",
    "risky_actions": "Restarting every checkout pod at once: reconnect storm and cold caches",
}
FIELD_TEXT = {
    "root_cause": RECORD.root_cause,
    "resolution_steps": "Raise the pool size to 50",
    "failed_attempts": RECORD.failed_attempts,
    "error_signature": RECORD.error_signature,
}


def briefing(**sections: list[dict[str, Any]]) -> dict[str, Any]:
    return {"evidence": EVIDENCE, **sections}


def test_a_failed_attempt_offered_as_a_fix_is_out_of_role_and_named() -> None:
    fix = {"text": f"{RECORD.failed_attempts} [2]", "citations": [2]}
    support = check_roles(briefing(suggested_fix=[fix], risky_actions=[fix]))
    assert support.as_dict()["by_role"]["suggested_fix"] == {"kept": 1, "in_role": 0}
    assert support.as_dict()["by_role"]["risky_actions"] == {"kept": 1, "in_role": 1}
    assert support.failed_attempt_fixes == [fix["text"]] and support.rate() == 0.5


def test_a_claim_citing_nothing_that_says_it_is_unsupported() -> None:
    claim = {"text": "Restart the payment processor [1]", "citations": [1]}
    assert check_roles(briefing(suggested_fix=[claim])).rate() == 0.0


@given(st.sampled_from(list(ROLE_SOURCES)), st.sampled_from(sorted(FIELD_TEXT)))
def test_a_claim_quoting_a_field_is_in_role_exactly_when_its_role_may_rest_on_it(
    section: str, field: str
) -> None:
    claim = {"text": FIELD_TEXT[field], "citations": [2]}
    in_role = check_roles(briefing(**{section: [claim]})).rate() == 1.0
    assert in_role == (field in ROLE_SOURCES[section])


@given(st.sampled_from(sorted(RUNBOOK_TEXT)), st.sampled_from(sorted(RUNBOOK_TEXT)))
def test_a_runbook_line_is_in_role_exactly_in_the_role_of_its_section(section: str, source: str) -> None:
    """A runbook's risky action is a risky action, not a fix, though the same text holds both."""
    claim = {"text": f"{RUNBOOK_TEXT[source]} [3]", "citations": [3]}
    in_role = check_roles(briefing(**{section: [claim]})).rate() == 1.0
    assert in_role == (section == source)


def test_claims_are_counted_by_who_wrote_them_and_each_miss_is_named() -> None:
    by_model = {"text": f"{RECORD.root_cause} [2]", "citations": [2], "origin": "model"}
    wrong = {"text": f"{RECORD.failed_attempts} [2]", "citations": [2], "origin": "model"}
    filled = {"text": "Raise the pool size to 50 [2]", "citations": [2], "origin": "evidence"}
    old = {"text": "Raise the pool size to 50 [2]", "citations": [2]}
    support = check_roles(briefing(likely_causes=[by_model], suggested_fix=[wrong, filled, old]))
    report = support.as_dict()
    assert report["by_origin"] == {
        "model": {"kept": 2, "in_role": 1, "in_role_rate": 0.5},
        "evidence": {"kept": 1, "in_role": 1, "in_role_rate": 1.0},
        "unrecorded": {"kept": 1, "in_role": 1, "in_role_rate": 1.0},
    }
    [miss] = report["out_of_role"]
    assert miss["role"] == "suggested_fix" and miss["origin"] == "model"
    assert miss["part"] == "2:failed_attempts" and miss["share"] == 1.0


def test_a_claim_a_field_of_its_role_holds_as_fully_as_another_is_in_role() -> None:
    """Raise, pool and size are in both the root cause and the step: the step's fix is in role."""
    cause = "connection pool size too small for the sale"
    step = "Raise the pool size to 50"
    evidence = [{"n": 2, "kind": "incident", "text": format_record(record("INC-0002", root_cause=cause))}]
    fix = {"text": "Raise the connection pool size [2]", "citations": [2]}
    both = {"evidence": evidence, "suggested_fix": [fix]}
    assert step in evidence[0]["text"]
    assert check_roles(both).rate() == 1.0
    assert check_roles({"evidence": evidence, "likely_causes": [fix]}).rate() == 1.0


def test_a_fix_joining_a_failed_attempt_to_a_step_that_worked_is_named_as_a_failed_attempt_fix() -> None:
    """Taken whole, the claim holds more of the step's words than of the failed attempt's; the engineer
    would still be sent to add replicas, which made it worse."""
    joined = "Check pool metrics, raise the pool size to 50 and add a circuit breaker; then add app replicas"
    fix = {"text": f"{joined} [2]", "citations": [2]}
    support = check_roles(briefing(suggested_fix=[fix]))
    assert support.failed_attempt_fixes == [fix["text"]]
    assert support.as_dict()["by_role"]["suggested_fix"] == {"kept": 1, "in_role": 0}


def test_a_fix_stating_a_number_its_field_does_not_hold_is_out_of_role() -> None:
    """A pool size is not paraphrase: "raise the pool size to 80" is not what "to 50" says."""
    wrong = {"text": "Raise the pool size to 80 [2]", "citations": [2]}
    right = {"text": "Raise the pool size to 50 [2]", "citations": [2]}
    support = check_roles(briefing(suggested_fix=[wrong, right]))
    assert support.as_dict()["by_role"]["suggested_fix"] == {"kept": 2, "in_role": 1}
    assert [miss["text"] for miss in support.out_of_role] == [wrong["text"]]
