"""The state one conversation carries between hops, and the two kinds of model the loop drives.

A ``ChatModel`` sees only ``messages`` (the OpenAI-style transcript) and the tools on offer. A
``Planner`` (the evidence-only planner and drafter) sees a ``ConversationView`` instead: the alert's
evidence and every tool outcome so far as values, never prose. The loop owns the ``Conversation`` and
hands each model what it reads, which is how one loop serves both.

The numbered evidence is built in one place. A job seeds it before the first hop (the alert, the
profile's patterns or the engineer's notes); after that it grows only through
``Conversation.record``, which the loop calls with each tool outcome. Tools, planners and the
assembler read a ``ConversationView`` and never number anything themselves.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from agent.core.evidence import Evidence, Match
from agent.core.schema import CitationCheck, EvidenceItem, Hop, Mode, RunReport, TokenUsage
from incidents.timeutil import utcnow
from memory import RecalledIncident


class LLMUnavailable(Exception):
    """The model could not be reached, or kept failing after retries; the loop falls back."""


class MalformedTurn(Exception):
    """The provider rejected what the model generated (a tool call that is not valid JSON, say).

    Like a bad tool argument, it goes back to the model as text and costs the hop it took."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelTurn:
    """One turn: tool calls, or an answer. A chat model answers in ``content`` (JSON the loop parses);
    a planner answers with the value itself in ``answer``, never through text."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: TokenUsage | None = None
    answer: BaseModel | None = None


@dataclass(frozen=True)
class LoggedPostMortem:
    """What a successful ``log_incident`` carried, cleaned: the text that was (or would be) written,
    the evidence each field cited, whether it reached the resolution service, and the fields that
    kept it a draft for want of support in the notes or a record."""

    fields: dict[str, str]
    citations: dict[str, list[int]]
    written: bool
    version: int | None
    message: str
    unsupported: list[str] = field(default_factory=list)
    refused: str | None = None  # why a commit the engineer asked for was not written


@dataclass(frozen=True)
class Synthesis:
    """Memory's synthesized answer to a question, cited like a record but marked less certain."""

    title: str
    text: str
    service: str | None


@dataclass(frozen=True)
class ToolOutcome:
    """A tool call's result as a value: ``text`` goes back to the model, the rest stays structured.

    What memory returned (``found``, ``synthesis``) is not numbered yet: ``Conversation.record``
    numbers it and returns the outcome with ``matches``, ``cited`` and the reply to the model filled
    in; the outcome a tool returned is never changed."""

    call: ToolCall
    tool: str
    args: dict[str, Any] | str
    ok: bool
    text: str
    duration_ms: float
    found: tuple[RecalledIncident, ...] = ()
    synthesis: Synthesis | None = None
    matches: tuple[Match, ...] = ()
    cited: tuple[EvidenceItem, ...] = ()
    scoped: bool = False
    error: str | None = None
    memory_error: str | None = None
    logged: LoggedPostMortem | None = None


@dataclass
class Conversation:
    messages: list[dict[str, Any]]
    evidence: Evidence
    outcomes: list[ToolOutcome] = field(default_factory=list)
    memory_on: bool = True
    memory_errors: list[str] = field(default_factory=list)

    def record(self, outcome: ToolOutcome, reply: Callable[[ToolOutcome, Evidence], str]) -> ToolOutcome:
        """The one writer of the evidence once the loop runs: what a tool found gets its numbers here,
        then ``reply`` writes what the model is told of it. Returns the outcome as recorded."""
        self.evidence, matches = self.evidence.with_incidents(outcome.found)
        cited: tuple[EvidenceItem, ...] = ()
        if outcome.synthesis is not None:
            synthesis = outcome.synthesis
            self.evidence, item = self.evidence.with_item(
                kind="synthesis",
                title=synthesis.title,
                text=synthesis.text,
                service=synthesis.service,
                uncertain=True,
            )
            cited = (item,)
        numbered = replace(outcome, matches=tuple(matches), cited=cited)
        recorded = replace(numbered, text=reply(numbered, self.evidence))
        if outcome.memory_error is not None:
            self.memory_errors.append(outcome.memory_error)
        self.outcomes.append(recorded)
        return recorded

    def view(self) -> "ConversationView":
        return ConversationView(
            evidence=self.evidence,
            outcomes=tuple(self.outcomes),
            memory_on=self.memory_on,
            memory_errors=tuple(self.memory_errors),
        )


@dataclass(frozen=True)
class ConversationView:
    """What a planner reads of a conversation: the evidence and the tool outcomes, as values."""

    evidence: Evidence
    outcomes: tuple[ToolOutcome, ...]
    memory_on: bool
    memory_errors: tuple[str, ...]


class ChatModel(Protocol):
    """One call of the loop: given the messages so far and the tools on offer, a turn."""

    name: str
    mode: Mode

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        require: str | None = None,
    ) -> ModelTurn:
        """``require`` names a tool the turn should call; an endpoint may ignore it, the loop checks."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Planner(Protocol):
    """A deterministic model: it plans from the tool outcomes (``view``), never from prose."""

    name: str
    mode: Mode

    def next_turn(self, view: ConversationView, tools: list[dict[str, Any]] | None) -> ModelTurn: ...

    async def aclose(self) -> None: ...


Model = ChatModel | Planner


def run_fields(
    conversation: Conversation, model: Model, hops: list[Hop], check: CitationCheck, warnings: list[str]
) -> dict[str, Any]:
    """The ``RunReport`` fields of an answer, for a briefing or a resolution draft (warnings once each)."""
    report = RunReport(
        mode=model.mode,
        memory="on" if conversation.memory_on else "off",
        hops=hops,
        citation_check=check,
        warnings=list(dict.fromkeys(warnings)),
        generated_at=utcnow(),
    )
    return dict(report)
