"""Claims stamped from their citations: a profile pattern is as likely as its own recalled incidents."""

import pytest

from agent.core.claims import BROUGHT_IN, citation_confidence
from agent.core.evidence import AlertInput, Evidence, ProfileEvidence
from tests.agent.fakes import match, record, with_matches


def _pattern(ident: str, *incidents: str) -> ProfileEvidence:
    return ProfileEvidence(ident, f"Pattern {ident}", f"text of {ident}", False, (), (), incidents)


def test_a_pattern_is_as_likely_as_its_own_recalled_incident_not_the_best_precedent() -> None:
    alert = Evidence(AlertInput(text="checkout p99 above 2 s", service="checkout-service"))
    evidence = with_matches(alert, match(record("INC-0001"), 0.85, 2), match(record("INC-0002"), 0.01, 3))
    evidence, own = evidence.with_profile(_pattern("pattern-1", "INC-0002"))
    evidence, other = evidence.with_profile(_pattern("pattern-2", "INC-0404"))
    assert citation_confidence(evidence, own.n) == pytest.approx(BROUGHT_IN * 0.01)
    # none of its own incidents was recalled: as the precedent that brought it in
    assert citation_confidence(evidence, other.n) == pytest.approx(BROUGHT_IN * 0.85)
    assert citation_confidence(evidence, 1) == 0.0  # the alert is no precedent
