"""An answer becomes a briefing: history from the calibrated numbers, ids and summaries checked."""

from dataclasses import replace

from agent.briefing.assemble import assemble
from agent.briefing.finish import finish
from agent.core.conversation import Conversation, ModelTurn
from agent.core.evidence import AlertInput, Evidence
from agent.core.schema import Briefing, Claim, Mode, ModelAnswer
from agent.core.similarity import Similarity
from tests.agent.fakes import match, record, with_matches


class _Model:
    name = "scripted"
    mode: Mode = "llm"

    async def complete(self, messages: object, tools: object) -> ModelTurn:
        raise AssertionError("not called")

    async def aclose(self) -> None:
        return None


def _conversation(*probabilities: float) -> Conversation:
    evidence = Evidence(AlertInput(text="checkout pool exhausted", service="checkout-service"))
    found = [match(record(f"INC-000{i + 1}"), p, i + 2) for i, p in enumerate(probabilities)]
    evidence = replace(with_matches(evidence, *found), extra_known_ids=frozenset({"pattern-pool"}))
    return Conversation(messages=[], evidence=evidence)


def _brief(answer: ModelAnswer, *probabilities: float) -> tuple[Briefing, list[str]]:
    warnings: list[str] = []
    briefing = finish(answer, _conversation(*probabilities), _Model(), [], warnings, Similarity(None))
    return briefing, warnings


def test_related_incidents_read_the_calibrated_threshold_not_the_model() -> None:
    answer = ModelAnswer(
        summary="Pool exhausted [2].", related_incidents=["INC-0001", "INC-0002"], seen_before="novel"
    )
    briefing, _ = _brief(answer, 0.9, 0.06)
    assert [r.id for r in briefing.related_incidents] == ["INC-0001"]


def test_seen_before_is_never_recurring_below_the_settled_threshold() -> None:
    answer = ModelAnswer(summary="Pool exhausted [2].", seen_before="recurring")
    briefing, _ = _brief(answer, 0.68)
    assert briefing.seen_before == "similar"


def test_uncited_and_history_summary_sentences_are_removed_and_counted() -> None:
    answer = ModelAnswer(
        summary="Likely noise, two incidents in the last 24 hours [2]. The pool is exhausted [2]. "
        "Raise it now.",
        seen_before="recurring",
    )
    briefing, warnings = _brief(answer, 0.9)
    assert briefing.summary == "The pool is exhausted [2]."
    removed = briefing.claim_check.removed
    assert sorted(r.reason for r in removed) == ["history", "uncited"]
    assert any(w.startswith("2 claim(s) removed") for w in warnings)


def test_real_ids_joined_by_commas_and_pattern_ids_are_not_called_invented() -> None:
    answer = ModelAnswer(
        summary="Pool exhausted [2].",
        related_incidents=["INC-0001, INC-0002", "pattern-pool", "INC-4242"],
        seen_before="similar",
    )
    briefing, warnings = _brief(answer, 0.9, 0.7)
    assert [r.id for r in briefing.related_incidents] == ["INC-0001", "INC-0002"]
    invented = [w for w in warnings if "not in the evidence" in w]
    assert invented == ["The answer named incident id(s) not in the evidence, removed: INC-4242"]


def test_a_fix_the_guard_empties_falls_back_to_the_evidence_only_fixes() -> None:
    bad = Claim(text="Adding app replicas without checking database max_connections [2]")
    answer = ModelAnswer(summary="Pool exhausted [2].", suggested_fix=[bad], seen_before="similar")
    briefing, warnings = _brief(answer, 0.9)
    fixes = briefing.suggested_fix
    assert fixes and all(f.field in ("resolution_step", "outcome", "mitigation") for f in fixes)
    assert "replicas" not in " ".join(f.text for f in fixes)
    assert any("suggested fix held" in w for w in warnings)


def test_a_briefing_stored_before_claims_were_typed_still_loads() -> None:
    stored = {
        "summary": "s",
        "first_checks": [{"text": "Look for the error seen in INC-1: HTTP 503 [2]", "citations": [2]}],
        "seen_before": "similar",
        "mode": "evidence-only",
        "memory": "on",
        "generated_at": "2026-03-01T00:00:00Z",
        "head": {"first_line": "x", "checks": [{"text": "Look for this error: HTTP 503", "citations": [2]}]},
    }
    briefing = Briefing.model_validate(stored)
    [check] = briefing.first_checks
    assert check.text.startswith("Look for the error") and check.role is None and check.field is None
    assert briefing.head is not None and briefing.head.checks[0].field is None
    assert briefing.claim_check.removed == []


def test_each_claim_says_whether_the_model_wrote_it_or_it_fills_a_list_the_guard_emptied() -> None:
    cause = Claim(text=f"{record('INC-0001').root_cause} [2]", citations=[2], origin="evidence")
    bad = Claim(text="Adding app replicas without checking database max_connections [2]", citations=[2])
    answer = ModelAnswer(
        summary="Pool exhausted [2].", likely_causes=[cause], suggested_fix=[bad], seen_before="similar"
    )
    briefing, _ = _brief(answer, 0.9)
    # The model cannot say its own claim is an evidence-only one: who wrote it is set, not read.
    assert [c.origin for c in briefing.likely_causes] == ["model"]
    assert briefing.suggested_fix and {f.origin for f in briefing.suggested_fix} == {"evidence"}


def test_a_model_claim_resting_on_a_record_under_the_match_threshold_is_not_briefed() -> None:
    """What the local model did with a pool alert: the nightly-import lookalike (1 % likely relevant) and
    a payment record (28 %) gave its only causes and its fix, stated as plainly as the precedent."""
    lookalike = record(
        "INC-0009",
        error_signature="p99 over 2s, pool pending 0",
        root_cause="the nightly price import held row locks on the catalogue tables",
        resolution_steps="1. Moved the import to 04:00",
    )
    evidence = Evidence(AlertInput(text="checkout pool exhausted", service="checkout-service"))
    evidence = with_matches(evidence, match(record("INC-0001"), 0.9, 2), match(lookalike, 0.01, 3))
    answer = ModelAnswer(
        summary="Pool exhausted [2].",
        likely_causes=[Claim(text="the nightly price import held row locks [3]", citations=[3])],
        first_checks=[Claim(text="p99 over 2s, pool pending 0 [3]", citations=[3])],
        suggested_fix=[Claim(text="Move the import to 04:00 [3]", citations=[3])],
        seen_before="similar",
    )
    warnings: list[str] = []
    conversation = Conversation(messages=[], evidence=evidence)
    briefing = finish(answer, conversation, _Model(), [], warnings, Similarity(None))
    lists = [briefing.likely_causes, briefing.first_checks, briefing.suggested_fix]
    assert all(lines for lines in lists)
    assert all(c.citations == [2] for lines in lists for c in lines)
    assert "import" not in " ".join(c.text for lines in lists for c in lines)
    assert any("under the match threshold" in w for w in warnings)


def test_a_model_claim_on_a_moderate_precedent_is_labeled_uncertain_as_the_evidence_only_one_is() -> None:
    """The local model's only cause for a pool alert was the connection-budget record's (33 % likely
    relevant), stated as plainly as the 89 % precedent it stood in for."""
    budget = record("INC-0043", root_cause="the Postgres connection budget was exhausted, not the pool")
    evidence = Evidence(AlertInput(text="checkout pool exhausted", service="checkout-service"))
    evidence = with_matches(evidence, match(record("INC-0001"), 0.89, 2), match(budget, 0.33, 3))
    cause = Claim(text="the Postgres connection budget was exhausted [3]", citations=[3])
    answer = ModelAnswer(summary="Pool exhausted [2].", likely_causes=[cause], seen_before="similar")
    conversation = Conversation(messages=[], evidence=evidence)
    briefing = finish(answer, conversation, _Model(), [], [], Similarity(None))
    kept = next(c for c in briefing.likely_causes if c.record == "INC-0043")
    assert kept.qualifier == "uncertain" and kept.text.startswith("Uncertain (moderate match): ")
    assembled = [c for c in assemble(conversation.view()).likely_causes if c.record == "INC-0043"]
    assert assembled and assembled[0].text.startswith("Uncertain (moderate match): ")


def test_related_incidents_are_listed_most_likely_first_whatever_order_the_model_names_them() -> None:
    """The local model named the 39 % connection-budget record before the 95 % pool precedent, and the
    page listed it first."""
    answer = ModelAnswer(
        summary="Pool exhausted [2].", related_incidents=["INC-0002", "INC-0001"], seen_before="similar"
    )
    briefing, _ = _brief(answer, 0.95, 0.39)
    assert [r.id for r in briefing.related_incidents] == ["INC-0001", "INC-0002"]


def test_the_word_cited_a_model_copied_from_the_answer_format_is_not_briefed() -> None:
    """A small model answered "rolling restart of auth-service, cited [2]": the instructions' format
    said "cited" where the claim goes. The engineer reads the claim and its marker, not the template."""
    cause = record("INC-0001").root_cause
    answer = ModelAnswer(
        summary="Pool exhausted [2].",
        likely_causes=[
            Claim(text=f"{cause}, cited [2]", citations=[2]),
            Claim(text=f"{cause} (cited)", citations=[2]),
        ],
        seen_before="similar",
    )
    briefing, _ = _brief(answer, 0.9)
    assert [c.text for c in briefing.likely_causes] == [f"{cause} [2]", cause]


def test_the_stated_precedents_recorded_cause_leads_when_the_models_causes_left_it_out() -> None:
    """The local model's only cause was a moderate record's, labeled uncertain and kept; the 89 %
    precedent the briefing states had its recorded cause nowhere in the list the head leads with."""
    budget = record("INC-0043", root_cause="the Postgres connection budget was exhausted, not the pool")
    evidence = Evidence(AlertInput(text="checkout pool exhausted", service="checkout-service"))
    evidence = with_matches(evidence, match(record("INC-0001"), 0.89, 2), match(budget, 0.33, 3))
    cause = Claim(text="the Postgres connection budget was exhausted [3]", citations=[3])
    answer = ModelAnswer(summary="Pool exhausted [2].", likely_causes=[cause], seen_before="similar")
    warnings: list[str] = []
    briefing = finish(
        answer, Conversation(messages=[], evidence=evidence), _Model(), [], warnings, Similarity(None)
    )
    assert [(c.record, c.origin) for c in briefing.likely_causes] == [
        ("INC-0001", "evidence"),
        ("INC-0043", "model"),
    ]
    assert any("INC-0001" in w and "recorded cause" in w for w in warnings)


def test_a_model_cause_on_the_stated_precedent_needs_no_evidence_only_one_beside_it() -> None:
    cause = Claim(text=f"{record('INC-0001').root_cause} [2]", citations=[2])
    answer = ModelAnswer(summary="Pool exhausted [2].", likely_causes=[cause], seen_before="similar")
    briefing, warnings = _brief(answer, 0.9, 0.4)
    assert [(c.record, c.origin) for c in briefing.likely_causes] == [("INC-0001", "model")]
    assert not any("recorded cause" in w for w in warnings)
