"""The briefing: what the on-call engineer reads, stored as JSON on the incident.

Every line of its lists is a ``Claim``: a value with its role (cause, check, fix, risky move, noise,
recurrence), the record and the field of that record it rests on, and ``citations`` pointing into
``evidence`` (1-based), so a reader, the head and the guard check each one against the record it came
from without reading its wording. ``hops`` keeps the trace of every model call and tool call that
produced it. Briefings stored before claims were typed hold items with only ``text`` and
``citations``; they still load (every other field has a default) and render as they did.
"""

from collections import Counter
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

SeenBefore = Literal["recurring", "similar", "novel"]
Mode = Literal["llm", "evidence-only"]
MemorySwitch = Literal["on", "off"]
EvidenceKind = Literal[
    "alert", "incident", "runbook", "profile", "synthesis", "notes", "timeline", "briefing"
]


# What a claim says about the alert: its cause, a check, a fix, a move that made it worse, that it
# is likely noise, or when it comes back.
Role = Literal["cause", "check", "fix", "risky", "noise", "recurrence"]
# The part of the cited source a claim rests on: a record's fields (``memory.template``), a runbook's
# sections (``agent.core.runbooks``), a team-profile pattern and its lists.
ClaimField = Literal[
    "root_cause",
    "correction",
    "symptom",
    "signature",
    "resolution_step",
    "outcome",
    "failed_attempt",
    "runbook_used",
    "runbook",
    "first_check",
    "mitigation",
    "risky_action",
    "pattern",
]


def field_words(field: str | None) -> str | None:
    """How a page or a message names a claim's field ("resolution step")."""
    return field.replace("_", " ") if field else None


# How sure the claim's precedent is, when it is less than a settled one.
Qualifier = Literal["uncertain", "disputed"]
# Who wrote a claim: the model, or the evidence-only assembler (in LLM mode, for a list the guard left
# without any of the model's claims).
Origin = Literal["model", "evidence"]


class Claim(BaseModel):
    """One cited thing a briefing says, as values.

    ``statement`` is what the cited field says (or the model's words), without lead or markers: the
    head merges and ranks on it and on ``role`` and ``field``, the guard checks it against the cited
    field's text. ``text`` is the line as shown in the full lists. ``confidence`` is the calibrated
    probability of its best cited precedent, ``support`` how many incidents it cites, ``date`` when the
    newest of them happened (``agent.core.claims.stamp``). ``action`` (it is something to do, or says what
    was done) and ``services`` (those of the evidence its statement names) are read once, where it is
    stamped (``agent.core.claim_kind``), for the head. ``origin`` says who wrote it, so the model's
    claims and the evidence-only ones that stand in for them can be counted apart. ``role`` (and
    ``origin``) is ``None`` only in a briefing stored before it was recorded."""

    text: str
    citations: list[int] = Field(default_factory=list)
    role: Role | None = None
    field: ClaimField | None = None
    record: str | None = None
    statement: str = ""
    qualifier: Qualifier | None = None
    confidence: float = 0.0
    support: int = 0
    date: str | None = None
    action: bool = False
    services: list[str] = Field(default_factory=list)
    origin: Origin | None = None


class RelatedIncident(BaseModel):
    id: str
    service: str
    score: float
    why: str


class EvidenceItem(BaseModel):
    """One numbered source, a value (a correction makes a new one). ``uncertain`` marks weak matches and
    synthesized text; ``flagged`` data that looked like an instruction to the model."""

    model_config = ConfigDict(frozen=True)

    n: int
    kind: EvidenceKind
    id: str | None = None
    service: str | None = None
    title: str
    text: str
    uncertain: bool = False
    flagged: bool = False
    # For a recalled incident: how likely it is a relevant precedent, and the confidence model's inputs
    # for this pair (``agent.core.confidence.FEATURES``), kept so the resolution's label can refit it.
    probability: float | None = None
    features: tuple[float, ...] = ()


class TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ToolCallTrace(BaseModel):
    tool: str
    args: dict[str, Any] | str
    duration_ms: float
    result_chars: int
    status: Literal["ok", "error", "refused"]
    error: str | None = None
    note: str | None = None  # when the loop made or changed the call, and why


class Hop(BaseModel):
    """One model call: which tools it was offered, what it called, how long it took, what it cost."""

    n: int
    model: str
    duration_ms: float
    tools_offered: list[str]
    calls: list[ToolCallTrace] = Field(default_factory=list)
    answered: bool = False
    usage: TokenUsage | None = None
    error: str | None = None


class CitationCheck(BaseModel):
    cited: int = 0
    invalid_removed: int = 0


# Why a claim was removed: it cites nothing; no cited field of its role says it; a field of another
# role says it better (a failed attempt offered as a fix); it names a field its role cannot rest on; or
# (a summary sentence) it states history that only the calibrated numbers and the records may state.
RemovalReason = Literal["uncited", "unsupported", "other role", "wrong field", "weak precedent", "history"]
_REASON_TEXT: dict[str, str] = {
    "uncited": "cite no source",
    "unsupported": "are not what any cited field of their role says",
    "other role": "rest on a field of another role (a failed attempt offered as a fix, say)",
    "wrong field": "name a field their role cannot rest on",
    "weak precedent": "rest on a record under the match threshold (a lookalike the alert contradicts, say)",
    "history": "state history (seen before, noise, counts, dates) the records and numbers do not give",
}


class RemovedClaim(BaseModel):
    """A claim (or summary sentence, role ``summary``) the guard took out, and why."""

    role: str
    reason: RemovalReason
    text: str
    field: ClaimField | None = None  # the field of another role it rested on, for "other role"


class ClaimCheck(BaseModel):
    """What the claim guard (``agent.core.guard``) kept, by role, and what it removed and why."""

    kept: dict[str, int] = Field(default_factory=dict)
    removed: list[RemovedClaim] = Field(default_factory=list)

    def removed_by_role(self) -> dict[str, int]:
        return dict(Counter(r.role for r in self.removed))

    def removed_by_reason(self) -> dict[str, int]:
        return dict(Counter(r.reason for r in self.removed))

    @property
    def in_role_support(self) -> float:
        """The share of the claims checked that were supported in their role (1.0 when none were)."""
        kept = sum(self.kept.values())
        checked = kept + sum(1 for r in self.removed if r.role != "summary")
        return kept / checked if checked else 1.0

    def sentence(self) -> str | None:
        """How many were removed, by role and why, as a briefing says it; ``None`` when none were."""
        if not self.removed:
            return None
        parts = []
        for reason, text in _REASON_TEXT.items():
            roles = Counter(r.role for r in self.removed if r.reason == reason)
            if roles:
                counted = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
                parts.append(f"{counted} that {text}")
        return f"{len(self.removed)} claim(s) removed: " + "; ".join(parts) + "."


class HeadItem(BaseModel):
    """One merged, ranked line: every source it came from, and why it ranks where it does."""

    text: str
    citations: list[int] = Field(default_factory=list)
    role: Role | None = None
    field: ClaimField | None = None  # the field of its strongest claim
    sources: list[str] = Field(default_factory=list)
    support: int = 0
    confidence: float = 0.0
    last_seen: str | None = None


class BriefingHead(BaseModel):
    """The short, ranked top of a briefing (see ``agent.briefing.head``); ``more_*`` hold the rest."""

    first_line: str
    checks: list[HeadItem] = Field(default_factory=list)
    fixes: list[HeadItem] = Field(default_factory=list)
    risky: list[HeadItem] = Field(default_factory=list)
    more_checks: list[HeadItem] = Field(default_factory=list)
    more_fixes: list[HeadItem] = Field(default_factory=list)
    more_risky: list[HeadItem] = Field(default_factory=list)
    recurrence: str | None = None


class RunReport(BaseModel):
    """How an answer came about, reported alike by briefings and resolution drafts."""

    mode: Mode
    memory: MemorySwitch
    hops: list[Hop]
    citation_check: CitationCheck
    warnings: list[str]
    generated_at: datetime


class Briefing(BaseModel):
    summary: str
    likely_causes: list[Claim] = Field(default_factory=list)
    first_checks: list[Claim] = Field(default_factory=list)
    suggested_fix: list[Claim] = Field(default_factory=list)
    risky_actions: list[Claim] = Field(default_factory=list)
    related_incidents: list[RelatedIncident] = Field(default_factory=list)
    seen_before: SeenBefore
    # The best precedents needed no fix (self-recovered, false alarm): their ids, said first in the summary.
    noise: list[str] = Field(default_factory=list)
    # The top two precedents give different root causes: their ids; confidence is lowered.
    disputed: list[str] = Field(default_factory=list)
    evidence: list[EvidenceItem] = Field(default_factory=list)
    mode: Mode
    memory: MemorySwitch
    # Why memory could not be reached for this briefing (on, but nothing could be recalled); else None.
    memory_error: str | None = None
    hops: list[Hop] = Field(default_factory=list)
    citation_check: CitationCheck = Field(default_factory=CitationCheck)
    claim_check: ClaimCheck = Field(default_factory=ClaimCheck)
    warnings: list[str] = Field(default_factory=list)
    generated_at: datetime
    head: BriefingHead | None = None


class ModelAnswer(BaseModel):
    """What the model answers with (as JSON) or the evidence-only planner returns (as a value).

    ``related_incidents`` names incident ids only: service, score and the reason come from recall,
    never from the model, so it cannot invent a match. A model's claims carry its words, citations and
    at most the field it says it rests on; their role is the list they are in, and everything else is
    filled in from the evidence and checked (``agent.core.guard``).
    """

    summary: str = Field(min_length=1)
    likely_causes: list[Claim] = Field(default_factory=list)
    first_checks: list[Claim] = Field(default_factory=list)
    suggested_fix: list[Claim] = Field(default_factory=list)
    risky_actions: list[Claim] = Field(default_factory=list)
    related_incidents: list[str] = Field(default_factory=list)
    # "Seen before" is read from the calibrated numbers (``agent.briefing.finish``), never from this: a
    # model's word for it outside the three must not cost it every claim of its answer.
    seen_before: SeenBefore | None = None

    @field_validator("seen_before", mode="before")
    @classmethod
    def _unknown_is_none(cls, value: object) -> object:
        return value if value in get_args(SeenBefore) else None
