"""Relevance labels of a resolution: the precedents a briefing showed, and the mark a post-mortem implies."""

from dataclasses import replace
from typing import Any

import pytest

from agent.core.similarity import Similarity
from agent.resolution.grading import SAME_CAUSE, cause_similarity
from agent.resolution.labels import NOT_RELATED_BELOW, infer, merged, shown_precedents
from memory.schema import format_record
from tests.agent.fakes import record

WORDS = Similarity(None)
POOL = "connection pool sized for average load, so the sale burst queued requests"


RECALLED = {"INC-0001": "retry storm", "INC-0002": POOL}


def _briefing(cites: list[int], shown: tuple[str, ...] = ("INC-0001", "INC-0002")) -> dict[str, Any]:
    evidence: list[dict[str, Any]] = [
        {"n": 1, "kind": "alert", "text": "..."},
        {"n": 9, "kind": "runbook", "id": "rb-pool", "text": "..."},
    ]
    for n, ident in enumerate(shown, start=2):
        evidence.append(
            {
                "n": n,
                "kind": "incident",
                "id": ident,
                "text": format_record(record(ident, root_cause=RECALLED[ident])),
                "probability": 0.4 * n / 2,
                "features": [0.1 * n],
            }
        )
    return {"likely_causes": [{"text": "a cause", "citations": cites}], "evidence": evidence}


def test_every_recalled_incident_the_briefing_showed_is_a_precedent_to_label_cited_or_not() -> None:
    """Labels of the cited ones alone come from what the fit already scored high: one left unlisted
    could never be learned right."""
    found = shown_precedents(_briefing([1]))
    assert [c.id for c in found] == ["INC-0001", "INC-0002"]
    assert [c.probability for c in found] == pytest.approx([0.4, 0.6])
    assert [c.features for c in found] == [(pytest.approx(0.2),), (pytest.approx(0.3),)]
    assert found[1].root_cause == POOL
    assert [c.id for c in shown_precedents(_briefing([3], shown=("INC-0002",)))] == ["INC-0002"]
    assert shown_precedents({"evidence": [{"n": 1, "kind": "alert", "text": "..."}]}) == []


def test_the_post_mortem_implies_same_failure_only_for_the_same_recorded_cause() -> None:
    one, two = shown_precedents(_briefing([2, 3]))
    assert infer("Pool sized for average load; the burst queued requests", two, WORDS) == "same_failure"
    assert infer("Pool sized for average load; the burst queued requests", one, WORDS) == "not_related"


def test_the_post_mortem_says_nothing_of_a_cause_neither_the_same_nor_plainly_apart() -> None:
    """Causes that share some words are left unlabelled: calling them "not related" taught the team's
    fit that right precedents were wrong."""
    _, pool = shown_precedents(_briefing([2, 3]))
    between = "The pool was too small for the burst after a config rollback"
    assert NOT_RELATED_BELOW <= cause_similarity(POOL, between, WORDS) < SAME_CAUSE
    assert infer(between, pool, WORDS) is None
    assert infer("", pool, WORDS) is None
    assert infer(POOL, replace(pool, root_cause=None), WORDS) is None


def test_versions_showing_the_same_precedent_give_one_label() -> None:
    versions = [_briefing([2], shown=("INC-0002",)), _briefing([2, 3])]
    assert [c.id for c in merged(versions)] == ["INC-0002", "INC-0001"]
