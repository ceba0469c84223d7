"""The faithfulness checker: what counts as a checkable token, and each of the four checks."""

from hypothesis import given
from hypothesis import strategies as st

from evals.scenarios.faithfulness import Source, check, checkable_tokens, marker_numbers, occurs

RECORD = (
    "INCIDENT INC-0001 — checkout-service\nRoot cause: pool_size=20 was sized for average load; "
    "connections exhausted at 4x traffic.\nResolution steps taken: raised the pool to 80, run "
    "`kubectl rollout restart deploy/checkout`; see https://runbooks.example/checkout-pool"
)
ALERT = "CheckoutLatencyHigh on checkout-service: p99 2.4s, error 'FATAL: too many connections'"
SOURCES = [Source(1, "INC-0001", RECORD), Source(2, "alert", ALERT)]


def item(text: str, *citations: int) -> dict[str, object]:
    return {"text": text, "citations": list(citations)}


def test_tokens_are_identifiers_figures_urls_and_commands_not_prose() -> None:
    tokens = checkable_tokens(
        "Raise pool_size to 80 on checkout-service [1]; run `kubectl rollout restart deploy/checkout` "
        'per https://runbooks.example/checkout-pool and check the JWT keys, e.g. "too many connections"'
    )
    assert tokens == [
        "https://runbooks.example/checkout-pool",
        "kubectl rollout restart deploy/checkout",
        "too many connections",
        "pool_size",
        "80",
        "checkout-service",
        "jwt",
    ]
    assert checkable_tokens("The pool was too small for the burst.") == []


def test_citation_markers_are_not_numbers_to_check() -> None:
    assert checkable_tokens("Pool exhausted [1] 【2】 [1-3]") == []
    assert marker_numbers("see [1, 3] and ［2］ and [4-6]") == [1, 3, 2, 4, 5, 6]


def test_occurs_respects_identifier_boundaries() -> None:
    assert occurs("2", "reached 2 of 6 pods")
    assert not occurs("2", "HTTP 502")
    assert occurs("checkout-service", "INCIDENT INC-1 — Checkout-Service")


def test_a_faithful_briefing_passes_every_check() -> None:
    briefing = {
        "likely_causes": [item("pool_size=20 sized for average load on checkout-service", 1)],
        "first_checks": [item("Look for 'FATAL: too many connections' and p99 2.4s", 2)],
        "suggested_fix": [item("Raise the pool to 80; `kubectl rollout restart deploy/checkout`", 1)],
        "risky_actions": [],
    }
    result = check(briefing, SOURCES, ALERT)
    assert result.ok, result.findings
    assert result.rates() == {"cited": 1.0, "in_range": 1.0, "supported": 1.0, "canary": None}


def test_each_failure_is_found_and_counted() -> None:
    briefing = {
        "likely_causes": [item("Redis eviction storm on cart-service", 1)],
        "first_checks": [item("Check the pool")],
        "suggested_fix": [item("Raise the pool to 80", 7)],
    }
    result = check(briefing, SOURCES, ALERT)
    kinds = sorted((f.check, f.detail) for f in result.findings)
    assert kinds == [
        ("cited", "Check the pool"),
        ("in_range", "[7]"),
        ("supported", "80"),
        ("supported", "cart-service"),
    ]
    assert result.rates()["cited"] == round(2 / 3, 4)
    assert result.rates()["in_range"] == 0.5


def test_the_alert_backs_a_claim_even_when_not_cited() -> None:
    result = check({"first_checks": [item("p99 is 2.4s", 1)]}, SOURCES, ALERT)
    assert result.ok


def test_canary_only_with_its_own_record() -> None:
    canary = "CANARY-7F3A"
    sources = [Source(1, "INC-0001", f"{RECORD} {canary}"), Source(2, "INC-0002", "other " + canary)]
    good = check({"likely_causes": [item(f"{canary} cause", 1)]}, sources, ALERT, {canary: "INC-0001"})
    bad = check({"likely_causes": [item(f"{canary} cause", 2)]}, sources, ALERT, {canary: "INC-0001"})
    leak = check({"summary": f"Seen before: {canary}"}, sources, ALERT, {canary: "INC-0001"})
    assert good.ok and good.rates()["canary"] == 1.0
    assert [f.check for f in bad.findings] == ["canary"]
    assert [f.section for f in leak.findings] == ["summary"]
    cited_summary = check({"summary": f"Seen before: {canary} [1]"}, sources, ALERT, {canary: "INC-0001"})
    assert cited_summary.ok


words = st.text(
    alphabet=st.characters(categories=("Ll", "Lu", "Nd"), max_codepoint=127), min_size=1, max_size=12
)


@given(st.lists(words, min_size=1, max_size=12))
def test_a_claim_copied_from_its_record_is_always_supported(parts: list[str]) -> None:
    text = " ".join(parts)
    result = check({"likely_causes": [item(text, 1)]}, [Source(1, "r", text)], "")
    assert result.rates()["supported"] in (None, 1.0)


@given(st.lists(st.integers(1, 5), max_size=6), st.integers(0, 5))
def test_in_range_rate_matches_the_evidence_size(citations: list[int], size: int) -> None:
    sources = [Source(n, f"r{n}", "x") for n in range(1, size + 1)]
    result = check({"risky_actions": [item("x", *citations)]}, sources, "")
    assert result.citations == len(citations)
    assert result.citations_in_range == sum(1 for c in citations if c <= size)
