"""The claim guard: a claim stays only when a field of its role in what it cites says it."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.claims import Grounds
from agent.core.evidence import AlertInput, Evidence
from agent.core.guard import ROLE_FIELDS, check, guard, numbers
from agent.core.schema import Claim, ClaimCheck, ClaimField, Role
from agent.core.similarity import Similarity
from tests.agent.fakes import match, record, with_matches
from tests.memory.fakes import CountingEmbedder

POOL = record(
    "INC-0001",
    root_cause="The checkout pool was sized for average load, not a flash sale",
    resolution_steps="1. Rolled the pods one at a time\n2. Enabled the circuit breaker on reservations",
    failed_attempts="Raised the checkout pool to 80 per pod, which made it worse: "
    "the primary hit max_connections",
)


def _evidence() -> Evidence:
    evidence = Evidence(AlertInput(text="checkout p99 high, pool waits", service="checkout-service"))
    return with_matches(evidence, match(POOL, 0.9, 2))


def _check(
    role: Role, text: str, field: ClaimField | None = None, citations: tuple[int, ...] = (2,)
) -> Claim | None:
    claim = Claim(text=text, citations=list(citations), role=role, field=field)
    return check(claim, Grounds(_evidence()), Similarity(None)).claim


def test_a_recorded_failed_attempt_offered_as_a_fix_is_removed() -> None:
    """The small model's "Raise the checkout's pool to 80 per pod [2]", where [2] says it made it worse."""
    verdict = check(
        Claim(text="Raise the checkout pool to 80 per pod", citations=[2], role="fix"),
        Grounds(_evidence()),
        Similarity(None),
    )
    assert verdict.claim is None and verdict.removed is not None
    assert (verdict.removed.reason, verdict.removed.field) == ("other role", "failed_attempt")
    # Even when it names a field of its role.
    assert _check("fix", "Raise the checkout pool to 80 per pod", "resolution_step") is None


def test_a_records_fix_cited_as_a_risky_move_is_removed() -> None:
    assert _check("risky", "Rolled the pods one at a time") is None
    kept = _check("fix", "Roll the pods one at a time")
    assert kept is not None and (kept.field, kept.record) == ("resolution_step", "INC-0001")


def test_one_failed_attempt_is_kept_only_as_a_risky_move() -> None:
    attempt = "Raised the checkout pool to 80 per pod"
    assert [_check(role, attempt) is not None for role in ("cause", "check", "fix", "risky")] == [
        False,
        False,
        False,
        True,
    ]


def test_a_cause_rests_on_the_root_cause_and_an_uncited_claim_on_nothing() -> None:
    assert _check("cause", "checkout pool sized for average load") is not None
    assert _check("cause", "checkout pool sized for average load", citations=()) is None
    assert _check("cause", "A bad deploy of the pricing service") is None


def test_a_field_the_role_cannot_rest_on_is_refused_as_named() -> None:
    verdict = check(
        Claim(text="Rolled the pods one at a time", citations=[2], role="risky", field="resolution_step"),
        Grounds(_evidence()),
        Similarity(None),
    )
    assert verdict.removed is not None and verdict.removed.reason == "wrong field"


def test_the_report_counts_kept_and_removed_by_role_and_says_why() -> None:
    report = ClaimCheck()
    claims = [
        Claim(text="Roll the pods one at a time", citations=[2], role="fix"),
        Claim(text="Raise the checkout pool to 80 per pod", citations=[2], role="fix"),
        Claim(text="Raise the checkout pool to 80 per pod", citations=[], role="risky"),
    ]
    kept = guard(claims, Grounds(_evidence()), Similarity(None), report)
    assert [c.text for c in kept] == ["Roll the pods one at a time"]
    assert report.kept == {"fix": 1}
    assert report.removed_by_role() == {"fix": 1, "risky": 1}
    assert report.removed_by_reason() == {"other role": 1, "uncited": 1}
    assert report.in_role_support == 1 / 3
    sentence = report.sentence()
    assert sentence is not None and sentence.startswith("2 claim(s) removed: ")
    assert (
        "1 risky that cite no source" in sentence and "1 fix that rest on a field of another role" in sentence
    )


def test_a_claim_in_its_fields_own_words_rests_on_it_without_embedding_anything() -> None:
    """The evidence-only assembler states recorded fields as they are: comparing them by meaning would
    embed every field of every cited record at briefing time, for an answer known in advance."""
    embedder = CountingEmbedder()
    report = ClaimCheck()
    claims = [
        Claim(
            text="Root cause recorded for INC-0001: the checkout pool was sized for average load",
            statement="The checkout POOL was sized for  average load, not a flash sale",
            citations=[2],
            role="cause",
            field="root_cause",
        ),
        Claim(text="Rolled the pods one at a time", citations=[2], role="fix"),
    ]
    kept = guard(claims, Grounds(_evidence()), Similarity(embedder), report)
    assert [(c.field, c.record) for c in kept] == [
        ("root_cause", "INC-0001"),
        ("resolution_step", "INC-0001"),
    ]
    assert embedder.embedded == []
    # A field of another role in the same words is no support for the role: it is compared as before.
    assert _check("fix", "Raised the checkout pool to 80 per pod, which made it worse") is None
    assert _check("fix", "Rolled the pods one at a time", field="mitigation") is None


@given(st.sampled_from(sorted(ROLE_FIELDS)), st.text(min_size=1, max_size=60))
def test_nothing_that_cites_nothing_is_kept(role: Role, text: str) -> None:
    assert _check(role, text, citations=()) is None


def test_every_field_a_claim_can_name_is_in_some_role() -> None:
    named = {f for fields in ROLE_FIELDS.values() for f in fields}
    assert named <= set(ClaimField.__args__)  # type: ignore[attr-defined]


def test_a_claim_that_holds_a_short_field_and_adds_its_own_words_is_unsupported() -> None:
    """Shared words counted against the shorter text make the signature "say" any claim that quotes it;
    the field must hold at least half of the claim's words."""
    quoted = "Look for FATAL: remaining connection slots are reserved"
    assert _check("check", f"{quoted} [2]") is not None
    padded = f"{quoted} in the gateway logs during the nightly batch import after the replica failover [2]"
    verdict = check(Claim(text=padded, citations=[2], role="check"), Grounds(_evidence()), Similarity(None))
    assert verdict.claim is None and verdict.removed is not None
    assert verdict.removed.reason == "unsupported"


def test_a_fix_or_check_that_joins_a_recorded_failed_attempt_to_a_step_that_worked_is_removed() -> None:
    """The small model's "scale the checkout service from 6 to 18 pods and add a circuit breaker around
    the order write [2]" was kept as a fix: the step that worked held half its words and said it best,
    so the move that made it worse came along, into the head's first fix."""
    pool = record(
        "INC-0001",
        resolution_steps="1. Rolled the pods one at a time\n2. Added a circuit breaker around the order "
        "write so checkout fails fast instead of holding threads",
        failed_attempts="Scaling checkout out to more pods first made it worse: each new pod opened its "
        "own pool",
    )
    evidence = with_matches(
        Evidence(AlertInput(text="checkout p99 high", service="checkout-service")), match(pool, 0.9, 2)
    )
    joined = [
        "scale the checkout service out to more pods and add a circuit breaker around the order write",
        "Roll the pods one at a time; scale checkout out to more pods",
    ]
    for text in joined:
        for role in ("fix", "check"):
            verdict = check(Claim(text=text, citations=[2], role=role), Grounds(evidence), Similarity(None))
            assert verdict.removed is not None, (role, text)
            assert (verdict.removed.reason, verdict.removed.field) == ("other role", "failed_attempt")
    fine = "Roll the pods one at a time and add a circuit breaker around the order write"
    kept = check(Claim(text=fine, citations=[2], role="fix"), Grounds(evidence), Similarity(None))
    assert kept.claim is not None and kept.claim.field == "resolution_step"


def test_a_claim_whose_numbers_its_field_does_not_hold_is_unsupported() -> None:
    """The small model's "raising checkout's pool again (50 to 80 per pod) made it worse [2]": another
    record's failed attempt, kept on [2]'s own "made it worse" line, whose numbers were other ones."""
    assert _check("risky", "Raised the checkout pool to 80 per pod, which made it worse") is not None
    verdict = check(
        Claim(
            text="Raised the checkout pool from 50 to 120 per pod, which made it worse",
            citations=[2],
            role="risky",
        ),
        Grounds(_evidence()),
        Similarity(None),
    )
    assert verdict.removed is not None and verdict.removed.reason == "unsupported"


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        ("throttled it with requests_per_second=500.", {"500"}),
        ("raised the pool from 50 to 80.", {"50", "80"}),
        ("a ratio of 0.5, then 2.", {"0.5", "2"}),
        ("p99 above 2 s on INC-0042 [2], 502s", {"2"}),
        ("version 1.2.3", set()),
    ],
)
def test_a_number_ending_a_sentence_is_still_a_number(text: str, stated: set[str]) -> None:
    """A record's step ending "=500." holds the 500 a claim states; the full stop is not a decimal point."""
    assert numbers(text) == stated


def test_a_fix_whose_number_ends_its_fields_sentence_is_kept() -> None:
    assert _check("fix", "Enabled the circuit breaker on reservations, capped at 500") is None
    step = record("INC-0001", resolution_steps="Enabled the circuit breaker on reservations, capped at 500.")
    evidence = with_matches(
        Evidence(AlertInput(text="checkout p99 high", service="checkout-service")), match(step, 0.9, 2)
    )
    claim = Claim(
        text="Enabled the circuit breaker on reservations, capped at 500", citations=[2], role="fix"
    )
    assert check(claim, Grounds(evidence), Similarity(None)).claim is not None
