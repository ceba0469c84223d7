"""The briefing: what the on-call engineer reads, stored as JSON on the incident.

Every claim is a ``CitedItem`` whose ``citations`` point into ``evidence`` (1-based, as ``[n]`` in the
text), so a reader can check each sentence against the record it came from. ``hops`` keeps the trace
of every model call and tool call that produced it.
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

SeenBefore = Literal["recurring", "similar", "novel"]
Mode = Literal["llm", "evidence-only"]
MemorySwitch = Literal["on", "off"]
EvidenceKind = Literal[
    "alert", "incident", "runbook", "profile", "synthesis", "notes", "timeline", "briefing"
]


class CitedItem(BaseModel):
    text: str
    citations: list[int] = Field(default_factory=list)


class RelatedIncident(BaseModel):
    id: str
    service: str
    score: float
    why: str


class EvidenceItem(BaseModel):
    """One numbered source. ``uncertain`` marks weak matches and synthesized text; ``flagged`` data
    that looked like an instruction to the model."""

    n: int
    kind: EvidenceKind
    id: str | None = None
    service: str | None = None
    title: str
    text: str
    uncertain: bool = False
    flagged: bool = False


class TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ToolCallTrace(BaseModel):
    tool: str
    args: dict[str, Any] | str
    duration_ms: float
    result_chars: int
    status: Literal["ok", "error"]
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


class HeadItem(BaseModel):
    """One merged, ranked line: every source it came from, and why it ranks where it does."""

    text: str
    citations: list[int] = Field(default_factory=list)
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
    likely_causes: list[CitedItem] = Field(default_factory=list)
    first_checks: list[CitedItem] = Field(default_factory=list)
    suggested_fix: list[CitedItem] = Field(default_factory=list)
    risky_actions: list[CitedItem] = Field(default_factory=list)
    related_incidents: list[RelatedIncident] = Field(default_factory=list)
    seen_before: SeenBefore
    # The best precedents needed no fix (self-recovered, false alarm): their ids, said first in the summary.
    noise: list[str] = Field(default_factory=list)
    # The top two precedents give different root causes: their ids; confidence is lowered.
    disputed: list[str] = Field(default_factory=list)
    evidence: list[EvidenceItem] = Field(default_factory=list)
    mode: Mode
    memory: MemorySwitch
    hops: list[Hop] = Field(default_factory=list)
    citation_check: CitationCheck = Field(default_factory=CitationCheck)
    warnings: list[str] = Field(default_factory=list)
    generated_at: datetime
    head: BriefingHead | None = None


class ModelAnswer(BaseModel):
    """The JSON object the model (or the evidence-only planner) must answer with.

    ``related_incidents`` names incident ids only: service, score and the reason come from recall,
    never from the model, so it cannot invent a match.
    """

    summary: str = Field(min_length=1)
    likely_causes: list[CitedItem] = Field(default_factory=list)
    first_checks: list[CitedItem] = Field(default_factory=list)
    suggested_fix: list[CitedItem] = Field(default_factory=list)
    risky_actions: list[CitedItem] = Field(default_factory=list)
    related_incidents: list[str] = Field(default_factory=list)
    seen_before: SeenBefore
