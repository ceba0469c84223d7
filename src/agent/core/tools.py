"""The tools the model may call, their schemas, and their handlers; every outcome is a value.

Bad JSON, arguments that fail validation, an unknown tool name and a failing tool all come back as
an ``Error: ...`` text the model can read and correct, never as an exception out of the loop.

Tools read the conversation and never write it: a recall returns what memory found, the loop
records it (``Conversation.record`` numbers it), and ``ToolBox.reply`` then words the numbered
results for the model.

Recall and reflect live here. The one write, ``log_incident``, belongs to the resolution job
(``agent.resolution.log_tool``) and joins a ``ToolBox`` as its ``WriteTool``; triage never holds one.
"""

import asyncio
import json
import time
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from agent.core.confidence import contradicted, tie_groups
from agent.core.conversation import ConversationView, LoggedPostMortem, Synthesis, ToolCall, ToolOutcome
from agent.core.evidence import Evidence
from agent.core.prompts import MAX_INCIDENTS_TO_MODEL, boundary, results_message
from memory import MemoryUnavailable, RecalledIncident
from memory import service as memory_service
from memory.bank import Recall
from memory.ranks import counted_without
from memory.schema import kind_tag, service_tag

RECALL = "recall_similar_incidents"
# How deep a search across every service looks before the relevance model picks its best.
RERANK_DEPTH = 30
# How many lookalikes the alert contradicts a search keeps besides the records it was asked for.
LOOKALIKE_SLACK = 3
REFLECT = "get_incident_briefing"


async def recall_past_lookalikes(
    bank: Recall, alert_text: str, query: str, service: str | None, limit: int, slack: int = LOOKALIKE_SLACK
) -> list[RecalledIncident]:
    """Memory's first ``limit`` records for ``query``, the lookalikes the alert contradicts
    (``confidence.contradicted``) taking no precedent's place: up to ``slack`` of them are kept besides
    the ``limit``, and every other record is ranked in its channels as if they were not there. A
    lookalike shares the alert's words and is stated against them ("no connection waits" against "150
    waiting in the pool"), so it ranks high; counted, it pushed the fault it mimics under the listing bar
    and out of a short search (the scenario ``contradiction-checkout-pool-not-the-import``). One search,
    a few records deeper, costs less than a second one."""
    found = await memory_service.recall_similar_incidents(bank, query, service, limit + slack)
    kept: list[RecalledIncident] = []
    lookalikes: set[str] = set()
    for incident in found:
        if len(kept) - len(lookalikes) == limit:
            break
        kept.append(incident)
        if contradicted(incident, alert_text):
            lookalikes.add(incident.id)
    return counted_without(kept, lookalikes)


async def recall_ranked(
    bank: Recall, evidence: Evidence, query: str, service: str | None, limit: int
) -> list[RecalledIncident]:
    """The recall tool's records (``recall_past_lookalikes``): memory's order within ``service``; a
    search across every service looks ``RERANK_DEPTH`` deep and keeps the ``limit`` records the relevance
    model rates highest (``Evidence.most_relevant``). ``bench retrieval`` ranks with this too, so it
    measures what a briefing is given."""
    depth = limit if service is not None else max(limit, RERANK_DEPTH)
    # Re-ranked, a lookalike (held to the contradicted ceiling) never takes a precedent's place anyway.
    slack = LOOKALIKE_SLACK if depth == limit else 0
    found = await recall_past_lookalikes(bank, evidence.alert.description, query, service, depth, slack)
    return evidence.most_relevant(found, limit) if depth > limit else found


class RecallArgs(BaseModel):
    alert_description: str = Field(min_length=1, max_length=4000)
    service: str | None = Field(default=None, max_length=255)
    limit: int = Field(default=3, ge=1, le=MAX_INCIDENTS_TO_MODEL)


class ReflectArgs(BaseModel):
    question: str = Field(min_length=1, max_length=2000)
    service: str | None = Field(default=None, max_length=255)


def tool_schema(name: str, description: str, model: type[BaseModel]) -> dict[str, Any]:
    parameters = model.model_json_schema()
    parameters.pop("title", None)
    for prop in parameters.get("properties", {}).values():
        prop.pop("title", None)
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    RECALL: tool_schema(
        RECALL,
        "Find resolved incidents similar to an alert, as whole incidents with their root cause, fix and "
        "failed attempts. Pass `service` to stay within one service; omit it to search every service.",
        RecallArgs,
    ),
    REFLECT: tool_schema(
        REFLECT,
        "Ask the team's memory a question answered by synthesizing across many incidents "
        "(for example: what usually causes this on checkout-service?). Synthesized, so less certain.",
        ReflectArgs,
    ),
}


class WriteTool(Protocol):
    """A tool that writes (``log_incident``), bound to the one conversation it was opened for.

    The resolution job provides it; the loop offers it only where ``offered`` says so, and a call
    comes back as a ``LoggedPostMortem``."""

    name: str
    schema: dict[str, Any]
    args: type[BaseModel]

    def offered(self, conversation: ConversationView) -> bool: ...

    async def run(self, args: BaseModel, conversation: ConversationView) -> LoggedPostMortem: ...


class ToolBox:
    """The tools of one conversation: recall and reflect over its bank, and maybe one write tool."""

    def __init__(
        self, *, bank: Recall | None, memory_timeout_s: float = 10.0, writer: WriteTool | None = None
    ) -> None:
        self._bank = bank
        self._timeout = memory_timeout_s
        self._writer = writer
        self._schemas = TOOL_SCHEMAS | ({writer.name: writer.schema} if writer is not None else {})
        self.fence = boundary()

    def offered(self, conversation: ConversationView) -> list[str]:
        """Recall and reflect when memory is on; the write tool where it says it may be offered."""
        names: list[str] = []
        if conversation.memory_on and self._bank is not None:
            names += [RECALL, REFLECT]
        if self._writer is not None and self._writer.offered(conversation):
            names.append(self._writer.name)
        return names

    def schemas(self, names: list[str]) -> list[dict[str, Any]]:
        return [self._schemas[name] for name in names]

    async def run(self, call: ToolCall, conversation: ConversationView, offered: list[str]) -> ToolOutcome:
        started = time.perf_counter()

        def outcome(ok: bool, text: str, args: dict[str, Any] | str, **extra: Any) -> ToolOutcome:
            duration = (time.perf_counter() - started) * 1000
            error = None if ok else text
            return ToolOutcome(
                call=call,
                tool=call.name,
                args=args,
                ok=ok,
                text=text,
                duration_ms=duration,
                error=error,
                **extra,
            )

        if call.name not in self._schemas or call.name not in offered:
            available = ", ".join(offered) or "none"
            return outcome(
                False,
                f"Error: unknown or unavailable tool '{call.name}'. Available: {available}.",
                call.arguments,
            )
        try:
            raw = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            return outcome(
                False, f"Error: arguments are not valid JSON ({exc.msg} at {exc.pos}).", call.arguments
            )
        if not isinstance(raw, dict):
            return outcome(False, "Error: arguments must be a JSON object.", call.arguments)
        try:
            if call.name == RECALL:
                args = RecallArgs.model_validate(raw)
                found = await self._recall(args, conversation)
                return outcome(True, "", args.model_dump(), found=found, scoped=args.service is not None)
            if call.name == REFLECT:
                reflect_args = ReflectArgs.model_validate(raw)
                synthesis = await self._reflect(reflect_args)
                text = "" if synthesis else "Memory has no synthesized answer to that question."
                return outcome(True, text, reflect_args.model_dump(), synthesis=synthesis)
            assert self._writer is not None
            write_args = self._writer.args.model_validate(raw)
            logged = await self._writer.run(write_args, conversation)
            return outcome(True, logged.message, write_args.model_dump(), logged=logged)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            return outcome(False, f"Error: invalid arguments: {problems}.", raw)
        except MemoryUnavailable as exc:
            return outcome(
                False,
                f"Error: memory is unavailable right now ({exc}).",
                raw,
                memory_error=str(exc) or type(exc).__name__,
            )
        except PermissionError as exc:
            return outcome(False, f"Error: not permitted: {exc}.", raw)
        except Exception as exc:
            return outcome(False, f"Error: the tool failed: {type(exc).__name__}: {exc}.", raw)

    async def _memory(self, coro: Any) -> Any:
        try:
            return await asyncio.wait_for(coro, self._timeout)
        except TimeoutError as exc:
            raise MemoryUnavailable(f"no answer within {self._timeout:g}s") from exc

    async def _recall(self, args: RecallArgs, conversation: ConversationView) -> tuple[RecalledIncident, ...]:
        """The records ``recall_ranked`` returns, then the corrections they name (not yet folded in)."""
        assert self._bank is not None
        found = await self._memory(
            recall_ranked(self._bank, conversation.evidence, args.alert_description, args.service, args.limit)
        )
        return (*found, *await self._fetch_corrections(found, conversation.evidence))

    async def _fetch_corrections(
        self, found: list[RecalledIncident], evidence: Evidence
    ) -> list[RecalledIncident]:
        """Corrections named by a recalled record's metadata, so they can go ahead of its text."""
        wanted = {
            doc_id
            for incident in found
            for doc_id in incident.metadata.get("corrections", "").split(",")
            if doc_id and not evidence.has_correction(doc_id)
        }
        if not wanted or self._bank is None:
            return []
        targets = sorted({i.id for i in found if i.metadata.get("corrections")})
        corrections = await self._memory(
            self._bank.recall(
                query=" ".join(targets),
                tags=[kind_tag("correction")],
                tags_match="any_strict",
                limit=min(len(wanted) + 2, MAX_INCIDENTS_TO_MODEL),
            )
        )
        return [c for c in corrections if c.id in wanted]

    async def _reflect(self, args: ReflectArgs) -> Synthesis | None:
        assert self._bank is not None
        tags = [service_tag(args.service)] if args.service else None
        answer = await self._memory(
            self._bank.reflect(query=args.question, tags=tags, tags_match="any_strict" if tags else "any")
        )
        if not answer.text.strip():
            return None
        based_on = f" (based on {', '.join(answer.based_on)})" if answer.based_on else ""
        return Synthesis(
            title=f"Synthesis: {args.question[:80]}{based_on}", text=answer.text, service=args.service
        )

    def reply(self, outcome: ToolOutcome, evidence: Evidence) -> str:
        """What goes back to the model, once the loop has recorded (numbered) what the tool found."""
        if not outcome.ok or outcome.text:
            return outcome.text
        if outcome.tool == REFLECT:
            return results_message(
                self.fence,
                [(item, "synthesized across incidents") for item in outcome.cited],
                "Memory's synthesis:",
            )
        service = outcome.args.get("service") if isinstance(outcome.args, dict) else None
        scope = f"on {service}" if service else "across all services"
        if not outcome.matches:
            return f"No resolved incident {scope} matches this description."
        header = f"{len(outcome.matches)} resolved incident(s) {scope}, strongest first:"
        first = outcome.matches[0].confidence  # every match's carries the same fit's bar and resolution
        groups = tie_groups([m.confidence.probability for m in outcome.matches], first.bar, first.resolution)
        ordered = [m for _, m in sorted(zip(groups, outcome.matches, strict=True), key=lambda gm: gm[0])]
        return results_message(self.fence, [(m.item, evidence.why(m)) for m in ordered], header)
