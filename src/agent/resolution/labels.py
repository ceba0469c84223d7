"""Relevance labels: what a resolution says about each precedent its briefings cited.

Every resolution teaches. The engineer marks each cited precedent "same failure", "related" or "not
related"; when they give no mark, one is inferred from the post-mortem: the grader's test of whether the
recorded root cause is the precedent's (``grading.same_cause``), marked inferred. A precedent is
relevant, for the confidence model, when it was the same failure.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent.core.similarity import Similarity
from agent.resolution.grading import record_causes, same_cause

Mark = Literal["same_failure", "related", "not_related"]
MARKS: tuple[Mark, ...] = ("same_failure", "related", "not_related")
MARK_LABELS: dict[Mark, str] = {
    "same_failure": "same failure",
    "related": "related",
    "not_related": "not related",
}
_SECTIONS = ("likely_causes", "first_checks", "suggested_fix", "risky_actions")


@dataclass(frozen=True)
class Cited:
    """A precedent a briefing cited: its id, the probability it was given, the confidence inputs."""

    id: str
    probability: float | None
    features: tuple[float, ...]
    root_cause: str | None


def relevant(mark: Mark) -> bool:
    return mark == "same_failure"


def cited_precedents(briefing: dict[str, Any]) -> list[Cited]:
    """The recalled incidents a stored briefing (its JSON) cites in any section or names as related."""
    cited_numbers = {
        n for key in _SECTIONS for item in briefing.get(key, []) for n in item.get("citations", [])
    }
    related = {str(r.get("id")) for r in briefing.get("related_incidents", []) if r.get("id")}
    causes = record_causes(briefing)
    out: list[Cited] = []
    for item in briefing.get("evidence", []):
        ident = item.get("id")
        if item.get("kind") != "incident" or not ident:
            continue
        if item.get("n") in cited_numbers or ident in related:
            probability = item.get("probability")
            out.append(
                Cited(
                    id=str(ident),
                    probability=float(probability) if probability is not None else None,
                    features=tuple(float(v) for v in item.get("features") or ()),
                    root_cause=causes.get(str(ident)),
                )
            )
    return out


def infer(root_cause: str, precedent: Cited, similarity: Similarity) -> Mark:
    """The mark the post-mortem implies: the same failure when the recorded root causes are the same."""
    if precedent.root_cause and same_cause(precedent.root_cause, root_cause, similarity):
        return "same_failure"
    return "not_related"


def merged(briefings: Sequence[dict[str, Any]]) -> list[Cited]:
    """The precedents cited by any of an incident's briefings, once each (the latest version's inputs)."""
    seen: dict[str, Cited] = {}
    for briefing in briefings:
        for cited in cited_precedents(briefing):
            seen[cited.id] = cited
    return list(seen.values())
