"""Claims as values: which list holds which role, what a recorded field looks like as steps, and the
numbers a claim takes from its evidence, and the fields of each source a claim can rest on (``Grounds``,
read by ``agent.core.guard``).

A claim's confidence, support and date are read from the evidence it cites, never from its words: the
calibrated probability of its best cited precedent (a runbook or profile pattern counts a little less
than the precedent that brought it in), how many incidents it cites, and when the newest of them
happened. ``stamp`` writes them, the same way for the evidence-only assembler and for a model.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from agent.core.claim_kind import is_action, services_named
from agent.core.evidence import Evidence, Match
from agent.core.schema import Claim, ClaimField, Role
from memory import runbooks

# memory embeds these same steps when it retains a record
from memory.items import failed_steps as failed_steps
from memory.items import steps as steps
from memory.items import worked_steps as worked_steps
from memory.text import clip

# The briefing's lists and the role each holds (a cause list may also hold noise claims: precedents
# that needed no fix).
SECTIONS: dict[str, Role] = {
    "likely_causes": "cause",
    "first_checks": "check",
    "suggested_fix": "fix",
    "risky_actions": "risky",
}
# A runbook or profile pattern is as good as the precedent that brought it in, a little less: a
# pattern, as the likeliest of its own incidents this briefing recalled.
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
    item = next((i for i in evidence.items if i.n == n), None)
    if item is None or item.kind == "alert":
        return 0.0
    own = evidence.profile_incidents.get(item.id or "", ()) if item.kind == "profile" else ()
    recalled = [m.confidence.probability for m in evidence.matches.values() if m.incident.id in own]
    if recalled:
        return BROUGHT_IN * max(recalled)
    best = best_precedent(evidence)
    return BROUGHT_IN * best.confidence.probability if best is not None else 0.0


def stamp(claim: Claim, evidence: Evidence) -> Claim:
    """The claim with the confidence, support and date its citations give it, and what kind of line it
    is (``agent.core.claim_kind``), read from the field it rests on: stamp a claim once its field is
    settled."""
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
            "action": is_action(claim, evidence.items),
            "services": services_named(claim, evidence.items),
        }
    )


def claims_of(sections: dict[str, list[Claim]]) -> Iterator[tuple[str, Claim]]:
    """Every claim of a briefing's lists, with the list it is in."""
    for key, items in sections.items():
        for item in items:
            yield key, item


@dataclass(frozen=True)
class Ground:
    """One field of one source, as a claim resting on it would have to say it. ``weak``: the source is
    a recalled record under the match threshold (``Confidence.reliable``), no precedent to brief from."""

    field: ClaimField
    text: str
    record: str | None
    weak: bool = False


class Grounds:
    """Every field of every numbered source, for checking a claim against what it cites."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self._matches = by_number(evidence)
        self._items = {item.n: item for item in evidence.items}
        self._grounds: dict[int, tuple[Ground, ...]] = {}

    def of(self, n: int) -> tuple[Ground, ...]:
        """The fields of source ``n``, read once: a briefing checks each of its claims against them."""
        found = self._grounds.get(n)
        if found is None:
            found = self._grounds[n] = tuple(self._read(n))
        return found

    def _read(self, n: int) -> list[Ground]:
        item = self._items.get(n)
        if item is None:
            return []
        if item.kind == "alert":
            return [Ground("signature", item.text, None)]
        if item.kind == "runbook":
            found = runbooks.sections(item.text)
            return [
                Ground("runbook", runbooks.title(item.text), item.id),
                *(Ground("first_check", t, item.id) for t in found.get("first checks", [])),
                *(Ground("mitigation", t, item.id) for t in runbooks.mitigations(item.text)),
                *(Ground("risky_action", t, item.id) for t in found.get("risky actions", [])),
            ]
        if item.kind == "profile" and item.id is not None:
            return [
                Ground("pattern", item.text, item.id),
                *(Ground("first_check", t, item.id) for t in self.evidence.profile_checks.get(item.id, [])),
                *(Ground("risky_action", t, item.id) for t in self.evidence.profile_risks.get(item.id, [])),
            ]
        if item.kind == "synthesis":
            return [Ground("pattern", item.text, None)]
        match = self._matches.get(n)
        return _record_grounds(match) if match is not None else []


def _record_grounds(match: Match) -> list[Ground]:
    record, ident, weak = match.incident.record, match.incident.id, not match.confidence.reliable
    found = [Ground("correction", c, ident, weak) for c in match.corrections]
    if record is None:
        return found
    singles: tuple[tuple[ClaimField, str], ...] = (
        ("root_cause", record.root_cause),
        ("symptom", record.symptom),
        ("signature", record.error_signature),
        ("outcome", record.outcome),
        ("runbook_used", record.runbook_used),
    )
    found += [Ground(name, flat(text, 2000), ident, weak) for name, text in singles if text.strip()]
    found += [Ground("resolution_step", s, ident, weak) for s in worked_steps(record)]
    found += [Ground("failed_attempt", s, ident, weak) for s in failed_steps(record)]
    return found
