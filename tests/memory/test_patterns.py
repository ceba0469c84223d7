"""The offline profile synthesizer: patterns by what failed and why, cited, uncertain when seen once."""

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.bank import MentalModel
from memory.embedder import MiniLMEmbedder
from memory.patterns import OfflineSynthesizer, ProfileAwareSynthesizer
from memory.profile import PROFILE_SCHEMA, SOURCE_QUERY, load_patterns
from tests.memory.fakes import CountingEmbedder, RecordingSynthesizer
from tests.memory.profile_records import HISTORY, JWT, POOL_A, POOL_B, correction, recalled


@pytest.fixture(scope="module")
def synthesizer() -> OfflineSynthesizer:
    return OfflineSynthesizer(MiniLMEmbedder())


def groups(synthesizer: OfflineSynthesizer, incidents: list) -> list[list[str]]:
    return sorted(p.incidents for p in synthesizer.patterns(incidents))


def test_incidents_group_by_failure_across_services(synthesizer: OfflineSynthesizer) -> None:
    assert groups(synthesizer, HISTORY) == [
        ["INC-0001", "INC-0003"],
        ["INC-0002", "INC-0006"],
        ["INC-0004"],
        ["INC-0005", "INC-0007"],
    ]


def test_the_same_service_with_different_failures_makes_different_patterns(
    synthesizer: OfflineSynthesizer,
) -> None:
    jwt_on_checkout = recalled(8, "checkout-service", JWT.record.error_signature, JWT.record.root_cause)
    patterns = {tuple(p.incidents) for p in synthesizer.patterns([POOL_A, jwt_on_checkout])}
    assert patterns == {("INC-0001",), ("INC-0008",)}


def test_repeated_severe_cross_service_patterns_come_first_and_single_ones_are_uncertain(
    synthesizer: OfflineSynthesizer,
) -> None:
    patterns = synthesizer.patterns(HISTORY)
    assert [p.uncertain for p in patterns] == [False, False, False, True]
    assert patterns[0].incidents == ["INC-0001", "INC-0003"]  # critical beats high
    assert patterns[0].severity == "critical" and patterns[0].cross_service
    assert patterns[-1].incidents == ["INC-0004"]


def test_every_field_cites_the_incidents_it_came_from(synthesizer: OfflineSynthesizer) -> None:
    pool = synthesizer.patterns(HISTORY)[0]
    assert [s.text for s in pool.services] == ["checkout-service", "orders-service"]
    assert pool.runbooks[0].text == "runbooks/db-pool.md" and pool.runbooks[0].citations == [
        "INC-0001",
        "INC-0003",
    ]
    assert pool.risky_actions[0].citations == ["INC-0001"]
    assert "more pods" in pool.risky_actions[0].text
    assert pool.first_checks[0].text == "Checked pg_stat_activity for connection counts"
    assert {c for item in pool.recorded_root_causes for c in item.citations} == {"INC-0001", "INC-0003"}
    for name in ("early_warning_signals", "mitigations_that_worked"):
        assert all(item.citations for item in getattr(pool, name))


def test_a_correction_comes_before_the_original_root_cause(synthesizer: OfflineSynthesizer) -> None:
    fixed = correction(POOL_A, "Not the pool size: idle-in-transaction sessions held the connections")
    [pattern] = [p for p in synthesizer.patterns([POOL_A, POOL_B, fixed]) if "INC-0001" in p.incidents]
    first = pattern.recorded_root_causes[0]
    assert first.text.startswith("Corrected: Not the pool size")
    assert first.citations == ["INC-0001-correction-1", "INC-0001"]


def test_other_services_named_in_a_pattern_are_its_dependencies(synthesizer: OfflineSynthesizer) -> None:
    caller = recalled(9, "checkout-service", "502 from payment-gateway", "payment-gateway pool exhausted")
    callee = recalled(10, "payment-gateway", "upstream timeouts", "connection pool exhausted under load")
    patterns = synthesizer.patterns([caller, callee])
    dependencies = [d for p in patterns for d in p.dependencies]
    assert [(d.text, d.citations) for d in dependencies] == [("payment-gateway", ["INC-0009"])]


def test_synthesize_answers_with_text_and_the_structured_profile(synthesizer: OfflineSynthesizer) -> None:
    answer = asyncio.run(synthesizer.synthesize(query=SOURCE_QUERY, incidents=HISTORY))
    assert answer.based_on == [i.id for i in HISTORY]
    assert "uncertain: seen once" in answer.text and "[INC-0001, INC-0003]" in answer.text
    model = MentalModel("m", "n", SOURCE_QUERY, [], answer.text, answer.structured, None)
    assert [p.incidents for p in load_patterns(model)] == [p.incidents for p in synthesizer.patterns(HISTORY)]
    empty = asyncio.run(synthesizer.synthesize(query=SOURCE_QUERY, incidents=[]))
    assert "no failure pattern is known" in empty.text and empty.structured == {"patterns": []}


def test_profile_queries_go_to_the_pattern_synthesizer_and_other_questions_elsewhere() -> None:
    profile, other = RecordingSynthesizer(), RecordingSynthesizer()
    router = ProfileAwareSynthesizer(profile=profile, fallback=other)
    asyncio.run(router.synthesize(query=SOURCE_QUERY, incidents=[POOL_A]))
    asyncio.run(router.synthesize(query="what broke?", incidents=[POOL_A], response_schema=PROFILE_SCHEMA))
    asyncio.run(router.synthesize(query="what broke?", incidents=[POOL_A]))
    assert len(profile.calls) == 2 and len(other.calls) == 1


words = st.text(alphabet="abcdefghij", min_size=3, max_size=6)
causes = st.lists(st.tuples(words, words, words), min_size=1, max_size=12)


@settings(max_examples=40)
@given(causes, st.data())
def test_grouping_partitions_the_incidents_and_ignores_service_names(
    causes: list, data: st.DataObject
) -> None:
    """Whatever the records: each incident is in exactly one pattern, a pattern is uncertain exactly when
    it has one incident, every citation is one of its incidents, and renaming the services changes nothing."""
    services = [data.draw(st.sampled_from(["alpha-svc", "beta-svc", "gamma-svc"])) for _ in causes]
    incidents = [
        recalled(n, service, f"{a} {b} failure on {service}", f"{b} {c} exhausted in {service}")
        for n, ((a, b, c), service) in enumerate(zip(causes, services, strict=True), start=1)
    ]
    synthesizer = OfflineSynthesizer()
    patterns = synthesizer.patterns(incidents)
    ids = [i for p in patterns for i in p.incidents]
    assert sorted(ids) == sorted(i.id for i in incidents)
    for pattern in patterns:
        assert pattern.uncertain == (len(pattern.incidents) == 1)
        for name in ("services", "recorded_root_causes", "mitigations_that_worked", "first_checks"):
            assert all(set(item.citations) <= set(pattern.incidents) for item in getattr(pattern, name))
    renamed = [
        recalled(
            n,
            f"zz-{service}",
            i.record.error_signature.replace(service, f"zz-{service}"),
            i.record.root_cause.replace(service, f"zz-{service}"),
        )
        for n, (i, service) in enumerate(zip(incidents, services, strict=True), start=1)
    ]
    assert sorted(p.incidents for p in synthesizer.patterns(renamed)) == sorted(p.incidents for p in patterns)


def test_a_refresh_embeds_only_incidents_it_has_not_seen() -> None:
    embedder = CountingEmbedder()
    synthesizer = OfflineSynthesizer(embedder)
    first = synthesizer.patterns(HISTORY[:4])
    assert len(embedder.embedded) == 4
    again = synthesizer.patterns(HISTORY)
    assert len(embedder.embedded) == len(HISTORY)
    assert {i for p in first for i in p.incidents} < {i for p in again for i in p.incidents}
