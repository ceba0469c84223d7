"""Citations in a briefing become links to the evidence they name, and text stays plain text."""

from web.http.views.briefing import Anchors, briefing_view

BRIEFING = {
    "summary": "Looks like INC-0042 again [1] <b>bold</b>",
    "likely_causes": [{"text": "Pool exhausted [1][2]", "citations": [1, 2]}],
    "first_checks": [{"text": "Check pg_stat_activity", "citations": [3]}],
    "suggested_fix": [],
    "risky_actions": [{"text": "Do not restart the primary [9]", "citations": []}],
    "related_incidents": [{"id": "INC-0042", "service": "checkout", "score": 0.8, "why": "same error"}],
    "seen_before": "recurring",
    "evidence": [
        {"n": 1, "kind": "incident", "id": "INC-0042", "service": "checkout", "title": "Pool", "text": "..."},
        {"n": 2, "kind": "profile", "id": "db-pool", "title": "DB pool pattern", "text": "..."},
        {"n": 3, "kind": "alert", "title": "This alert", "text": "..."},
    ],
    "mode": "evidence-only",
    "memory": "on",
    "warnings": [],
    "generated_at": "2026-03-02T09:30:00+00:00",
    "citation_check": {"cited": 4, "invalid_removed": 0},
}


def test_citations_link_to_records_patterns_and_the_signal() -> None:
    view = briefing_view(BRIEFING)
    cause = view.sections["likely_causes"][0]
    links = [s.citation.href for s in cause.segments if s.citation]
    assert links == ["/records/INC-0042", "/profile#pattern-db-pool"]
    check = view.sections["first_checks"][0]
    assert [s.citation.href for s in check.segments if s.citation] == ["#signal"]


def test_a_service_pattern_links_to_that_service_profile() -> None:
    pattern = {"n": 1, "kind": "profile", "id": "db-pool", "service": "order-service", "title": "t"}
    cause = {"text": "Pool exhausted [1]", "citations": [1]}
    view = briefing_view({**BRIEFING, "evidence": [pattern], "likely_causes": [cause]})
    assert view.evidence[0].href == "/profile?service=order-service#pattern-db-pool"
    [link] = [s.citation for s in view.sections["likely_causes"][0].segments if s.citation]
    assert link.href == "/profile?service=order-service#pattern-db-pool"


def test_a_page_with_two_briefings_gives_each_its_own_evidence_anchors() -> None:
    runbook = {"n": 4, "kind": "runbook", "title": "Pool runbook", "text": "..."}
    data = {**BRIEFING, "evidence": [*BRIEFING["evidence"], runbook]}  # type: ignore[list-item]
    view = briefing_view(data, Anchors(signal="/incidents/INC-0007#signal", evidence="on-ev-"))
    assert [e.href for e in view.evidence][2:] == ["/incidents/INC-0007#signal", "#on-ev-4"]


def test_markup_stays_in_text_segments_and_unknown_numbers_stay_text() -> None:
    view = briefing_view(BRIEFING)
    assert view.summary.segments[-1].text == " <b>bold</b>"
    risky = view.sections["risky_actions"][0]
    assert [s.text for s in risky.segments] == ["Do not restart the primary [9]"]
