"""The resolution conversation's guards: stand-ins are not values, a fix is checked in its role, and a
refused write is traced as refused."""

import pytest

from agent.briefing.loop import _status
from agent.core.claims import Grounds
from agent.core.conversation import LoggedPostMortem, ToolCall, ToolOutcome
from agent.core.evidence import AlertInput, Evidence
from agent.core.guard import guard
from agent.core.schema import Claim, ClaimCheck
from agent.core.similarity import Similarity
from agent.resolution.drafter import EvidenceOnlyDrafter, draft_fields
from agent.resolution.support import fix_not_in_role, is_value
from memory.embedder import MiniLMEmbedder
from tests.agent.fakes import match, record, with_matches


@pytest.mark.parametrize(
    "text", ["not provided", "N/A", "unknown", "n/a.", "TBD", "-", "Not specified", "  "]
)
def test_stand_ins_are_not_values(text: str) -> None:
    assert not is_value(text)


@pytest.mark.parametrize(
    "text", ["Raised the pool to 60", "unknown host in the DNS config", "none of the pods"]
)
def test_real_text_is_a_value(text: str) -> None:
    assert is_value(text)


def test_a_draft_whose_required_fields_say_not_provided_is_not_complete() -> None:
    notes = "\n".join(
        f"{label}: not provided" for label in ("Root cause", "Resolution steps", "Outcome", "Symptom")
    )
    fields = draft_fields(
        notes=notes,
        alert=AlertInput(text="checkout 500s", title="Checkout down"),
        briefing=None,
        notes_n=2,
        briefing_n=None,
    )
    assert not EvidenceOnlyDrafter(fields, commit=True).ready


def _evidence() -> Evidence:
    evidence = Evidence(AlertInput(text="checkout pool exhausted", service="checkout-service"))
    found = match(
        record("INC-0001", failed_attempts="Raised the checkout pool to 80 per pod, which made it worse"),
        0.9,
        2,
    )
    evidence, _ = with_matches(evidence, found).with_item(
        kind="notes", title="Notes by dana", text="We raised the pool to 80."
    )
    return evidence


def test_a_drafted_fix_that_a_cited_record_says_failed_is_refused_unless_the_notes_say_it() -> None:
    evidence, stems = _evidence(), Similarity(None)
    assert fix_not_in_role("1. Raise the checkout pool to 80 per pod", [2], evidence, stems)
    assert not fix_not_in_role("1. Raise the pool size to 50", [2], evidence, stems)
    assert not fix_not_in_role("1. Raise the checkout pool to 80 per pod", [3], evidence, stems)  # the notes


def test_a_drafted_fix_is_checked_as_a_briefings_fix_is_by_meaning_too() -> None:
    """A failed attempt said in other words (few shared stems) is caught by the embedder, in a draft as
    in a briefing: the guard removes the same line for the same reason."""
    evidence, meaning = _evidence(), Similarity(MiniLMEmbedder())
    paraphrase = "Set the checkout max pool size to 80 for each pod"
    assert fix_not_in_role(f"1. {paraphrase}", [2], evidence, meaning)
    report = ClaimCheck()
    fix = Claim(text=paraphrase, statement=paraphrase, citations=[2], role="fix")
    assert not guard([fix], Grounds(evidence), meaning, report)
    assert [(r.reason, r.field) for r in report.removed] == [("other role", "failed_attempt")]
    assert not fix_not_in_role(f"1. {paraphrase}", [2], evidence, Similarity(None))  # stems miss it


def test_a_refused_log_incident_is_traced_as_refused_with_its_reason() -> None:
    logged = LoggedPostMortem(
        fields={}, citations={}, written=False, version=None, message="Not logged", refused="no support"
    )
    call = ToolCall(id="c1", name="log_incident", arguments="{}")
    outcome = ToolOutcome(
        call=call, tool="log_incident", args={}, ok=True, text="", duration_ms=1.0, logged=logged
    )
    assert _status(outcome) == "refused"
