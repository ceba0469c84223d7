"""The briefing head: at most three of each, merged when they say the same thing, ranked, cited."""

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent.briefing.head import MAX_CHECKS, build_head, head_text, render_text
from agent.briefing.loop import Agent
from agent.briefing.planner import EvidenceOnlyPlanner
from agent.briefing.profile_evidence import ProfileSource
from agent.core.claim_kind import is_action, services_named
from agent.core.evidence import AlertInput, Evidence
from agent.core.schema import Briefing, Claim, ClaimField, EvidenceItem, Role
from agent.core.similarity import Similarity, stem
from memory.embedder import MiniLMEmbedder
from tests.agent.fakes import FakeProfiles, FakeRecall, match, record, with_matches
from tests.memory.fakes import CountingEmbedder

POOL = "FATAL: remaining connection slots are reserved"


def test_stems_meet_across_tenses() -> None:
    assert stem("scaling") == stem("scaled") == stem("scale")
    assert stem("rolled") == stem("roll") and stem("pods") == stem("pod")
    assert stem("stopped") == stem("stop")


ITEMS = [
    EvidenceItem(n=1, kind="alert", service="checkout-service", title="alert", text="..."),
    EvidenceItem(n=2, kind="incident", id="INC-1", service="checkout-service", title="INC-1", text="."),
    EvidenceItem(n=3, kind="incident", id="INC-2", service="checkout-service", title="INC-2", text="."),
    EvidenceItem(n=4, kind="incident", id="INC-9", service="loyalty-service", title="INC-9", text="."),
]


def claim(
    role: Role, field: ClaimField | None, statement: str, n: int, *, confidence: float = 0.0, record: str = ""
) -> Claim:
    """A claim as the assembler makes and ``stamp`` marks it; its shown line is deliberately unlike what
    the head says."""
    made = Claim(
        text=f"shown line: {statement}",
        citations=[n],
        role=role,
        field=field,
        record=record or None,
        statement=statement,
        confidence=confidence,
    )
    return made.model_copy(update={"action": is_action(made, ITEMS), "services": services_named(made, ITEMS)})


def test_the_head_says_a_claim_from_its_values_never_its_shown_line() -> None:
    assert head_text(claim("check", "resolution_step", "checked pool.", 3)) == "Checked pool"
    assert head_text(claim("check", "signature", "HTTP 503", 2)) == "Look for this error: HTTP 503"
    assert head_text(claim("check", "runbook_used", "RB-1 pool", 2)) == "Open the runbook RB-1 pool"
    assert head_text(claim("check", "runbook", "Pool exhaustion", 4, record="RB-1")) == (
        "Follow runbook RB-1: Pool exhaustion"
    )
    disputed = claim("fix", "resolution_step", "raise the pool", 2).model_copy(
        update={"qualifier": "disputed"}
    )
    assert head_text(disputed) == "Disputed (the closest precedents disagree): Raise the pool"


def test_an_outcome_is_never_a_check_or_fix_and_a_mitigation_always_is() -> None:
    briefing = _briefing(
        suggested_fix=[
            claim("fix", "outcome", "Raised alerts came back in 5 min", 2),
            claim("fix", "mitigation", "pool to 60 (per the runbook)", 3),
        ]
    )
    head = build_head(briefing, None, Similarity(None))
    assert [f.text for f in head.fixes] == ["Pool to 60 (per the runbook)"]


_WORDS = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz -:`'"), max_size=40)
_CLAIMS = st.lists(
    st.tuples(_WORDS, st.booleans(), st.sampled_from([[], ["loyalty-service"], ["checkout-service"]])),
    max_size=8,
)


@given(_CLAIMS, st.sampled_from(["resolution_step", "outcome", "signature", None]))
def test_what_the_head_keeps_is_decided_by_values_never_by_words(
    made: list[tuple[str, bool, list[str]]], field: ClaimField | None
) -> None:
    """Whatever a claim's words say (a verb, a command, another service's name), the head keeps a check
    only when the claim is an action and names no other service's resource."""
    checks = [
        Claim(
            text=f"[{n}] shown line: {words} loyalty-service `kubectl`",
            statement=f"x{n} {words} loyalty-service",
            citations=[2],
            role="check",
            field=field,
            action=action,
            services=services,
        )
        for n, (words, action, services) in enumerate(made)
    ]
    head = build_head(_briefing(first_checks=checks), None, Similarity(None))
    shown = {item.text for item in head.checks + head.more_checks}
    wanted = {head_text(c) for c in checks if c.action and "loyalty-service" not in c.services}
    assert shown <= wanted and bool(shown) == bool(wanted)  # a claim saying what another says merges


def _briefing(**lists: list[Claim]) -> Briefing:
    return Briefing(
        summary="s",
        seen_before="recurring",
        evidence=ITEMS,
        mode="evidence-only",
        memory="on",
        generated_at=datetime(2026, 4, 1, tzinfo=UTC),
        **lists,
    )


def test_duplicates_merge_and_cite_every_source_without_an_embedder() -> None:
    briefing = _briefing(
        suggested_fix=[
            claim("fix", "resolution_step", "rolled the pods one at a time", 2),
            claim("fix", "mitigation", "Roll pods one at a time.", 3),
            claim("fix", "resolution_step", "Added an alert on pending connections", 2),
        ]
    )
    head = build_head(briefing, None, Similarity(None))
    assert [f.text for f in head.fixes] == [
        "Rolled the pods one at a time",
        "Added an alert on pending connections",
    ]
    assert head.fixes[0].citations == [2, 3] and head.fixes[0].sources == ["INC-1", "INC-2"]
    assert head.fixes[0].support == 2


def test_error_strings_merge_only_when_they_are_the_same_string() -> None:
    """ "pending 0" and "pending > 200" share most words and say opposite things."""
    idle, busy = "no 5xx, hikaricp_connections_pending 0", "hikaricp_connections_pending > 200"
    briefing = _briefing(
        first_checks=[
            claim("check", "signature", idle, 2),
            claim("check", "signature", busy, 3),
            claim("check", "signature", idle.upper(), 3),
        ]
    )
    head = build_head(briefing, None, Similarity(None))
    assert [(c.text, c.citations) for c in head.checks] == [
        (f"Look for this error: {idle}", [2, 3]),
        (f"Look for this error: {busy}", [3]),
    ]


def test_runbooks_merge_only_when_they_name_the_same_runbook() -> None:
    """Two runbooks' "open the runbook" lines read alike by meaning; they merge only by path, and
    comparing them costs no embedding."""

    embedder = CountingEmbedder()
    briefing = _briefing(
        first_checks=[
            claim("check", "runbook_used", "runbooks/postgres-pool.md", 2),
            claim("check", "runbook_used", "runbooks/postgres-replica.md", 3),
            claim("check", "runbook_used", "runbooks/Postgres-Pool.md", 3),
        ]
    )
    head = build_head(briefing, None, Similarity(embedder))
    assert [(c.text, c.citations) for c in head.checks] == [
        ("Open the runbook runbooks/postgres-pool.md", [2, 3]),
        ("Open the runbook runbooks/postgres-replica.md", [3]),
    ]
    assert embedder.embedded == []


def test_checks_drop_statements_and_other_services_steps_and_keep_three() -> None:
    briefing = _briefing(
        first_checks=[
            claim("check", "resolution_step", "The pool was idle", 2),
            claim("check", "first_check", "Cut loyalty-service's pool to 30", 2),
            claim("check", "resolution_step", "Drained the loyalty queue", 4),
            *(
                claim("check", "first_check", f"Check the {w}", 2)
                for w in ("pool gauge", "replica lag", "disk usage", "error budget", "queue depth", "heap")
            ),
        ]
    )
    head = build_head(briefing, None, Similarity(None))
    texts = [c.text for c in head.checks + head.more_checks]
    assert len(head.checks) == MAX_CHECKS
    assert not any("idle" in t or "loyalty" in t for t in texts)
    assert len(texts) == 6  # nothing else is lost


def test_a_fix_that_repeats_a_check_is_left_to_the_check() -> None:
    briefing = _briefing(
        first_checks=[claim("check", "resolution_step", "Confirmed pool saturation on the dashboard", 2)],
        suggested_fix=[
            claim("fix", "resolution_step", "Confirmed pool saturation on the dashboard", 2),
            claim("fix", "resolution_step", "Raised the pool to 50", 2),
        ],
    )
    head = build_head(briefing, None, Similarity(None))
    assert [f.text for f in head.fixes] == ["Raised the pool to 50"]


def test_the_embedder_merges_paraphrases_that_share_few_words() -> None:
    briefing = _briefing(
        risky_actions=[
            claim(
                "risky",
                "failed_attempt",
                "Restarting all checkout pods at once caused a cold-start stampede",
                2,
                confidence=0.9,
            ),
            claim(
                "risky", "risky_action", "Restarting every pod at once: reconnect storm and cold caches.", 3
            ),
            claim("risky", "failed_attempt", "Raising the pool did nothing", 2, confidence=0.9),
        ]
    )
    head = build_head(briefing, None, Similarity(MiniLMEmbedder()))
    assert len(head.risky) == 2
    assert head.risky[0].citations == [2, 3]


async def test_the_planner_briefing_carries_a_head_whose_first_line_names_the_precedent() -> None:
    bank = FakeRecall()
    bank.add(record("INC-0001"))
    bank.add(record("INC-0004", resolution_steps="1. Checked pool metrics\n2. Raised the pool size to 50"))
    agent = Agent(model=EvidenceOnlyPlanner(), bank=bank)
    briefing = await agent.brief(AlertInput(text=f"checkout down: {POOL}", service="checkout-service"))
    head = briefing.head
    assert head is not None
    assert head.first_line.startswith("Happened before on this service: INC-000")
    assert "2026-03-14" in head.first_line and "likely relevant" in head.first_line
    assert head.first_line.endswith("].") and ". " not in head.first_line  # one sentence
    pool = [c for c in head.checks if "pool metrics" in c.text]
    assert pool and pool[0].support == 2  # both records did it first: one item, two sources
    assert 1 <= len(head.fixes) <= 3 and len(head.checks) <= 3
    text = render_text(head)
    assert text.splitlines()[0] == head.first_line and "Check first:" in text


def test_a_disputed_briefing_says_so_in_the_first_line_naming_both_precedents() -> None:
    """Chat and the page lead with the head, so a dispute the summary states is not hidden there."""
    lookalike = replace(record("INC-0079", root_cause="The nightly import"), resolution_kind="self-recovered")
    pool = record("INC-0014", root_cause="The pool was sized for average load")
    evidence = Evidence(AlertInput(text=POOL, service="checkout-service"))
    evidence = with_matches(evidence, match(lookalike, 0.46, 5), match(pool, 0.39, 2), cited=False)
    briefing = Briefing(
        summary="The closest precedents disagree.",
        seen_before="similar",
        disputed=["INC-0079", "INC-0014"],
        mode="evidence-only",
        memory="on",
        generated_at=datetime(2026, 3, 20, tzinfo=UTC),
    )
    line = build_head(briefing, evidence, Similarity(None)).first_line
    assert line == (
        "The closest precedents disagree on this service: INC-0079 on 2026-03-14 (46% likely relevant) [5]"
        " and INC-0014 on 2026-03-14 (39% likely relevant) [2]."
    )
    briefing.disputed = []
    assert build_head(briefing, evidence, Similarity(None)).first_line.startswith(
        "Closest precedent on this service: INC-0079 on 2026-03-14, a moderate precedent (46% likely"
    )


async def test_memory_off_says_so_in_the_first_line() -> None:
    agent = Agent(model=EvidenceOnlyPlanner(), bank=None)
    briefing = await agent.brief(AlertInput(text=POOL, service="checkout-service"), memory_on=False)
    assert briefing.head is not None
    assert briefing.head.first_line.startswith("No precedent consulted")
    assert not briefing.head.checks and not briefing.head.fixes


def _profiled(patterns: Callable[[list[dict[str, Any]]], None]) -> Agent:
    """An agent over one record and the team profile of the fakes, its patterns changed by ``patterns``."""
    from tests.agent.fakes import profile_model

    bank = FakeRecall()
    bank.add(record("INC-0001"))
    profiles = FakeProfiles()
    model = profile_model()
    assert model.structured is not None
    patterns(model.structured["patterns"])
    profiles.models[model.id] = model
    return Agent(model=EvidenceOnlyPlanner(), bank=bank, profile=ProfileSource(profiles))


async def test_a_matching_pattern_with_regular_dates_tells_the_head_when_it_recurs() -> None:
    def regular(patterns: list[dict[str, Any]]) -> None:
        patterns[0]["seen"] = ["2025-12-15T09:00:00+00:00", "2026-03-15T09:00:00+00:00"]

    agent = _profiled(regular)
    briefing = await agent.brief(AlertInput(text=f"checkout down: {POOL}", service="checkout-service"))
    assert briefing.head is not None and briefing.head.recurrence is not None
    assert "recurs about every 90 days; the last was 2026-03-15" in briefing.head.recurrence
    assert "2026-06-13" in briefing.head.recurrence
    assert any("Recurrence: This pattern recurs" in e.text for e in briefing.evidence if e.kind == "profile")


async def test_only_the_best_matching_pattern_says_when_it_recurs() -> None:
    patterns: list[dict[str, Any]] = []

    def with_a_weaker_regular_one(found: list[dict[str, Any]]) -> None:
        weaker = found[0] | {
            "id": "pattern-2",
            "title": "Payment retries amplified a processor outage",
            "incidents": ["INC-0002", "INC-0003"],
            "early_warning_signals": [{"text": "checkout retries climbing", "citations": ["INC-0002"]}],
            "seen": ["2025-12-15T09:00:00+00:00", "2026-03-15T09:00:00+00:00"],
        }
        found.append(weaker)
        patterns.extend(found)

    agent = _profiled(with_a_weaker_regular_one)
    best = patterns[0]
    briefing = await agent.brief(AlertInput(text=f"checkout down: {POOL}", service="checkout-service"))
    matched = [e.id for e in briefing.evidence if e.kind == "profile"]
    assert matched == ["pattern-1", "pattern-2"]  # both match, the pool pattern first
    assert briefing.head is not None and briefing.head.recurrence is None
    best["seen"] = ["2025-12-15T09:00:00+00:00", "2026-03-15T09:00:00+00:00", "2026-06-13T09:00:00+00:00"]
    briefing = await agent.brief(AlertInput(text=f"checkout down: {POOL}", service="checkout-service"))
    assert briefing.head is not None and briefing.head.recurrence is not None
    assert "the last was 2026-06-13" in briefing.head.recurrence


RUNBOOK_ITEMS = [
    *ITEMS[:2],
    EvidenceItem(n=5, kind="runbook", id="RB-db-pool", service="checkout-service", title="RB", text="."),
    EvidenceItem(
        n=6, kind="runbook", id="RB-db-slow-query", service="checkout-service", title="RB", text="."
    ),
]


def _runbook_briefing(runbook_used: str) -> tuple[Briefing, Evidence]:
    """A briefing whose one precedent used ``runbook_used``, and which recall gave two runbooks."""
    evidence = Evidence(AlertInput(text=POOL, service="checkout-service"), items=tuple(RUNBOOK_ITEMS))
    evidence = with_matches(evidence, match(record("INC-1", runbook_used=runbook_used), 0.6, 2), cited=False)
    fixes = [
        claim("fix", "resolution_step", "raise the pool size to 50", 2, confidence=0.6),
        claim("fix", "mitigation", "put PgBouncer in transaction mode", 5, confidence=0.54),
        claim("fix", "mitigation", "create the missing index concurrently", 6, confidence=0.54),
    ]
    return _briefing(suggested_fix=fixes).model_copy(update={"evidence": RUNBOOK_ITEMS}), evidence


def test_when_the_precedent_names_its_runbook_the_head_leaves_out_the_others() -> None:
    """ "That's the pool: open the pool runbook", not the slow-query runbook recall also found; the full
    list keeps every line."""
    for used in ("RB-db-pool", "runbooks/db-pool.md", "https://runbooks.example/RB-DB-POOL"):
        briefing, evidence = _runbook_briefing(used)
        head = build_head(briefing, evidence, Similarity(None))
        assert [f.text for f in head.fixes] == [
            "Raise the pool size to 50",
            "Put PgBouncer in transaction mode",
        ]
        assert len(briefing.suggested_fix) == 3
    # A precedent that names no runbook leaves every recalled runbook to the head's ranking.
    briefing, evidence = _runbook_briefing("")
    assert len(build_head(briefing, evidence, Similarity(None)).fixes) == 3
    # A runbook that shares only some of its id's words with the one the precedent used is not named.
    briefing, evidence = _runbook_briefing("RB-db-slow")
    assert [f.text for f in build_head(briefing, evidence, Similarity(None)).fixes] == [
        "Raise the pool size to 50"
    ]


PATTERN_ITEMS = [
    ITEMS[0],
    EvidenceItem(n=2, kind="profile", id="pattern-lag", title="Consumer lag", text="."),
    EvidenceItem(n=3, kind="profile", id="pattern-retries", title="Retry storm", text="."),
]


def test_only_the_best_matching_pattern_speaks_in_the_head() -> None:
    """A Kafka lag alert: the consumer-lag pattern's check leads, the retry storm that shares two words
    with the alert stays in the full list; a line both back stays, citing the best one."""
    evidence = Evidence(AlertInput(text="kafka consumer lag on order events"), items=tuple(PATTERN_ITEMS))
    checks = [
        claim("check", "first_check", "lower max.poll.records to 50", 2),
        claim("check", "first_check", "cut payment retries to 2", 3),
        claim("check", "first_check", "check the consumer group's rebalances", 2).model_copy(
            update={"citations": [2, 3]}
        ),
    ]
    briefing = _briefing(first_checks=checks).model_copy(update={"evidence": PATTERN_ITEMS})
    head = build_head(briefing, evidence, Similarity(None))
    assert [c.text for c in head.checks + head.more_checks] == [
        "Lower max.poll.records to 50",
        "Check the consumer group's rebalances",
    ]
    assert len(briefing.first_checks) == 3
