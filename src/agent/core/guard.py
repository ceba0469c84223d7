"""Claims checked in their role: each must rest on a field of its cited source that can hold it.

A fix rests on a resolution step, a mitigation or a recorded outcome; a risky move on a failed attempt
or a recorded risky action; a cause on a root cause, a correction or a team-profile pattern; a check on
an error signature, a first check, the first things a record did or a runbook. A claim whose words are
those of a field of its role in what it cites rests on that field (no other can say it better); any
other claim is compared with every field of every source it cites (``Similarity.same``, the question
the briefing head asks), and the field that says it best decides: a failed attempt offered as a fix, or
a record's fix offered as a risky move, rests on a field of another role and is removed; so is a claim
no field of its role says, and one that cites nothing. That question is symmetric (shared words count
against the shorter text), so a long claim that holds a short field and adds words of its own would
pass it: a field of the claim's role supports it only when it also holds at least half the claim's
words (``HELD``) and every number the claim states (stems leave numbers out, and "raise the pool
from 50 to 80 per pod" is not what a line about 6 to 18 pods says). A fix or check that joins moves
("scale out and add a circuit breaker") is asked again part by part: a part that a recorded failed
attempt or risky action says, better than any field of the claim's role, removes it (the step that
worked would otherwise carry the failed one in). A claim kept on a field of a recalled record under
the match threshold must say it is uncertain, as the evidence-only briefing's only such claim does
(a novel alert's closest cause): the calibrated number, not a model's plain statement, says how far
such a record goes. The evidence-only assembler's claims pass by construction; a model's are what
this is for. Both go through it.

The ``ClaimCheck`` it fills counts what was kept and removed by role and by reason, so a briefing
can say how many were removed and why, and an evaluation can report in-role support.
"""

import re
from dataclasses import dataclass

from agent.core.claims import Ground, Grounds
from agent.core.schema import Claim, ClaimCheck, ClaimField, RemovedClaim, Role
from agent.core.similarity import Similarity, coverage, stems
from memory.items import item_key

# The fields a claim of each role may rest on.
ROLE_FIELDS: dict[Role, frozenset[ClaimField]] = {
    "cause": frozenset({"root_cause", "correction", "pattern"}),
    "noise": frozenset({"root_cause"}),
    "check": frozenset({"signature", "first_check", "resolution_step", "runbook_used", "runbook"}),
    "fix": frozenset({"resolution_step", "mitigation", "outcome"}),
    "risky": frozenset({"failed_attempt", "risky_action"}),
    "recurrence": frozenset({"pattern"}),
}


# The share of a claim's words a field of its role must hold to support it.
HELD = 0.5
# The moves a fix or a first check never carries: what failed or made it worse.
OPPOSITE: dict[Role, frozenset[ClaimField]] = {"fix": ROLE_FIELDS["risky"], "check": ROLE_FIELDS["risky"]}
# Where a claim joins two moves ("scale to 18 pods and add a circuit breaker"), and how many content
# words a part needs to be a move of its own.
_JOINS = re.compile(r";\s+|,?\s+and\s+(?:then\s+)?|,\s+then\s+", re.IGNORECASE)
MIN_PART_WORDS = 3
# A number as written ("80", "0.5", "500." ending a sentence), not part of a word or an id ("p99",
# "502s", "INC-0042", "1.2.3"): the field a claim rests on must hold every one the claim states (words
# may be paraphrased, a pool size or a pod count not).
_NUMBER = re.compile(r"(?<![\w.\[])(?<!\w-)\d+(?:\.\d+)?(?![\w\]]|\.\d)")


def numbers(text: str) -> set[str]:
    """The numbers ``text`` states as written ("80", "0.5"), not those inside a word ("p99", "502s")."""
    return set(_NUMBER.findall(text))


@dataclass(frozen=True)
class Verdict:
    """The guard's answer for one claim: the claim as kept (its field and record filled), or why not."""

    claim: Claim | None
    removed: RemovedClaim | None


def check(claim: Claim, grounds: Grounds, similarity: Similarity) -> Verdict:
    """Whether ``claim`` rests on a field of its role in what it cites (the named field, if it names
    one), and no field of another role says it better."""
    role = claim.role or "cause"
    if not claim.citations:
        return Verdict(None, RemovedClaim(role=role, reason="uncited", text=claim.text))
    allowed = ROLE_FIELDS[role]
    if claim.field is not None and claim.field not in allowed:
        return Verdict(
            None, RemovedClaim(role=role, reason="wrong field", text=claim.text, field=claim.field)
        )
    exact = said_exactly(claim, grounds)
    if exact is not None:
        return _resting_on(claim, role, exact)
    statement = claim.statement or claim.text
    said = _said(statement, claim.citations, grounds, similarity)
    words = stems(statement)
    stated = numbers(statement)
    mine = [
        s
        for s in said
        if s[1].field in allowed
        and claim.field in (None, s[1].field)
        and coverage(words, stems(s[1].text)) >= HELD
        and stated <= numbers(s[1].text)
    ]
    other = [s for s in said if s[1].field not in allowed]
    rival = max(other, key=lambda s: s[0], default=None)
    best = max(mine, key=lambda s: s[0], default=None)
    if rival is not None and (best is None or rival[0] > best[0]):
        return Verdict(
            None, RemovedClaim(role=role, reason="other role", text=claim.text, field=rival[1].field)
        )
    if best is None:
        return Verdict(None, RemovedClaim(role=role, reason="unsupported", text=claim.text))
    carried = joined_move(claim, grounds, similarity)
    if carried is not None:
        return Verdict(
            None, RemovedClaim(role=role, reason="other role", text=claim.text, field=carried.field)
        )
    return _resting_on(claim, role, best[1])


def _said(
    text: str, citations: list[int], grounds: Grounds, similarity: Similarity
) -> list[tuple[float, Ground]]:
    """The cited fields that say ``text``, each with how closely."""
    return [
        (similarity.score(text, ground.text), ground)
        for n in citations
        for ground in grounds.of(n)
        if similarity.same(text, ground.text)
    ]


def parts(statement: str) -> list[str]:
    """The moves a claim joins ("X and Y", "X; then Y"), each with words enough to be one; one part or
    none when it joins nothing."""
    return [p for p in _JOINS.split(statement) if len(stems(p)) >= MIN_PART_WORDS]


def joined_move(claim: Claim, grounds: Grounds, similarity: Similarity) -> Ground | None:
    """The recorded failed attempt or risky action that a part of a fix or check joining several moves
    says, when no field of the claim's role says that part better. Asked of the whole claim, the step
    that worked can say it best ("scale checkout from 6 to 18 pods and add a circuit breaker around the
    order write" holds the breaker step's words), and the move that made it worse would come along."""
    role = claim.role or "cause"
    opposite = OPPOSITE.get(role)
    found = parts(claim.statement or claim.text)
    if opposite is None or len(found) < 2:
        return None
    allowed = ROLE_FIELDS[role]
    for part in found:
        words = stems(part)
        said = [
            s
            for s in _said(part, claim.citations, grounds, similarity)
            if coverage(words, stems(s[1].text)) >= HELD
        ]
        rival = max((s for s in said if s[1].field in opposite), key=lambda s: s[0], default=None)
        own = max((s for s in said if s[1].field in allowed), key=lambda s: s[0], default=None)
        if rival is not None and (own is None or rival[0] > own[0]):
            return rival[1]
    return None


def said_exactly(claim: Claim, grounds: Grounds) -> Ground | None:
    """The first field of the claim's role in what it cites whose text is the claim's statement.

    No field can say a statement better than its own words do (the closest any other field comes is a
    tie), so such a claim is kept on that field without comparing it with the others: the
    evidence-only assembler's claims are most often this, and need no embedding.
    """
    allowed = ROLE_FIELDS[claim.role or "cause"]
    key = item_key(claim.statement or claim.text)
    return next(
        (
            ground
            for n in claim.citations
            for ground in grounds.of(n)
            if ground.field in allowed
            and claim.field in (None, ground.field)
            and item_key(ground.text) == key
        ),
        None,
    )


def _resting_on(claim: Claim, role: Role, ground: Ground) -> Verdict:
    """The claim kept on ``ground``, unless that is a record under the match threshold and the claim
    does not say it is uncertain: the evidence-only briefing takes nothing from such a record but, when
    nothing clears the threshold, the closest one's cause labeled uncertain, and a model's claim may not
    state more (a lookalike the alert contradicts is held under the threshold)."""
    if ground.weak and claim.qualifier != "uncertain":
        return Verdict(None, RemovedClaim(role=role, reason="weak precedent", text=claim.text))
    return Verdict(
        claim.model_copy(update={"field": ground.field, "record": ground.record or claim.record}), None
    )


def guard(claims: list[Claim], grounds: Grounds, similarity: Similarity, report: ClaimCheck) -> list[Claim]:
    """The claims supported in their role; what was kept and removed is counted into ``report``."""
    compared = [c for c in claims if said_exactly(c, grounds) is None]
    similarity.prepare(
        [
            *(c.statement or c.text for c in compared),
            *(p for c in compared for p in parts(c.statement or c.text)),
            *(g.text for c in compared for n in c.citations for g in grounds.of(n)),
        ]
    )
    kept: list[Claim] = []
    for claim in claims:
        verdict = check(claim, grounds, similarity)
        if verdict.claim is not None:
            kept.append(verdict.claim)
            role = verdict.claim.role or "cause"
            report.kept[role] = report.kept.get(role, 0) + 1
        elif verdict.removed is not None:
            report.removed.append(verdict.removed)
    return kept
