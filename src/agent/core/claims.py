"""Claims as values: which list holds which role, what a recorded field looks like as steps, and the
numbers a claim takes from its evidence.

A claim's confidence, support and date are read from the evidence it cites, never from its words: the
calibrated probability of its best cited precedent (a runbook or profile pattern counts a little less
than the precedent that brought it in), how many incidents it cites, and when the newest of them
happened. ``stamp`` writes them, the same way for the evidence-only assembler and for a model.
"""

from collections.abc import Iterator

from agent.core.evidence import Evidence, Match
from agent.core.schema import Claim, Role
from memory.items import steps as steps  # memory embeds these same steps when it retains a record
from memory.text import clip

# The briefing's lists and the role each holds (a cause list may also hold noise claims: precedents
# that needed no fix).
SECTIONS: dict[str, Role] = {
    "likely_causes": "cause",
    "first_checks": "check",
    "suggested_fix": "fix",
    "risky_actions": "risky",
}
# A runbook or profile pattern is as good as the precedent that brought it in, a little less.
BROUGHT_IN = 0.9


def flat(text: str, limit: int) -> str:
    """One line (records are often hard-wrapped), clipped."""
    return clip(" ".join(text.split()), limit)


def by_number(evidence: Evidence) -> dict[int, Match]:
    return {m.item.n: m for m in evidence.matches.values()}


def best_precedent(evidence: Evidence) -> Match | None:
    """The most likely precedent, when it clears the threshold."""
    ranked = evidence.ranked()
    return ranked[0] if ranked and ranked[0].confidence.reliable else None


def citation_confidence(evidence: Evidence, n: int) -> float:
    """How likely the source ``[n]`` is a relevant precedent (0 for the alert and unknown numbers)."""
    match = by_number(evidence).get(n)
    if match is not None:
        return match.confidence.probability
    best = best_precedent(evidence)
    kinds = {item.n: item.kind for item in evidence.items}
    if kinds.get(n) in (None, "alert") or best is None:
        return 0.0
    return BROUGHT_IN * best.confidence.probability


def stamp(claim: Claim, evidence: Evidence) -> Claim:
    """The claim with the confidence, support and date its citations give it."""
    matches = by_number(evidence)
    cited = [matches[n] for n in claim.citations if n in matches]
    dates = [m.when for m in cited if m.when is not None]
    return claim.model_copy(
        update={
            "confidence": round(
                max((citation_confidence(evidence, n) for n in claim.citations), default=0.0), 3
            ),
            "support": len({m.incident.id for m in cited}),
            "date": max(dates).date().isoformat() if dates else None,
        }
    )


def claims_of(sections: dict[str, list[Claim]]) -> Iterator[tuple[str, Claim]]:
    """Every claim of a briefing's lists, with the list it is in."""
    for key, items in sections.items():
        for item in items:
            yield key, item
