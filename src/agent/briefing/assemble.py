"""The evidence-only briefing: built from the recalled records themselves, every line cited.

Nothing here guesses. Causes are the strongest matches' recorded root causes (corrections first);
checks and fixes are their recorded resolution steps and runbooks; risky actions are what their
post-mortems say was tried and failed, and what the team profile warns against. Weak matches are
labeled uncertain, and with no match the briefing says plainly that no prior incident is known, or,
when only weak candidates came back, that there is no reliable precedent. Precedents that needed no
fix (self-recovered, false alarm) are named as such, and causes the top precedents disagree on are
labeled disputed (``agent.briefing.precedents``).
"""

import re

from agent.briefing import runbooks
from agent.briefing.precedents import NO_RELIABLE, Reading, is_noise, read
from agent.core.conversation import ConversationView
from agent.core.evidence import Match
from agent.core.schema import CitedItem, ModelAnswer, SeenBefore
from memory.text import clip

MAX_CAUSES = 3
MAX_STEPS = 5
MAX_RUNBOOK_ITEMS = 3
_LIST_ITEM = re.compile(r"\n\s*(?:\d{1,2}[.)]|[-•*])\s+")
_CLAUSE = re.compile(r";\s+|(?<=[.!?])\s+(?=[A-Z])")


def steps(text: str) -> list[str]:
    """A recorded field as separate steps: list items, then semicolons and sentences within them.

    Post-mortems are often hard-wrapped, so a line break ends a step only where a list item starts.
    """
    out: list[str] = []
    for chunk in _LIST_ITEM.sub("\x00", "\n" + (text or "")).split("\x00"):
        for part in _CLAUSE.split(" ".join(chunk.split())):
            part = part.strip(" -•*").rstrip(".")
            if len(part) > 2:
                out.append(part)
    return out


def flat(text: str, limit: int) -> str:
    """One line (records are often hard-wrapped), clipped."""
    return clip(" ".join(text.split()), limit)


def _label(match: Match, text: str, reading: Reading | None = None) -> str:
    if reading is not None and match in reading.disputed:
        return f"Disputed (the closest precedents disagree): {text}"
    if match.confidence.strong:
        return text
    return f"Uncertain ({match.confidence.band} match): {text}"


def seen_before(ranked: list[Match], reading: Reading) -> SeenBefore:
    """Recurring: the most likely precedent is settled (nine in ten such were relevant), on this service
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


def _causes(useful: list[Match], reading: Reading | None = None) -> list[CitedItem]:
    items: list[CitedItem] = []
    for match in useful[:MAX_CAUSES]:
        record, n, ident = match.incident.record, match.item.n, match.incident.id
        for correction in match.corrections:
            text = f"Corrected root cause of {ident}: {flat(correction, 400)}"
            items.append(CitedItem(text=_label(match, text, reading), citations=[n]))
        if record is not None and record.root_cause:
            prefix = f"Root cause recorded for {ident}"
            if is_noise(match):
                ended = record.resolution_kind.replace("-", " ")
                prefix = f"No fix needed ({ended}) in {ident}"
            if match.corrections:
                prefix += " (superseded by the correction above)"
            text = f"{prefix}: {flat(record.root_cause, 400)}"
            items.append(CitedItem(text=_label(match, text, reading), citations=[n]))
    return items


def _checks(useful: list[Match], view: ConversationView) -> list[CitedItem]:
    items: list[CitedItem] = []
    for match in useful[:2]:
        record, n, ident = match.incident.record, match.item.n, match.incident.id
        if record is None:
            continue
        if record.error_signature:
            items.append(
                CitedItem(
                    text=_label(
                        match, f"Look for the error seen in {ident}: {flat(record.error_signature, 240)}"
                    ),
                    citations=[n],
                )
            )
        first = steps(record.resolution_steps)[:1]
        if first:
            items.append(
                CitedItem(text=_label(match, f"What {ident} checked or did first: {first[0]}"), citations=[n])
            )
        if record.runbook_used:
            items.append(
                CitedItem(
                    text=f"Open the runbook used for {ident}: {flat(record.runbook_used, 240)}", citations=[n]
                )
            )
    evidence = view.evidence
    for item in evidence.items:
        if item.kind == "runbook" and useful:
            checks = runbooks.sections(item.text).get("first checks", [])[:MAX_RUNBOOK_ITEMS]
            items.extend(
                CitedItem(text=f"{item.id} first check: {check}", citations=[item.n]) for check in checks
            )
            if not checks:
                text = f"Follow runbook {item.id}: {runbooks.title(item.text)}"
                items.append(CitedItem(text=text, citations=[item.n]))
        elif item.kind == "profile" and item.id in evidence.profile_checks:
            items.extend(
                CitedItem(text=f"Team profile first check: {check}", citations=[item.n])
                for check in evidence.profile_checks[item.id]
            )
    return items


def _fix(useful: list[Match], view: ConversationView, reading: Reading) -> list[CitedItem]:
    if not useful or useful[0].incident.record is None:
        return []
    items = _fix_from(useful[0], reading)
    for item in view.evidence.items:
        if item.kind == "runbook":
            mitigations = runbooks.mitigations(item.text)[:MAX_RUNBOOK_ITEMS]
            items += [CitedItem(text=f"{item.id} mitigation: {m}", citations=[item.n]) for m in mitigations]
    return items


def _fix_from(best: Match, reading: Reading) -> list[CitedItem]:
    record, n = best.incident.record, best.item.n
    assert record is not None
    items = [
        CitedItem(text=_label(best, step, reading), citations=[n])
        for step in steps(record.resolution_steps)[:MAX_STEPS]
    ]
    if record.outcome:
        items.append(
            CitedItem(text=f"Outcome then ({best.incident.id}): {flat(record.outcome, 300)}", citations=[n])
        )
    return items


def _risky(useful: list[Match], view: ConversationView) -> list[CitedItem]:
    items: list[CitedItem] = []
    for match in useful:
        record = match.incident.record
        if record is None or not record.failed_attempts:
            continue
        for attempt in steps(record.failed_attempts)[:3]:
            text = f"{match.incident.id} (did not help or made it worse): {attempt}"
            items.append(CitedItem(text=text, citations=[match.item.n]))
    for item in view.evidence.items:
        if item.kind == "runbook" and useful:
            risks = runbooks.sections(item.text).get("risky actions", [])[:MAX_RUNBOOK_ITEMS]
            items += [CitedItem(text=f"{item.id} warns: {risk}", citations=[item.n]) for risk in risks]
        if item.kind == "profile" and item.id in view.evidence.profile_risks:
            for risk in view.evidence.profile_risks[item.id]:
                items.append(CitedItem(text=f"Team profile warns: {risk}", citations=[item.n]))
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
