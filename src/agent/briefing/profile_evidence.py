"""Team-profile patterns that resemble the alert, returned as evidence to cite like incidents.

The profile is a mental model in the bank (``memory.profile``); the service's own profile is read
first, then the team-wide one, and each pattern keeps whose profile it came from: its title says so,
and the page links it to that profile. A pattern's risky actions and first checks are what a briefing most
needs from it, so they are kept for the evidence-only assembly as well, and so is when the pattern
happens again (its rate, and its period when its dates are regular), for the briefing head.
"""

import asyncio

from agent.core.evidence import AlertInput, ProfileEvidence
from incidents.timeutil import utcnow
from memory import MemoryUnavailable
from memory.bank import ProfileModels
from memory.profile import (
    PROFILE_ID,
    Pattern,
    load_patterns,
    matching_patterns,
    pattern_evidence_text,
    service_model_id,
)
from memory.recurrence import recurrence

MAX_PATTERNS = 2


def _keys(pattern: Pattern) -> tuple[str, str, str]:
    return (f"id:{pattern.id}", f"title:{pattern.title}", "incidents:" + ",".join(sorted(pattern.incidents)))


class ProfileSource:
    def __init__(self, bank: ProfileModels, *, timeout_s: float = 10.0) -> None:
        self._bank = bank
        self._timeout = timeout_s

    async def patterns(self, service: str | None) -> list[tuple[str | None, Pattern]]:
        """Each pattern with the service whose profile holds it (``None``: the team's)."""
        owners = ([service] if service else []) + [None]
        ids = [service_model_id(owner) if owner else PROFILE_ID for owner in owners]
        # Both profiles are asked for at once: one wait on the bank, not two.
        models = await asyncio.wait_for(
            asyncio.gather(*(self._bank.get_mental_model(model_id) for model_id in ids)), self._timeout
        )
        # The service's profile and the team's often hold one pattern twice, under the same id or the
        # same incidents but not always the same title: a briefing cites it once.
        found: list[tuple[str | None, Pattern]] = []
        for owner, model in zip(owners, models, strict=True):
            seen = {key for _, p in found for key in _keys(p)}
            found += [(owner, p) for p in load_patterns(model) if seen.isdisjoint(_keys(p))]
        return found

    async def matching(self, alert: AlertInput) -> tuple[list[ProfileEvidence], str | None]:
        """The best matching patterns, as evidence to cite; an unreachable bank is the second value
        (what went wrong), never an exception."""
        try:
            owned = await self.patterns(alert.service)
        except (MemoryUnavailable, TimeoutError) as exc:
            return [], f"team profile: {str(exc) or type(exc).__name__}"
        owner = {pattern.id: service for service, pattern in owned}
        found: list[ProfileEvidence] = []
        for match in matching_patterns(
            [pattern for _, pattern in owned],
            alert_text=alert.description,
            service=alert.service,
            limit=MAX_PATTERNS,
        ):
            pattern = match.pattern
            service = owner[pattern.id]
            shares = f" (shares: {', '.join(match.matched_terms[:6])})" if match.matched_terms else ""
            text = pattern_evidence_text(pattern)
            again = recurrence(pattern.seen)
            if again is not None and again.count > 1:
                text += f"\nRecurrence: {again.sentence(utcnow())}"
            found.append(
                ProfileEvidence(
                    id=pattern.id,
                    title=f"{service or 'Team'} profile pattern: {pattern.title}{shares}",
                    text=text,
                    uncertain=pattern.uncertain,
                    risks=tuple(risk.text for risk in pattern.risky_actions[:3]),
                    checks=tuple(check.text for check in pattern.first_checks[:2]),
                    incidents=tuple(pattern.incidents),
                    recurrence=again if again is not None and again.count > 1 else None,
                    service=service,
                )
            )
        return found, None
