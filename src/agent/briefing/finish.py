"""From an answer to a briefing: citations, ids and claims checked, history read from the numbers.

The same steps for the evidence-only planner's answer and a model's, so the guards hold in both modes:

- citations are range-checked (``agent.core.citations``);
- every claim is checked in its role against the field it rests on (``agent.core.guard``); a list the
  guard leaves empty falls back to the evidence-only claims of that list, and the briefing says how many
  were removed and why;
- each claim kept, its field now settled, is stamped with the confidence, support and date of what it
  cites and with what kind of line it is (``agent.core.claims``);
- "seen before", "likely noise", disagreement, counts and dates come from the calibrated numbers and
  the records (``agent.briefing.precedents``, ``agent.core.confidence``), never from the model's words:
  a model's summary keeps only its cited sentences that state no history (the calibrated lead goes
  first, as in evidence-only mode);
- related incidents are the recalled ones that clear the calibrated threshold, named by the model or
  cited by a kept claim, most likely first; an id that no evidence carries is removed and warned about.
"""

import re

from agent.briefing import precedents
from agent.briefing.assemble import assemble, qualifier, seen_before
from agent.core.citations import Tally, check_items, check_text
from agent.core.claims import SECTIONS, Grounds, stamp
from agent.core.conversation import Conversation, Model, Planner, run_fields
from agent.core.evidence import Evidence
from agent.core.guard import guard
from agent.core.schema import Briefing, Claim, ClaimCheck, Hop, ModelAnswer, RelatedIncident, RemovedClaim
from agent.core.similarity import Similarity
from memory.text import replace_unknown_ids

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_CITED = re.compile(r"\[\d+\]")
# A model's sentence that states the alert's history: only the numbers and the records may say that.
_HISTORY = re.compile(
    r"\b(?:noise|noisy|flak\w*|false alarm|self[- ]recover\w*|recurr\w*|again|before|previous\w*|prior|"
    r"last (?:time|week|month|year)|"
    r"(?:\d+|one|two|three|four|five|several|many) (?:times|incidents?|occurrences?)|"
    r"\d{4}-\d{2}-\d{2}|yesterday|hours? ago|days? ago)\b",
    re.IGNORECASE,
)
_ID_SEPARATORS = re.compile(r"[\s,;]+")


def finish(
    answer: ModelAnswer,
    conversation: Conversation,
    model: Model,
    hops: list[Hop],
    warnings: list[str],
    similarity: Similarity,
) -> Briefing:
    """The briefing an answer makes, every guard applied (see the module docstring)."""
    evidence = conversation.evidence
    count = len(evidence.items)
    tally = Tally()
    report = ClaimCheck()
    by_model = not isinstance(model, Planner)
    grounds = Grounds(evidence)
    ranked = evidence.ranked()
    reading = precedents.read(ranked, evidence.refuted.keys())
    stated = _stated(reading)
    sections: dict[str, list[Claim]] = {}
    fallback: ModelAnswer | None = None
    for key in SECTIONS:
        checked = check_items(_claims(answer, key, by_model), count, tally)
        kept = [
            stamp(_qualified(c, evidence, reading), evidence)
            for c in guard(checked, grounds, similarity, report)
        ]
        if not kept and by_model:
            fallback = fallback or assemble(conversation.view())
            kept = [stamp(c, evidence) for c in getattr(fallback, key)]
            if kept and checked:
                warnings.append(
                    f"No claim of the model's {key.replace('_', ' ')} held: the evidence-only ones stand."
                )
        if key == "likely_causes" and by_model and stated and all(c.record != stated for c in kept):
            fallback = fallback or assemble(conversation.view())
            lead = [stamp(c, evidence) for c in fallback.likely_causes if c.record == stated]
            if lead:
                kept = [*lead, *kept]
                warnings.append(
                    f"The model's causes left out {stated}'s recorded cause, the precedent this briefing "
                    "states: the evidence-only one leads."
                )
        sections[key] = kept
    known = evidence.known_ids
    invented: list[str] = []
    for items in sections.values():
        for item in items:
            item.text = _strip_unknown_ids(item.text, known, invented)
    seen = seen_before(ranked, reading)
    summary, _ = check_text(answer.summary, count, tally)
    summary = _strip_unknown_ids(summary, known, invented)
    if by_model:
        summary = _model_summary(summary, report, fallback or assemble(conversation.view()))
    summary = _lead(summary or answer.summary, reading, seen, bool(evidence.matches))
    related = _related(answer.related_incidents, sections, evidence, invented)
    if invented:
        warnings.append(
            "The answer named incident id(s) not in the evidence, removed: "
            + ", ".join(dict.fromkeys(invented))
        )
    said = report.sentence()
    if said:
        warnings.append(said)
    if conversation.memory_errors:
        reason = conversation.memory_errors[0]
        warnings.append(f"Memory was unavailable ({reason}): no recalled history backs this briefing.")
    warnings.extend(evidence.injection_warnings())
    return Briefing(
        summary=summary,
        **sections,
        related_incidents=related,
        seen_before=seen,
        memory_error=conversation.memory_errors[0] if conversation.memory_errors else None,
        noise=[m.incident.id for m in reading.noise],
        disputed=[m.incident.id for m in reading.disputed],
        evidence=evidence.items,
        claim_check=report,
        **run_fields(conversation, model, hops, tally.as_check(), warnings),
    )


# The answer format's word a small model copies into its claim ("rolling restart, cited [2]"): the
# marker is the citation, the word is the template's.
_TEMPLATE_WORD = re.compile(r"(?:,\s*|\s*\()cited\)?(?=\s*(?:\[\d+\]\s*)*$)", re.IGNORECASE)


def _claims(answer: ModelAnswer, key: str, by_model: bool) -> list[Claim]:
    """The claims of one list. A model's take their role from the list they are in and keep only
    their words (less a template word copied from the answer format), citations and the field they
    name: everything else (their origin too) is read from the evidence or set here."""
    items: list[Claim] = getattr(answer, key)
    if not by_model:
        return items
    return [
        Claim(
            text=_TEMPLATE_WORD.sub("", c.text),
            citations=c.citations,
            role=SECTIONS[key],
            field=c.field,
            origin="model",
        )
        for c in items
    ]


def _stated(reading: precedents.Reading) -> str | None:
    """The precedent the briefing states, if any: the closest one clearing the threshold, unless the
    closest cleared on their own or disagree (then the head says that, not one precedent)."""
    if not reading.top or reading.noise or reading.disputed:
        return None
    return reading.top[0].incident.id


def _qualified(claim: Claim, evidence: Evidence, reading: precedents.Reading) -> Claim:
    """A model's claim labeled as the evidence-only one resting on the same precedent is ("Uncertain
    (moderate match): ", "Disputed ...: "), so its words do not state a maybe as plainly as the precedent:
    the label is read from the calibrated number and the precedents' reading, never from the model."""
    match = evidence.matches.get(claim.record or "")
    if claim.origin != "model" or match is None:
        return claim
    sure, label = qualifier(match, reading)
    if sure is None:
        return claim
    # The head and the guard read the statement: the model's words, without the label.
    statement = claim.statement or claim.text
    return claim.model_copy(update={"qualifier": sure, "text": label + claim.text, "statement": statement})


def _model_summary(summary: str, report: ClaimCheck, assembled: ModelAnswer) -> str:
    """The model's cited sentences that state no history, or the evidence-only summary when none is
    left; the sentences left out are counted in ``report``."""
    kept: list[str] = []
    for sentence in _SENTENCE.split(summary.strip()):
        if not sentence.strip():
            continue
        if not _CITED.search(sentence):
            report.removed.append(RemovedClaim(role="summary", reason="uncited", text=sentence))
        elif _HISTORY.search(sentence):
            report.removed.append(RemovedClaim(role="summary", reason="history", text=sentence))
        else:
            kept.append(sentence)
    return " ".join(kept) or assembled.summary


def _related(
    named: list[str], sections: dict[str, list[Claim]], evidence: Evidence, invented: list[str]
) -> list[RelatedIncident]:
    """Recalled incidents that clear the calibrated threshold, named (ids split however they were
    joined) or cited by a kept claim, most likely first (the evidence's order, as in evidence-only
    mode: the model's order says nothing of how likely each is). A known id that is not a reliable
    incident (a pattern, a weak match) is left out quietly; an id no evidence carries is invented."""
    cited = {n for items in sections.values() for item in items for n in item.citations}
    cited_ids = [m.incident.id for m in evidence.ranked() if m.item.n in cited]
    idents = [i for entry in named for i in _ID_SEPARATORS.split(entry.strip()) if i]
    known = evidence.known_ids
    related: list[RelatedIncident] = []
    for ident in [*idents, *cited_ids]:
        match = evidence.matches.get(ident)
        if match is None:
            if ident not in known:
                invented.append(ident)
        elif match.confidence.reliable and all(r.id != ident for r in related):
            related.append(
                RelatedIncident(
                    id=ident,
                    service=match.item.service or "unknown",
                    score=match.confidence.probability,
                    why=evidence.why(match),
                )
            )
    order = {m.incident.id: i for i, m in enumerate(evidence.ranked())}
    return sorted(related, key=lambda r: order[r.id])


def _lead(summary: str, reading: precedents.Reading, seen: str, recalled: bool) -> str:
    """What the precedents say together goes first, in either mode, so the model cannot bury it."""
    if reading.noise:
        head = precedents.noise_sentence(reading)
    elif reading.disputed:
        head = precedents.dispute_sentence(reading)
    elif seen == "novel" and recalled and precedents.NO_RELIABLE.lower() not in summary.lower():
        head = precedents.no_reliable_sentence()
    else:
        return summary
    return f"{head} {summary}"


def _strip_unknown_ids(text: str, known: set[str], invented: list[str]) -> str:
    replaced, unknown = replace_unknown_ids(text, known)
    invented.extend(unknown)
    return replaced
