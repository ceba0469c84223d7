"""The guard before you act: does memory say the move you are about to make went wrong before?

An engineer types the move ("scale checkout to 18 pods"). It is compared with every move the
recalled records label: their failed attempts and the runbooks' risky actions (a match is **risky**),
and their resolution steps (a match has **worked before**). A move is compared by meaning (the
embedder's cosine) and by words (the share of the proposed move's stems the recorded line holds), so
"add more pods" meets "Scaling checkout from 6 to 18 pods first made it worse" while "rotate the
certificate" meets nothing. Records of the incident's own service are consulted first (of the service
the move names, when it names another one); only when none of them matches are other services'
records considered, and the answer says so.

When a move matches both a failure and a success, the failure decides unless the success is clearly
closer, and the other is cited too: the engineer sees that it worked once and made things worse once.
The thresholds are fitted on the paired eval set (``evals/check_action``), which CI holds at precision
and recall of 0.9 or more.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from agent.core.claim_kind import named_in
from agent.core.claims import failed_steps, worked_steps
from agent.core.similarity import Similarity, coverage, stems
from memory import runbooks
from memory.items import done_part
from memory.schema import IncidentRecord

Verdict = Literal["risky", "worked before", "no record"]
MoveKind = Literal["failed attempt", "risky action", "resolution step"]
Scope = Literal["service", "cross-service", "none"]

# A recorded move matches at this blended score (cosine and stem coverage, half each).
MATCH_AT = 0.5
# Without an embedder only words count, so more of them must be shared.
MATCH_AT_WORDS = 0.75
MAX_CITED = 3
# A recorded failure within this much of the closest success decides: a missed warning costs more than
# a missed reassurance.
RISK_MARGIN = 0.1


@dataclass(frozen=True)
class RecordedMove:
    """One labeled line of a record: what was done, and what happened then."""

    record_id: str
    service: str
    kind: MoveKind
    text: str
    then: str
    when: datetime | None = None

    @property
    def risky(self) -> bool:
        return self.kind != "resolution step"


@dataclass(frozen=True)
class MoveMatch:
    move: RecordedMove
    score: float
    same_service: bool


@dataclass(frozen=True)
class ActionCheck:
    """The verdict, the matches it rests on (best first) and one sentence saying it."""

    action: str
    verdict: Verdict
    scope: Scope
    sentence: str
    matches: list[MoveMatch] = field(default_factory=list)

    @property
    def citations(self) -> list[str]:
        return list(dict.fromkeys(m.move.record_id for m in self.matches))


def moves_from_record(record: IncidentRecord) -> list[RecordedMove]:
    """A record's failed attempts (risky) and resolution steps (worked), one move per step."""
    moves = [
        RecordedMove(record.incident_id, record.service, "failed attempt", step, step, record.timestamp)
        for step in failed_steps(record)
    ]
    outcome = " ".join(record.outcome.split())
    moves += [
        RecordedMove(record.incident_id, record.service, "resolution step", step, outcome, record.timestamp)
        for step in worked_steps(record)
    ]
    return moves


def moves_from_runbook(runbook_id: str, service: str, text: str) -> list[RecordedMove]:
    """A runbook's own "Risky actions" section."""
    return [
        RecordedMove(runbook_id, service, "risky action", item, item)
        for item in runbooks.sections(text).get("risky actions", [])
    ]


def read_as(move: RecordedMove) -> tuple[str, ...]:
    """The forms of a recorded line a proposed move is compared with. A failure is read whole as well as
    by its move part, since what went wrong is often said in its consequence ("the retry storm came
    back"); a success only by its move part, since its effects are no move that worked ("Rolled back
    the deploy; the pool recovered as pods restarted" is no restart that worked)."""
    if move.risky:
        return tuple(dict.fromkeys((move.text, done_part(move.text))))
    return (done_part(move.text),)


def score(action: str, move: RecordedMove, similarity: Similarity) -> float:
    """How closely a recorded move is the proposed one: the best of the forms it is read in.
    A lone letter names no move ("x" would otherwise be all of "30 pods x pool size" it asks for)."""
    wanted = {s for s in stems(action) if len(s) > 1}
    best = 0.0
    for text in read_as(move):
        words = coverage(wanted, stems(text))
        cosine = similarity.cosine(action, text)
        best = max(best, words if cosine is None else 0.5 * cosine + 0.5 * words)
    return round(best, 3)


def _threshold(similarity: Similarity) -> float:
    return MATCH_AT if similarity.embedder is not None else MATCH_AT_WORDS


def _matches(
    action: str, moves: Iterable[RecordedMove], service: str | None, similarity: Similarity
) -> list[MoveMatch]:
    moves = list(moves)
    similarity.prepare([action, *(text for m in moves for text in read_as(m))])
    found = [
        MoveMatch(move=m, score=score(action, m, similarity), same_service=m.service == service)
        for m in moves
    ]
    floor = _threshold(similarity)
    return sorted((m for m in found if m.score >= floor), key=lambda m: m.score, reverse=True)


def _sentence(action: str, verdict: Verdict, scope: Scope, matches: Sequence[MoveMatch]) -> str:
    """What the verdict rests on, in one sentence (the verdict itself is shown beside it)."""
    if verdict == "no record":
        return f"Memory holds no attempt resembling {action!r}."
    best = matches[0]
    move = best.move
    where = "" if scope == "service" else f" (on {move.service}, another service)"
    when = f" on {move.when.date().isoformat()}" if move.when else ""
    if verdict == "risky":
        said = f"{move.record_id}{where}{when} records as a {move.kind}: {move.text!r}"
    else:
        said = f"{move.record_id}{where}{when} did {move.text!r}; then {move.then!r}"
    other = next(
        (m.move for m in matches[1:] if m.move.risky != move.risky and m.score >= best.score - RISK_MARGIN),
        None,
    )
    if other is not None:
        contrast = "made things worse" if other.risky else "was part of the fix"
        said += f"; but in {other.record_id} it {contrast}"
    return said + "."


def check_action(
    action: str, moves: Sequence[RecordedMove], *, service: str | None, similarity: Similarity
) -> ActionCheck:
    """The verdict on one proposed move against the recorded ones (pure: no I/O, nothing stored)."""
    action = " ".join(action.split())
    # A move on another service ("restart the payment-gateway pods" during a checkout incident) is
    # judged by that service's records first.
    named = named_in(action, (m.service for m in moves), spoken=True)
    service = named[0] if len(named) == 1 else service
    local = [m for m in moves if service is not None and m.service == service]
    scope: Scope = "service"
    matches = _matches(action, local, service, similarity)
    if not matches:
        scope = "cross-service"
        matches = _matches(action, [m for m in moves if m not in local], service, similarity)
    if not matches:
        return ActionCheck(action, "no record", "none", _sentence(action, "no record", "none", []))
    risky = next((m for m in matches if m.move.risky), None)
    if risky is not None and risky.score >= matches[0].score - RISK_MARGIN:
        matches = [risky, *(m for m in matches if m is not risky)]
    verdict: Verdict = "risky" if matches[0].move.risky else "worked before"
    cited = matches[:MAX_CITED]
    return ActionCheck(action, verdict, scope, _sentence(action, verdict, scope, cited), cited)
