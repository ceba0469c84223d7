"""Relevance labels of a resolution: which precedents a briefing cited, and the mark a post-mortem implies."""

from dataclasses import replace
from typing import Any

import pytest

from agent.core.similarity import Similarity
from agent.resolution.grading import SAME_CAUSE, cause_similarity
from agent.resolution.labels import NOT_RELATED_BELOW, cited_precedents, infer, merged
from memory.schema import format_record
from tests.agent.fakes import record

WORDS = Similarity(None)
POOL = "connection pool sized for average load, so the sale burst queued requests"


def _briefing(cites: list[int], related: tuple[str, ...] = ()) -> dict[str, Any]:
    evidence: list[dict[str, Any]] = [{"n": 1, "kind": "alert", "text": "..."}]
    for n, (ident, cause) in enumerate((("INC-0001", "retry storm"), ("INC-0002", POOL)), start=2):
        evidence.append(
            {
                "n": n,
                "kind": "incident",
                "id": ident,
                "text": format_record(record(ident, root_cause=cause)),
                "probability": 0.4 * n / 2,
                "features": [0.1 * n],
            }
        )
    return {
        "likely_causes": [{"text": "a cause", "citations": cites}],
        "related_incidents": [{"id": r} for r in related],
        "evidence": evidence,
    }


def test_cited_precedents_are_the_incidents_a_section_cites_or_names_as_related() -> None:
    assert [c.id for c in cited_precedents(_briefing([3]))] == ["INC-0002"]
    assert [c.id for c in cited_precedents(_briefing([1], related=("INC-0001",)))] == ["INC-0001"]
    assert cited_precedents(_briefing([1])) == []
    found = cited_precedents(_briefing([2, 3]))
    assert [c.probability for c in found] == pytest.approx([0.4, 0.6])
    assert [c.features for c in found] == [(pytest.approx(0.2),), (pytest.approx(0.3),)]
    assert found[1].root_cause == POOL


def test_the_post_mortem_implies_same_failure_only_for_the_same_recorded_cause() -> None:
    one, two = cited_precedents(_briefing([2, 3]))
    assert infer("Pool sized for average load; the burst queued requests", two, WORDS) == "same_failure"
    assert infer("Pool sized for average load; the burst queued requests", one, WORDS) == "not_related"


def test_the_post_mortem_says_nothing_of_a_cause_neither_the_same_nor_plainly_apart() -> None:
    """Causes that share some words are left unlabelled: calling them "not related" taught the team's
    fit that right precedents were wrong."""
    _, pool = cited_precedents(_briefing([2, 3]))
    between = "The pool was too small for the burst after a config rollback"
    assert NOT_RELATED_BELOW <= cause_similarity(POOL, between, WORDS) < SAME_CAUSE
    assert infer(between, pool, WORDS) is None
    assert infer("", pool, WORDS) is None
    assert infer(POOL, replace(pool, root_cause=None), WORDS) is None


def test_versions_citing_the_same_precedent_give_one_label() -> None:
    assert [c.id for c in merged([_briefing([3]), _briefing([2, 3])])] == ["INC-0002", "INC-0001"]
