"""Numbered evidence: the alert, the recalled incidents and the team-profile patterns a briefing cites.

The alert is always ``[1]``. Each recalled incident gets the next number the first time any tool
returns it (later recalls reuse the number), so the model's ``[n]`` and the stored evidence list
agree. Corrections to an incident go ahead of its original text: the newest word on a root cause
wins. Each match's calibrated confidence (``agent.core.confidence``) is computed here, once, so the planner,
the labels, the order and ``seen_before`` all read the same number.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import TypeVar

from agent.core.confidence import (
    Confidence,
    Scorer,
    confidence_of,
    features,
    precedence,
    same_scope,
    shipped_fit,
)
from agent.core.schema import EvidenceItem, EvidenceKind
from memory import RecalledIncident
from memory.corrections import parse_correction
from memory.recurrence import Recurrence
from memory.text import INCIDENT_ID, injection_signals


@dataclass(frozen=True)
class AlertInput:
    """What the agent is asked about. ``incident_id`` (when briefing a stored incident) keeps the
    incident's own memory record out of its evidence."""

    text: str
    service: str | None = None
    title: str = ""
    severity: str | None = None
    incident_id: str | None = None
    alertname: str | None = None  # the rule that fired; never evidence by itself (healthy lookalikes)

    @property
    def description(self) -> str:
        return "\n".join(part for part in (self.title, self.text) if part).strip()


@dataclass(frozen=True)
class Refuted:
    """An engineer's "not related" mark on a precedent when an earlier incident of the same alert (its
    service and rule) was resolved: what the team already ruled out for this alert, said beside the
    precedent. It is not evidence against the precedent's probability: on the public dev split a record
    marked not related for a neighbouring incident was relevant no less often (docs/evals.md, "What the
    labels say of one record"); the engineer reads it and judges."""

    incident: str  # the earlier incident's id
    who: str
    when: datetime


@dataclass(frozen=True)
class Match:
    """A recalled incident in the evidence. ``confidence`` is the calibrated probability that it is a
    relevant precedent (``agent.core.confidence``), with its band."""

    incident: RecalledIncident
    item: EvidenceItem
    same_service: bool
    confidence: Confidence
    corrections: tuple[str, ...] = ()  # newest first

    @property
    def when(self) -> datetime | None:
        """When the precedent happened: its record's time, or the stored document's."""
        record = self.incident.record
        return record.timestamp if record is not None else self.incident.timestamp


def incident_service(incident: RecalledIncident) -> str:
    if incident.record is not None:
        return incident.record.service
    for tag in incident.tags:
        if tag.startswith("service:"):
            return tag.removeprefix("service:")
    return incident.metadata.get("service", "unknown")


def is_correction(incident: RecalledIncident) -> bool:
    return "kind:correction" in incident.tags


def is_runbook(incident: RecalledIncident) -> bool:
    return "kind:runbook" in incident.tags


def is_precedent(incident: RecalledIncident) -> bool:
    """An incident's record: what recall found that is neither a runbook nor a correction."""
    return not (is_correction(incident) or is_runbook(incident))


def corrected_id(incident: RecalledIncident) -> str | None:
    """The incident a correction record amends (its metadata names it)."""
    return incident.metadata.get("corrects") or None


def correction_text(correction: RecalledIncident) -> str:
    """The correction itself, with who made it and when, without the record's labels."""
    try:
        record = parse_correction(correction.text)
    except ValueError:
        return correction.text
    return f"{record.text} (corrected by {record.author or 'unknown'}, {record.timestamp.date().isoformat()})"


def _why(incident: RecalledIncident, scope: str, sure: Confidence) -> str:
    channels = ", ".join(
        f"{name} #{rank}" for name, rank in sorted(incident.why.items(), key=lambda kv: kv[1])
    )
    text = f"{sure.band} match ({sure.probability:.0%} likely relevant) on {scope}"
    return text + (f"; ranked {channels}" if channels else "")


@dataclass(frozen=True)
class ProfileEvidence:
    """A team-profile pattern matching the alert: its cited text, and the risky actions, first checks
    and incident ids the evidence-only assembly reads from it."""

    id: str
    title: str
    text: str
    uncertain: bool
    risks: tuple[str, ...]
    checks: tuple[str, ...]
    incidents: tuple[str, ...]
    recurrence: Recurrence | None = None  # when the pattern happens again, for the briefing head
    service: str | None = None  # whose profile holds the pattern; None: the team's


Injection = tuple[int, str, tuple[str, ...]]  # citation number (0: none), where, the signals found


K = TypeVar("K")
V = TypeVar("V")


def _frozen(mapping: Mapping[K, V]) -> Mapping[K, V]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Evidence:
    """The evidence list of one briefing, in citation order: a value. Each ``with_*`` returns a new
    list with what was added (and what it became), so an outcome or a view holding the old list keeps
    what it saw."""

    alert: AlertInput
    ranking_model: str | None = None
    fit: Scorer | None = None
    refuted: Mapping[str, Refuted] = field(default_factory=lambda: _frozen({}))  # precedent id -> mark
    items: tuple[EvidenceItem, ...] = ()
    matches: Mapping[str, Match] = field(default_factory=lambda: _frozen({}))
    injections: tuple[Injection, ...] = ()
    pending_corrections: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _frozen({}))
    corrections_seen: frozenset[str] = frozenset()
    profile_risks: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _frozen({}))
    profile_checks: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _frozen({}))
    recurrences: Mapping[str, Recurrence] = field(default_factory=lambda: _frozen({}))  # pattern id -> when
    profile_incidents: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _frozen({}))
    extra_known_ids: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.items:
            return
        # A new list: the alert is [1].
        signals = injection_signals(self.alert.description)
        service = self.alert.service
        alert = EvidenceItem(
            n=1,
            kind="alert",
            service=service,
            title=f"The alert{f' on {service}' if service else ''}",
            text=self.alert.description,
            flagged=bool(signals),
        )
        object.__setattr__(self, "items", (alert,))
        object.__setattr__(self, "injections", ((1, "the alert", signals),) if signals else ())

    def _next(self) -> int:
        return len(self.items) + 1

    def with_incidents(self, incidents: Sequence[RecalledIncident]) -> "tuple[Evidence, list[Match]]":
        """Recalled incidents registered (corrections fold into the incident they amend), and their
        matches in the order given."""
        evidence, added = self, list[Match]()
        for incident in incidents:
            if is_correction(incident):
                evidence = evidence._with_correction(incident)
                continue
            if is_runbook(incident):
                evidence, _ = evidence.with_item(
                    kind="runbook",
                    id=incident.id,
                    title=f"Runbook {incident.id}",
                    text=incident.text,
                    service=incident_service(incident),
                )
                continue
            if incident.id == evidence.alert.incident_id:
                continue
            if incident.id not in evidence.matches:
                evidence = evidence._registered(incident)
            if incident.id not in {m.incident.id for m in added}:
                added.append(evidence.matches[incident.id])
        # A correction later in the same batch may have amended a match already added.
        return evidence, [evidence.matches[m.incident.id] for m in added]

    def _judged(self, incident: RecalledIncident) -> tuple[list[float], Confidence]:
        """The relevance model's inputs for a recalled incident against this alert, and its verdict."""
        values = features(
            incident,
            self.alert.description,
            same_service=same_scope(self.alert.service, incident_service(incident)),
            alertname=self.alert.alertname,
        )
        return values, confidence_of(values, ranking_model=self.ranking_model, fit=self.fit)

    def most_relevant(self, incidents: Sequence[RecalledIncident], limit: int) -> list[RecalledIncident]:
        """The ``limit`` recalled incidents the relevance model rates highest, recall's order breaking
        ties. Across every service this puts the real fault ahead of its healthy lookalikes: on four of
        the five alert-shaped corpora the re-ranked first 30 beat the fusion alone (R@1 by 0.03 to 0.22);
        on the public dev split, whose judgments need an overlapping service, it is under it (R@1
        -0.069 [-0.172, +0.035]); within one service it did not help (docs/evals.md, "The query's own
        record" and "Re-ranking by relevance"). The alert's own incident is left out; runbooks and
        corrections recall ranked within ``limit`` are kept after the records."""
        candidates = [i for i in incidents if i.id != self.alert.incident_id]
        # Runbooks and corrections are not precedents: those recall put first keep their places.
        others = [i for i in candidates[:limit] if not is_precedent(i)]
        records = [i for i in candidates if is_precedent(i)]
        rated = sorted((-self._judged(i)[1].probability, n) for n, i in enumerate(records))
        return [*(records[n] for _, n in rated[: limit - len(others)]), *others]

    def _registered(self, incident: RecalledIncident) -> "Evidence":
        service = incident_service(incident)
        same = bool(self.alert.service) and service == self.alert.service
        values, sure = self._judged(incident)
        signals = injection_signals(incident.text)
        n = self._next()
        item = EvidenceItem(
            n=n,
            kind="incident",
            id=incident.id,
            service=service,
            title=f"{incident.id} on {service}",
            text=incident.text,
            uncertain=not sure.strong,
            flagged=bool(signals),
            probability=sure.probability,
            features=tuple(round(v, 4) for v in values),
        )
        injections = ((n, f"memory record {incident.id}", signals),) if signals else ()
        evidence = replace(
            self,
            items=(*self.items, item),
            matches=_frozen({**self.matches, incident.id: Match(incident, item, same, sure)}),
            injections=self.injections + injections,
            pending_corrections=_frozen(
                {k: v for k, v in self.pending_corrections.items() if k != incident.id}
            ),
        )
        for text in self.pending_corrections.get(incident.id, ()):
            evidence = evidence._corrected(incident.id, text)
        return evidence

    def has_correction(self, document_id: str) -> bool:
        return document_id in self.corrections_seen

    def _with_correction(self, correction: RecalledIncident) -> "Evidence":
        target = corrected_id(correction)
        if target is None or correction.id in self.corrections_seen:
            return self
        signals = injection_signals(correction.text)
        evidence = replace(
            self,
            corrections_seen=self.corrections_seen | {correction.id},
            injections=self.injections + (((0, f"correction to {target}", signals),) if signals else ()),
        )
        text = correction_text(correction)
        if target in evidence.matches:
            return evidence._corrected(target, text)
        pending = {**evidence.pending_corrections}
        pending[target] = (*pending.get(target, ()), text)
        return replace(evidence, pending_corrections=_frozen(pending))

    def _corrected(self, incident_id: str, text: str) -> "Evidence":
        """The match and its item with the correction ahead of the record: the newest word wins."""
        match = self.matches[incident_id]
        if text in match.corrections:
            return self
        corrections = (text, *match.corrections)
        said = "\n".join(f"CORRECTION (supersedes the record below): {c}" for c in corrections)
        item = match.item.model_copy(
            update={"text": f"{said}\n--- original record ---\n{match.incident.text}"}
        )
        return replace(
            self,
            items=tuple(item if i.n == item.n else i for i in self.items),
            matches=_frozen(
                {**self.matches, incident_id: replace(match, item=item, corrections=corrections)}
            ),
        )

    def with_item(
        self,
        *,
        kind: EvidenceKind,
        title: str,
        text: str,
        id: str | None = None,
        service: str | None = None,
        uncertain: bool = False,
    ) -> "tuple[Evidence, EvidenceItem]":
        """A runbook, profile pattern or synthesis, cited like an incident, flagged if it needs to be;
        one already listed is not listed twice."""
        for existing in self.items:
            if existing.kind == kind and existing.title == title and existing.text == text:
                return self, existing
        signals = injection_signals(text)
        item = EvidenceItem(
            n=self._next(),
            kind=kind,
            id=id,
            service=service,
            title=title,
            text=text,
            uncertain=uncertain,
            flagged=bool(signals),
        )
        injections = ((item.n, title, signals),) if signals else ()
        return replace(self, items=(*self.items, item), injections=self.injections + injections), item

    def with_profile(self, pattern: ProfileEvidence) -> "tuple[Evidence, EvidenceItem]":
        """A matching profile pattern, cited like an incident; its risks and checks kept for assembly."""
        evidence, item = self.with_item(
            kind="profile",
            id=pattern.id,
            service=pattern.service,
            title=pattern.title,
            text=pattern.text,
            uncertain=pattern.uncertain,
        )
        recurrence = {pattern.id: pattern.recurrence} if pattern.recurrence is not None else {}
        return replace(
            evidence,
            profile_risks=_frozen({**evidence.profile_risks, pattern.id: tuple(pattern.risks)}),
            profile_checks=_frozen({**evidence.profile_checks, pattern.id: tuple(pattern.checks)}),
            extra_known_ids=evidence.extra_known_ids | set(pattern.incidents),
            recurrences=_frozen({**evidence.recurrences, **recurrence}),
            profile_incidents=_frozen({**evidence.profile_incidents, pattern.id: tuple(pattern.incidents)}),
        ), item

    def ranked(self) -> list[Match]:
        """Matches in the order a briefing gives them (``confidence.precedence``)."""
        matches = list(self.matches.values())
        fit = self.fit or shipped_fit()
        order = precedence(
            [m.confidence.probability for m in matches],
            [m.same_service for m in matches],
            [m.item.n for m in matches],
            fit.bar,
            fit.resolution,
        )
        return [matches[i] for i in order]

    def why(self, match: Match) -> str:
        if not self.alert.service:
            scope = match.item.service or "an unknown service"
        else:
            scope = "same service" if match.same_service else "another service"
        why = _why(match.incident, scope, match.confidence)
        ruled_out = self.ruled_out(match)
        return f"{why}; {ruled_out}" if ruled_out else why

    def ruled_out(self, match: Match) -> str | None:
        """What an engineer said of this precedent when the same alert was resolved before, if anything."""
        refuted = self.refuted.get(match.incident.id)
        if refuted is None:
            return None
        return (
            f"marked not related when this alert was resolved as {refuted.incident} "
            f"({refuted.who}, {refuted.when:%Y-%m-%d})"
        )

    @property
    def known_ids(self) -> set[str]:
        known = {item.id for item in self.items if item.id} | self.extra_known_ids
        known |= {r.incident for r in self.refuted.values()}
        known |= {m.group(0) for item in self.items for m in INCIDENT_ID.finditer(item.text)}
        return known | ({self.alert.incident_id} if self.alert.incident_id else set())

    def injection_warnings(self) -> list[str]:
        warnings = []
        for n, where, signals in self.injections:
            cite = f" [{n}]" if n else ""
            warnings.append(
                f"Possible prompt injection in {where}{cite} ({'; '.join(signals)}): treated as data, "
                "not followed, and memory writes were disabled for this briefing."
            )
        return warnings
