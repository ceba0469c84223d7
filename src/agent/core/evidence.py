"""Numbered evidence: the alert, the recalled incidents and the team-profile patterns a briefing cites.

The alert is always ``[1]``. Each recalled incident gets the next number the first time any tool
returns it (later recalls reuse the number), so the model's ``[n]`` and the stored evidence list
agree. Corrections to an incident go ahead of its original text: the newest word on a root cause
wins. Each match's calibrated confidence (``agent.core.confidence``) is computed here, once, so the planner,
the labels, the order and ``seen_before`` all read the same number.
"""

from dataclasses import dataclass, field
from datetime import datetime

from agent.core.confidence import Confidence, Scorer, confidence_of, features, same_scope, tie_groups
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


@dataclass
class Match:
    """A recalled incident in the evidence. ``confidence`` is the calibrated probability that it is a
    relevant precedent (``agent.core.confidence``), with its band."""

    incident: RecalledIncident
    item: EvidenceItem
    same_service: bool
    confidence: Confidence
    corrections: list[str] = field(default_factory=list)

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
    risks: list[str]
    checks: list[str]
    incidents: list[str]
    recurrence: Recurrence | None = None  # when the pattern happens again, for the briefing head


class Evidence:
    """The evidence list of one briefing, in citation order."""

    def __init__(
        self, alert: AlertInput, *, ranking_model: str | None = None, fit: Scorer | None = None
    ) -> None:
        self.alert = alert
        self.ranking_model = ranking_model
        self.fit = fit
        signals = injection_signals(alert.description)
        self.items: list[EvidenceItem] = [
            EvidenceItem(
                n=1,
                kind="alert",
                service=alert.service,
                title=f"The alert{f' on {alert.service}' if alert.service else ''}",
                text=alert.description,
                flagged=bool(signals),
            )
        ]
        self.matches: dict[str, Match] = {}
        self.injections: list[tuple[int, str, list[str]]] = [(1, "the alert", signals)] if signals else []
        self._pending_corrections: dict[str, list[str]] = {}
        self.profile_risks: dict[str, list[str]] = {}
        self._corrections_seen: set[str] = set()
        self.profile_checks: dict[str, list[str]] = {}
        self.recurrences: dict[str, Recurrence] = {}  # matched pattern id -> when it happens again
        self.extra_known_ids: set[str] = set()

    def _next(self) -> int:
        return len(self.items) + 1

    def add_incidents(self, incidents: list[RecalledIncident]) -> list[Match]:
        """Register recalled incidents (corrections fold into the incident they amend)."""
        added: list[Match] = []
        for incident in incidents:
            if is_correction(incident):
                self._add_correction(incident)
                continue
            if "kind:runbook" in incident.tags:
                self.add_item(
                    kind="runbook",
                    id=incident.id,
                    title=f"Runbook {incident.id}",
                    text=incident.text,
                    service=incident_service(incident),
                )
                continue
            if incident.id == self.alert.incident_id:
                continue
            match = self.matches.get(incident.id) or self._register(incident)
            if match not in added:
                added.append(match)
        return added

    def _register(self, incident: RecalledIncident) -> Match:
        service = incident_service(incident)
        same = bool(self.alert.service) and service == self.alert.service
        values = features(
            incident,
            self.alert.description,
            same_service=same_scope(self.alert.service, service),
            alertname=self.alert.alertname,
        )
        sure = confidence_of(values, ranking_model=self.ranking_model, fit=self.fit)
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
            features=[round(v, 4) for v in values],
        )
        if signals:
            self.injections.append((n, f"memory record {incident.id}", signals))
        self.items.append(item)
        match = Match(incident=incident, item=item, same_service=same, confidence=sure)
        self.matches[incident.id] = match
        for text in self._pending_corrections.pop(incident.id, []):
            self._apply_correction(match, text)
        return match

    def has_correction(self, document_id: str) -> bool:
        return document_id in self._corrections_seen

    def _add_correction(self, correction: RecalledIncident) -> None:
        target = corrected_id(correction)
        if target is None or correction.id in self._corrections_seen:
            return
        self._corrections_seen.add(correction.id)
        if injection_signals(correction.text):
            self.injections.append((0, f"correction to {target}", injection_signals(correction.text)))
        text = correction_text(correction)
        if target in self.matches:
            self._apply_correction(self.matches[target], text)
        else:
            self._pending_corrections.setdefault(target, []).append(text)

    def _apply_correction(self, match: Match, text: str) -> None:
        if text in match.corrections:
            return
        match.corrections.insert(0, text)
        original = match.incident.text
        match.item.text = "\n".join(
            f"CORRECTION (supersedes the record below): {c}" for c in match.corrections
        )
        match.item.text += f"\n--- original record ---\n{original}"

    def add_item(
        self,
        *,
        kind: EvidenceKind,
        title: str,
        text: str,
        id: str | None = None,
        service: str | None = None,
        uncertain: bool = False,
    ) -> EvidenceItem:
        """A runbook, profile pattern or synthesis: cited like an incident, flagged if it needs to be."""
        for existing in self.items:
            if existing.kind == kind and existing.title == title and existing.text == text:
                return existing
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
        if signals:
            self.injections.append((item.n, title, signals))
        self.items.append(item)
        return item

    def add_profile(self, pattern: ProfileEvidence) -> EvidenceItem:
        """A matching profile pattern, cited like an incident; its risks and checks kept for assembly."""
        item = self.add_item(
            kind="profile", id=pattern.id, title=pattern.title, text=pattern.text, uncertain=pattern.uncertain
        )
        self.profile_risks[pattern.id] = pattern.risks
        self.profile_checks[pattern.id] = pattern.checks
        self.extra_known_ids.update(pattern.incidents)
        if pattern.recurrence is not None:
            self.recurrences[pattern.id] = pattern.recurrence
        return item

    def ranked(self) -> list[Match]:
        """Matches most likely relevant first; within a tie (``confidence.tie_groups``), same service
        first, then the order retrieval gave."""
        matches = list(self.matches.values())
        groups = tie_groups([m.confidence.probability for m in matches])
        order = sorted(
            range(len(matches)), key=lambda i: (groups[i], not matches[i].same_service, matches[i].item.n)
        )
        return [matches[i] for i in order]

    def why(self, match: Match) -> str:
        if not self.alert.service:
            scope = match.item.service or "an unknown service"
        else:
            scope = "same service" if match.same_service else "another service"
        return _why(match.incident, scope, match.confidence)

    @property
    def known_ids(self) -> set[str]:
        known = {item.id for item in self.items if item.id} | self.extra_known_ids
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
