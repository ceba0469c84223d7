"""Relevance labels: what a resolution says about each precedent its briefings showed.

Every resolution teaches. The engineer marks each precedent a briefing put before them "same failure",
"related" or "not related"; when they give no mark, one is inferred from the post-mortem, marked
inferred: the same failure when the grader's own test finds the recorded root cause is the precedent's
(``grading.cause_similarity`` at ``SAME_CAUSE`` or more), not related when the two causes are plainly
apart, and none in between. A precedent is relevant, for the confidence model, when it was the same
failure.

Most precedents fall in between. On the public dev split (each incident against every record before it,
``recallops bench causes``), the root causes of pairs judged the same failure reach the grader's "same"
in 9 % of cases and fall below ``NOT_RELATED_BELOW`` in 1 %; 14 % of unjudged pairs fall below it
(docs/evals.md, "Inferred labels" and "The grader's cause test"). Calling all of those "not related"
taught a team's fit that its right precedents were wrong: replayed with inferred labels only, R@1 fell to
0.35 against the shipped fit's 0.51; with no label in between it is 0.49, and its ECE still below the
shipped fit's.

Every recalled incident a briefing showed is labelled, not only those it cited: labels of the cited ones
alone come from what the fit already scored high, so a fit that learned to list less never heard that a
precedent it left unlisted was right (on the dev split, ECE after the first fifth 0.18 over 98 cited
pairs, against 0.07 over 482 shown ones).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent.core.similarity import Similarity
from agent.resolution.grading import SAME_CAUSE, cause_similarity, record_causes

Mark = Literal["same_failure", "related", "not_related"]
MARKS: tuple[Mark, ...] = ("same_failure", "related", "not_related")
# Root causes less alike than this (``grading.cause_similarity``) are plainly different failures: on the
# dev split's pairs, about as many as under 0.2 when stems and cosine weighed half each, and no more of
# them judged the same failure.
NOT_RELATED_BELOW = 0.225
MARK_LABELS: dict[Mark, str] = {
    "same_failure": "same failure",
    "related": "related",
    "not_related": "not related",
}


@dataclass(frozen=True)
class Shown:
    """A precedent a briefing showed: its id, the probability it was given, the confidence inputs."""

    id: str
    probability: float | None
    features: tuple[float, ...]
    root_cause: str | None


def relevant(mark: str) -> bool:
    return mark == "same_failure"


def shown_precedents(briefing: dict[str, Any]) -> list[Shown]:
    """The recalled incidents a stored briefing (its JSON) showed as evidence, cited or not, in its order."""
    causes = record_causes(briefing)
    out: list[Shown] = []
    for item in briefing.get("evidence", []):
        ident = item.get("id")
        if item.get("kind") != "incident" or not ident:
            continue
        probability = item.get("probability")
        out.append(
            Shown(
                id=str(ident),
                probability=float(probability) if probability is not None else None,
                features=tuple(float(v) for v in item.get("features") or ()),
                root_cause=causes.get(str(ident)),
            )
        )
    return out


def infer(root_cause: str, precedent: Shown, similarity: Similarity) -> Mark | None:
    """The mark the post-mortem implies, or None when it does not say (no recorded cause to compare,
    or causes neither the same nor plainly apart): a wrong label teaches more harm than none."""
    if not precedent.root_cause or not root_cause:
        return None
    alike = cause_similarity(precedent.root_cause, root_cause, similarity)
    if alike >= SAME_CAUSE:
        return "same_failure"
    return "not_related" if alike < NOT_RELATED_BELOW else None


def merged(briefings: Sequence[dict[str, Any]]) -> list[Shown]:
    """The precedents any of an incident's briefings showed, once each (the latest version's inputs)."""
    seen: dict[str, Shown] = {}
    for briefing in briefings:
        for shown in shown_precedents(briefing):
            seen[shown.id] = shown
    return list(seen.values())
