"""The three-hop tool loop, written once for the LLM and the evidence-only planner alike.

At most ``MAX_HOPS`` model calls. Tools are withheld on the last hop so the model must answer. An
invalid answer gets one repair inside the budget; if none comes, or the LLM is down, the briefing
is rebuilt in evidence-only mode and a warning says why. Every hop is traced into the briefing.
"""

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeVar

from agent.briefing.finish import finish
from agent.briefing.head import build_head
from agent.briefing.planner import EvidenceOnlyPlanner, next_recall
from agent.briefing.profile_evidence import ProfileSource
from agent.briefing.recall_first import ACROSS_CALL, RecallFirst
from agent.core.claims import SECTIONS
from agent.core.confidence import Scorer
from agent.core.conversation import (
    Conversation,
    LLMUnavailable,
    MalformedTurn,
    Model,
    ModelTurn,
    Planner,
    ToolCall,
    ToolOutcome,
)
from agent.core.evidence import AlertInput, Evidence, Refuted
from agent.core.prompts import FINAL_HOP, SYSTEM_PROMPT, alert_message, malformed_message, repair_message
from agent.core.schema import Briefing, Hop, ModelAnswer, ToolCallTrace
from agent.core.similarity import KnownVectors, Similarity
from agent.core.tools import RECALL, ToolBox
from memory.bank import Recall
from memory.embedder import Embedder
from memory.text import json_object, validated

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_HOPS = 3
MAX_CALLS_PER_HOP = 4


def parse_answer(content: str | None) -> ModelAnswer:
    """The model's JSON answer, tolerating code fences and bare strings in place of cited items."""
    raw = json_object(content)
    for key in SECTIONS:
        if isinstance(raw.get(key), list):
            raw[key] = [{"text": item} if isinstance(item, str) else item for item in raw[key]]
    return validated(ModelAnswer, raw)


def _status(outcome: ToolOutcome) -> Literal["ok", "error", "refused"]:
    """A write the tool turned down is refused, not ok: it ran, and wrote nothing."""
    if outcome.logged is not None and outcome.logged.refused:
        return "refused"
    return "ok" if outcome.ok else "error"


def _trace(outcome: ToolOutcome, note: str | None) -> ToolCallTrace:
    return ToolCallTrace(
        tool=outcome.tool,
        args=outcome.args,
        duration_ms=round(outcome.duration_ms, 3),
        result_chars=len(outcome.text),
        status=_status(outcome),
        error=outcome.logged.refused
        if outcome.logged is not None and outcome.logged.refused
        else outcome.error,
        note=note,
    )


async def _turn(
    model: Model, conversation: Conversation, tools: list[dict[str, Any]] | None, require: str | None
) -> ModelTurn:
    """The one place a model is called: a planner reads the outcomes, a chat model the messages."""
    if isinstance(model, Planner):
        return model.next_turn(conversation.view(), tools)
    return await model.complete(conversation.messages, tools, require=require)


def _assistant_message(turn: ModelTurn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.content or ""}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    return message


async def _run_calls(
    calls: list[ToolCall],
    notes: Mapping[str, str],
    conversation: Conversation,
    tools: ToolBox,
    offered: list[str],
    hop: Hop,
    seen_calls: dict[tuple[str, str], ToolOutcome],
) -> None:
    """One turn's tool calls, each answered in the conversation: a result, or why it was not run."""
    for index, call in enumerate(calls):
        key = (call.name, call.arguments)
        if index >= MAX_CALLS_PER_HOP:
            text = f"Error: at most {MAX_CALLS_PER_HOP} tool calls per turn; this one was not run."
        elif key in seen_calls:
            text = "This exact call was already made; its results are above."
        else:
            found = await tools.run(call, conversation.view(), offered)
            outcome = conversation.record(found, tools.reply)
            seen_calls[key] = outcome
            hop.calls.append(_trace(outcome, notes.get(call.id)))
            text = outcome.text
        conversation.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


class Refutations(Protocol):
    """What the team ruled out for an alert before (``evidence.Refuted``), by precedent id; nothing when
    it cannot tell (the source says why in its log, the briefing goes on)."""

    async def refuted(self, alert: AlertInput) -> Mapping[str, Refuted]: ...


class Agent:
    """Briefs alerts with one model (LLM or planner) over one memory bank."""

    def __init__(
        self,
        *,
        model: Model,
        bank: Recall | None,
        memory_timeout_s: float = 10.0,
        profile: ProfileSource | None = None,
        embedder: Embedder | None = None,
        fit: Scorer | None = None,
        known_vectors: KnownVectors | None = None,
        refutations: Refutations | None = None,
    ) -> None:
        self.model = model
        self.fit = fit
        self.refutations = refutations
        self.known_vectors = known_vectors
        self.bank = bank
        self.memory_timeout_s = memory_timeout_s
        self.profile = profile
        self.embedder = embedder

    @property
    def ranking_model(self) -> str | None:
        """The bank's ranker, so precedent confidence knows whether its fit applies."""
        return self.bank.ranking_model if self.bank is not None else None

    async def brief(self, alert: AlertInput, *, memory_on: bool = True) -> Briefing:
        """A briefing, always: LLM trouble or memory trouble degrade it and say so in ``warnings``.

        Triage holds no resolution context, so ``log_incident`` is never on offer here."""
        return await self._run(self.model, alert, memory_on, first_hop=1)

    async def _run(
        self,
        model: Model,
        alert: AlertInput,
        memory_on: bool,
        *,
        first_hop: int,
        carried_hops: list[Hop] | None = None,
        carried_warnings: list[str] | None = None,
    ) -> Briefing:
        refuted = await self.refutations.refuted(alert) if memory_on and self.refutations else {}
        evidence = Evidence(
            alert,
            ranking_model=self.ranking_model,
            fit=self.fit,
            refuted=MappingProxyType(dict(refuted)),
        )
        tools = ToolBox(bank=self.bank, memory_timeout_s=self.memory_timeout_s)
        memory_errors: list[str] = []
        if memory_on and self.bank is not None and self.profile is not None:
            patterns, error = await self.profile.matching(alert)
            memory_errors += [error] if error else []
            for pattern in patterns:
                evidence, _ = evidence.with_profile(pattern)
        conversation = Conversation(
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": alert_message(tools.fence, evidence.items)},
            ],
            evidence=evidence,
            memory_on=memory_on and self.bank is not None,
            memory_errors=memory_errors,
        )
        hops = list(carried_hops or [])
        warnings = list(carried_warnings or [])
        answer, failure = await run_hops(
            model,
            conversation,
            tools,
            hops,
            first_hop=first_hop,
            parse=parse_answer,
            repair=repair_message,
            answer_type=ModelAnswer,
            recall_first=RecallFirst(alert),
        )
        if answer is None:
            if isinstance(model, EvidenceOnlyPlanner):
                raise RuntimeError(f"the evidence-only planner gave no briefing: {failure}")
            return await self._run(
                EvidenceOnlyPlanner(),
                alert,
                memory_on,
                first_hop=len(hops) + 1,
                carried_hops=hops,
                carried_warnings=[
                    *warnings,
                    f"{failure}: this briefing was assembled from the evidence only.",
                ],
            )
        similarity = Similarity(self.embedder, self.known_vectors)

        def finished() -> Briefing:
            # One trip to a worker thread for both: each trip waits for a thread to wake.
            briefing = finish(answer, conversation, model, hops, warnings, similarity)
            briefing.head = build_head(briefing, conversation.evidence, similarity)
            return briefing

        return await asyncio.to_thread(finished)


async def run_hops(
    model: Model,
    conversation: Conversation,
    tools: ToolBox,
    hops: list[Hop],
    *,
    first_hop: int,
    parse: Callable[[str | None], T],
    repair: Callable[[str], str],
    answer_type: type[T],
    answer_name: str = "briefing",
    recall_first: RecallFirst | None = None,
) -> tuple[T | None, str]:
    """The loop itself: at most ``MAX_HOPS`` model calls, each traced into ``hops``.

    With ``recall_first`` (a briefing), hop 1 recalls the alert whenever recall is on offer, a chat
    model's hop 1 also looks across services when the evidence-only briefing would (its
    ``next_recall``), and every recall query is checked (``agent.briefing.recall_first``). A
    planner's answer is taken as the value it is (``answer_type``); a chat model's text is parsed.
    Returns the answer, or ``None`` and why there is none (the caller falls back)."""
    repairing = False
    seen_calls: dict[tuple[str, str], ToolOutcome] = {}
    for n in range(1, MAX_HOPS + 1):
        last = n == MAX_HOPS
        offered = [] if last or repairing else tools.offered(conversation.view())
        if last and not repairing and len(conversation.messages) > 2:
            conversation.messages.append({"role": "user", "content": FINAL_HOP})
        require = RECALL if recall_first is not None and n == 1 and RECALL in offered else None
        hop = Hop(n=first_hop + n - 1, model=model.name, duration_ms=0.0, tools_offered=offered)
        hops.append(hop)
        started = time.perf_counter()
        try:
            turn = await _turn(model, conversation, tools.schemas(offered) or None, require)
        except LLMUnavailable as exc:
            hop.duration_ms = round((time.perf_counter() - started) * 1000, 3)
            hop.error = str(exc)
            log.warning("llm unavailable", extra={"hop": n, "error": str(exc)})
            return None, f"The LLM was unavailable ({exc})"
        except MalformedTurn as exc:
            hop.error = str(exc)
            if require is None:
                hop.duration_ms = round((time.perf_counter() - started) * 1000, 3)
                conversation.messages.append({"role": "user", "content": malformed_message(str(exc))})
                continue
            turn = ModelTurn(content=None)
        notes: dict[str, str] = {}
        if recall_first is not None and offered:
            turn, notes = recall_first.apply(turn, first_hop=require is not None)
        hop.usage = turn.usage
        conversation.messages.append(_assistant_message(turn))
        if turn.tool_calls and offered:
            await _run_calls(turn.tool_calls, notes, conversation, tools, offered, hop, seen_calls)
            follow = next_recall(conversation.view()) if require and not isinstance(model, Planner) else None
            if follow is not None:
                across = ModelTurn(content=None, tool_calls=[follow])
                conversation.messages.append(_assistant_message(across))
                notes = {follow.id: ACROSS_CALL}
                await _run_calls(across.tool_calls, notes, conversation, tools, offered, hop, seen_calls)
            hop.duration_ms = round((time.perf_counter() - started) * 1000, 3)
            continue
        hop.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        hop.answered = True
        if turn.tool_calls:
            return None, "The model asked for tools on its last hop instead of answering"
        if isinstance(turn.answer, answer_type):
            return turn.answer, ""
        try:
            return parse(turn.content), ""
        except ValueError as exc:
            if last or repairing:
                return None, f"The model's answer was not a valid {answer_name} after one repair ({exc})"
            repairing = True
            conversation.messages.append({"role": "user", "content": repair(str(exc))})
    return None, f"The model gave no answer within {MAX_HOPS} hops"
