"""The evidence-only briefing: built from the recalled records themselves, every line cited.

Nothing here guesses. Causes are the strongest matches' recorded root causes (corrections first);
checks and fixes are their recorded resolution steps and runbooks; risky actions are what their
post-mortems say was tried and failed, and what the team profile warns against. Weak matches are
labeled uncertain, and with no match the briefing says plainly that no prior incident is known, or,
when only weak candidates came back, that there is no reliable precedent. Precedents that needed no
fix (self-recovered, false alarm) are named as such, and causes the top precedents disagree on are
labeled disputed (``agent.briefing.precedents``).

Every line is a ``Claim``: its role, the source and field it rests on and its qualifier are values,
and its shown line is written here from them, once; nothing downstream reads the line back.
"""

from agent.briefing.precedents import NO_RELIABLE, Reading, is_noise, read
from agent.core.claims import failed_steps, flat, steps, worked_steps
from agent.core.conversation import ConversationView
from agent.core.evidence import Match
from agent.core.schema import Claim, ClaimField, ModelAnswer, Qualifier, Role, SeenBefore
from memory import runbooks

MAX_CAUSES = 3
MAX_STEPS = 5
MAX_RUNBOOK_ITEMS = 3
_QUALIFIER_LEAD = {
    "disputed": "Disputed (the closest precedents disagree): ",
    "uncertain": "Uncertain ({band} match): ",
}


def qualifier(match: Match, reading: Reading | None = None) -> tuple[Qualifier | None, str]:
    """How sure a line resting on ``match`` is, and the label its shown line opens with: disputed when
    the closest precedents disagree and it is one of them, uncertain under a strong match."""
    sure: Qualifier | None = "disputed" if reading is not None and match in reading.disputed else None
    if sure is None and not match.confidence.strong:
        sure = "uncertain"
    return sure, _QUALIFIER_LEAD[sure].format(band=match.confidence.band) if sure else ""


def _claim(
    role: Role,
    field: ClaimField,
    statement: str,
    n: int,
    record: str | None,
    *,
    lead: str = "",
    match: Match | None = None,
    reading: Reading | None = None,
) -> Claim:
    """A claim resting on one field of source ``[n]``; its line is the lead, then the statement, labeled
    uncertain or disputed when its precedent is."""
    sure, label = qualifier(match, reading) if match is not None else (None, "")
    return Claim(
        text=f"{label}{lead}{statement}",
        citations=[n],
        role=role,
        field=field,
        record=record,
        statement=statement,
        qualifier=sure,
        origin="evidence",
    )


def seen_before(ranked: list[Match], reading: Reading) -> SeenBefore:
    """Recurring: the most likely precedent is settled (nearly all such were relevant), on this service
    and undisputed. Similar: it is reliable. Novel: nothing is (``agent.core.confidence`` thresholds, read
    from the one calibrated number). Precedents that disagree on the root cause never make a recurrence
    (``agent.briefing.precedents``)."""
    if not ranked or not ranked[0].confidence.reliable:
        return "novel"
    best = ranked[0]
    if best.confidence.settled and best.same_service and not reading.disputed:
        return "recurring"
    return "similar"


def _no_prior(view: ConversationView, recalled: bool) -> str:
    if recalled and view.memory_on and not view.memory_errors:
        return (
            f"{NO_RELIABLE}: nothing in memory clears the match threshold for this alert. Treat the "
            "alert as new and work from the alert itself [1]."
        )
    if not view.memory_on:
        why = "memory is off for this briefing, so no past incident was consulted"
    elif view.memory_errors:
        why = f"memory could not be reached ({view.memory_errors[0]})"
    else:
        why = "memory holds no resolved incident resembling this alert"
    return f"No prior incident is known: {why}. Treat the alert as new and work from the alert itself [1]."


def _causes(useful: list[Match], reading: Reading | None = None) -> list[Claim]:
    items: list[Claim] = []
    for match in useful[:MAX_CAUSES]:
        record, n, ident = match.incident.record, match.item.n, match.incident.id
        for correction in match.corrections:
            lead = f"Corrected root cause of {ident}: "
            items.append(
                _claim(
                    "cause",
                    "correction",
                    flat(correction, 400),
                    n,
                    ident,
                    lead=lead,
                    match=match,
                    reading=reading,
                )
            )
        if record is not None and record.root_cause:
            role: Role = "cause"
            lead = f"Root cause recorded for {ident}"
            if is_noise(match):
                role, lead = "noise", f"No fix needed ({record.resolution_kind.replace('-', ' ')}) in {ident}"
            if match.corrections:
                lead += " (superseded by the correction above)"
            statement = flat(record.root_cause, 400)
            items.append(
                _claim(
                    role, "root_cause", statement, n, ident, lead=f"{lead}: ", match=match, reading=reading
                )
            )
    return items


def _checks(useful: list[Match], view: ConversationView) -> list[Claim]:
    items: list[Claim] = []
    for match in useful[:2]:
        record, n, ident = match.incident.record, match.item.n, match.incident.id
        if record is None:
            continue
        if record.error_signature:
            lead = f"Look for the error seen in {ident}: "
            items.append(
                _claim(
                    "check", "signature", flat(record.error_signature, 240), n, ident, lead=lead, match=match
                )
            )
        first = worked_steps(record)[:1]
        if first:
            lead = f"What {ident} checked or did first: "
            items.append(_claim("check", "resolution_step", first[0], n, ident, lead=lead, match=match))
        if record.runbook_used:
            lead = f"Open the runbook used for {ident}: "
            items.append(_claim("check", "runbook_used", flat(record.runbook_used, 240), n, ident, lead=lead))
    evidence = view.evidence
    for item in evidence.items:
        if item.kind == "runbook" and useful:
            checks = runbooks.sections(item.text).get("first checks", [])[:MAX_RUNBOOK_ITEMS]
            lead = f"{item.id} first check: "
            items.extend(
                _claim("check", "first_check", check, item.n, item.id, lead=lead) for check in checks
            )
            if not checks:
                lead = f"Follow runbook {item.id}: "
                items.append(
                    _claim("check", "runbook", runbooks.title(item.text), item.n, item.id, lead=lead)
                )
        elif item.kind == "profile" and item.id is not None and item.id in evidence.profile_checks:
            lead = "Team profile first check: "
            items.extend(
                _claim("check", "first_check", check, item.n, item.id, lead=lead)
                for check in evidence.profile_checks[item.id]
            )
    return items


def _fix(useful: list[Match], view: ConversationView, reading: Reading) -> list[Claim]:
    if not useful or useful[0].incident.record is None:
        return []
    items = _fix_from(useful[0], reading)
    for item in view.evidence.items:
        if item.kind == "runbook":
            mitigations = runbooks.mitigations(item.text)[:MAX_RUNBOOK_ITEMS]
            lead = f"{item.id} mitigation: "
            items += [_claim("fix", "mitigation", m, item.n, item.id, lead=lead) for m in mitigations]
    return items


def _fix_from(best: Match, reading: Reading) -> list[Claim]:
    record, n, ident = best.incident.record, best.item.n, best.incident.id
    assert record is not None
    items = [
        _claim("fix", "resolution_step", step, n, ident, match=best, reading=reading)
        for step in worked_steps(record)[:MAX_STEPS]
    ]
    if record.outcome:
        lead = f"Outcome then ({ident}): "
        items.append(_claim("fix", "outcome", flat(record.outcome, 300), n, ident, lead=lead))
    return items


def _risky(useful: list[Match], view: ConversationView) -> list[Claim]:
    items: list[Claim] = []
    for match in useful:
        record, ident = match.incident.record, match.incident.id
        if record is None:
            continue
        lead = f"{ident} (did not help or made it worse): "
        for attempt in failed_steps(record)[:3]:
            items.append(_claim("risky", "failed_attempt", attempt, match.item.n, ident, lead=lead))
    for item in view.evidence.items:
        if item.kind == "runbook" and useful:
            risks = runbooks.sections(item.text).get("risky actions", [])[:MAX_RUNBOOK_ITEMS]
            lead = f"{item.id} warns: "
            items += [_claim("risky", "risky_action", risk, item.n, item.id, lead=lead) for risk in risks]
        if item.kind == "profile" and item.id is not None and item.id in view.evidence.profile_risks:
            lead = "Team profile warns: "
            items += [
                _claim("risky", "risky_action", risk, item.n, item.id, lead=lead)
                for risk in view.evidence.profile_risks[item.id]
            ]
    return items


def assemble(view: ConversationView) -> ModelAnswer:
    """The answer the evidence-only planner gives, from whatever the loop's recalls found."""
    evidence = view.evidence
    ranked = evidence.ranked()
    useful = [m for m in ranked if m.confidence.reliable] or ranked[:1]
    reading = read(ranked)
    verdict = seen_before(ranked, reading)
    if verdict == "novel":
        summary = _no_prior(view, recalled=bool(ranked))
        if ranked:
            best = ranked[0]
            summary += (
                f" The closest record, {best.incident.id} on {best.item.service}, is a weak match and "
                f"may be unrelated [{best.item.n}]."
            )
    else:
        best = ranked[0]
        record = best.incident.record
        kind = "has happened before" if verdict == "recurring" else "resembles a past incident"
        where = f"{best.incident.id} on {best.item.service}"
        summary = f"This alert {kind}: {where} ({evidence.why(best)}) [{best.item.n}]."
        if record is not None:
            first = steps(record.symptom)
            summary += f" Then: {flat(first[0] if first else record.symptom, 240)} [{best.item.n}]."
        others = useful[1:3]
        if others:
            summary += " Also similar: " + ", ".join(f"{m.incident.id} [{m.item.n}]" for m in others) + "."
    # Novel: nothing to act on, but the closest weak candidate's cause is shown, labeled uncertain.
    causes = _causes(ranked[:1]) if verdict == "novel" else _causes(useful, reading)
    if verdict == "novel":
        useful = []
    return ModelAnswer(
        summary=summary,
        likely_causes=causes,
        first_checks=_checks(useful, view),
        suggested_fix=_fix(useful, view, reading),
        risky_actions=_risky(useful, view),
        related_incidents=[m.incident.id for m in ranked if m.confidence.reliable][:5],
        seen_before=verdict,
    )
