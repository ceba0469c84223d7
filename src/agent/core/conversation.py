"""The state one conversation carries between hops, and the two kinds of model the loop drives.

A ``ChatModel`` sees only ``messages`` (the OpenAI-style transcript) and the tools on offer. A
``Planner`` (the evidence-only planner and drafter) sees a ``ConversationView`` instead: the alert's
evidence and every tool outcome so far as values, never prose. The loop owns the ``Conversation`` and
hands each model what it reads, which is how one loop serves both.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypedDict, runtime_checkable

from agent.core.evidence import Evidence, Match
from agent.core.schema import CitationCheck, Hop, MemorySwitch, Mode, TokenUsage
from incidents.timeutil import utcnow


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
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: TokenUsage | None = None


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


@dataclass
class ToolOutcome:
    """A tool call's result as a value: ``text`` goes back to the model, the rest stays structured."""

    call: ToolCall
    tool: str
    args: dict[str, Any] | str
    ok: bool
    text: str
    duration_ms: float
    matches: list[Match] = field(default_factory=list)
    scoped: bool = False
    error: str | None = None
    logged: LoggedPostMortem | None = None


@dataclass
class Conversation:
    messages: list[dict[str, Any]]
    evidence: Evidence
    outcomes: list[ToolOutcome] = field(default_factory=list)
    memory_on: bool = True
    memory_errors: list[str] = field(default_factory=list)

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
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> ModelTurn: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Planner(Protocol):
    """A deterministic model: it plans from the tool outcomes (``view``), never from prose."""

    name: str
    mode: Mode

    def next_turn(self, view: ConversationView, tools: list[dict[str, Any]] | None) -> ModelTurn: ...

    async def aclose(self) -> None: ...


Model = ChatModel | Planner


class RunFields(TypedDict):
    mode: Mode
    memory: MemorySwitch
    hops: list[Hop]
    citation_check: CitationCheck
    warnings: list[str]
    generated_at: datetime


def run_fields(
    conversation: Conversation, model: Model, hops: list[Hop], check: CitationCheck, warnings: list[str]
) -> RunFields:
    """How an answer came about, reported alike by briefings and resolution drafts (warnings once each)."""
    return RunFields(
        mode=model.mode,
        memory="on" if conversation.memory_on else "off",
        hops=hops,
        citation_check=check,
        warnings=list(dict.fromkeys(warnings)),
        generated_at=utcnow(),
    )
