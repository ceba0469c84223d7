"""The tools the model may call, their schemas, and their handlers; every outcome is a value.

Bad JSON, arguments that fail validation, an unknown tool name and a failing tool all come back as
an ``Error: ...`` text the model can read and correct, never as an exception out of the loop.

Tools read the conversation and never write it: a recall returns what memory found, the loop
records it (``Conversation.record`` numbers it), and ``ToolBox.reply`` then words the numbered
results for the model.

``log_incident`` (the only write) is offered only with a ``ResolutionContext``, which only
``open_resolution_conversation`` can make: it checks in the database that the incident exists and
that a named engineer started the conversation. The handler checks again before writing (the
conversation is about that incident, the writer is the engineer who started it, no data in it looked
like an instruction) and never writes memory itself: it hands the post-mortem to a
``ResolutionRecorder``, the resolution service, which stores the resolution and its memory outbox row
together. Triage never holds a context.
"""

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError, create_model
from sqlalchemy import select
from sqlalchemy.orm import Session

from agent.core.citations import Tally, plain_cited
from agent.core.conversation import ConversationView, LoggedPostMortem, Synthesis, ToolCall, ToolOutcome
from agent.core.evidence import Evidence
from agent.core.prompts import MAX_INCIDENTS_TO_MODEL, boundary, results_message
from agent.core.support import unsupported_fields
from incidents.incident.models import Incident
from incidents.resolution.models import ResolutionFields
from memory import MemoryUnavailable, RecalledIncident
from memory import service as memory_service
from memory.bank import Recall
from memory.schema import kind_tag, service_tag
from memory.text import replace_unknown_ids

RECALL = "recall_similar_incidents"
REFLECT = "get_incident_briefing"
LOG = "log_incident"


class RecallArgs(BaseModel):
    alert_description: str = Field(min_length=1, max_length=4000)
    service: str | None = Field(default=None, max_length=255)
    limit: int = Field(default=3, ge=1, le=MAX_INCIDENTS_TO_MODEL)


class ReflectArgs(BaseModel):
    question: str = Field(min_length=1, max_length=2000)
    service: str | None = Field(default=None, max_length=255)


# The post-mortem the tool takes is the resolution template itself: its fields, its required ones.
REQUIRED_FIELDS = tuple(name for name, field in ResolutionFields.model_fields.items() if field.is_required())
_LOG_FIELDS: dict[str, Any] = {
    name: (str, Field(min_length=1)) if name in REQUIRED_FIELDS else (str, "")
    for name in ResolutionFields.model_fields
}
LogIncidentArgs: type[BaseModel] = create_model("LogIncidentArgs", **_LOG_FIELDS)


def _schema(name: str, description: str, model: type[BaseModel]) -> dict[str, Any]:
    parameters = model.model_json_schema()
    parameters.pop("title", None)
    for prop in parameters.get("properties", {}).values():
        prop.pop("title", None)
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    RECALL: _schema(
        RECALL,
        "Find resolved incidents similar to an alert, as whole incidents with their root cause, fix and "
        "failed attempts. Pass `service` to stay within one service; omit it to search every service.",
        RecallArgs,
    ),
    REFLECT: _schema(
        REFLECT,
        "Ask the team's memory a question answered by synthesizing across many incidents "
        "(for example: what usually causes this on checkout-service?). Synthesized, so less certain.",
        ReflectArgs,
    ),
    LOG: _schema(
        LOG,
        "Submit the post-mortem of the incident being resolved (cite evidence as [n] in each field). "
        "Only in a resolution conversation an engineer started; the incident and author are fixed by "
        "the server, which either records it as the resolution or keeps it as a draft for the engineer.",
        LogIncidentArgs,
    ),
}

_MINT = object()


@dataclass(frozen=True, init=False)
class ResolutionContext:
    """Proof that an engineer opened a resolution conversation for one existing incident."""

    incident_id: int
    public_id: str
    service: str
    engineer: str

    def __init__(self, *, incident_id: int, public_id: str, service: str, engineer: str, key: object) -> None:
        if key is not _MINT:
            raise PermissionError("a resolution context is only opened by open_resolution_conversation")
        object.__setattr__(self, "incident_id", incident_id)
        object.__setattr__(self, "public_id", public_id)
        object.__setattr__(self, "service", service)
        object.__setattr__(self, "engineer", engineer)


def open_resolution_conversation(*, db_session: Session, public_id: str, engineer: str) -> ResolutionContext:
    """The only way to a context: the incident must exist and a named engineer must be asking."""
    if not engineer.strip():
        raise PermissionError("a resolution conversation needs the engineer who started it")
    incident = db_session.scalar(select(Incident).where(Incident.public_id == public_id))
    if incident is None:
        raise LookupError(f"no incident {public_id}")
    return ResolutionContext(
        incident_id=incident.id,
        public_id=incident.public_id,
        service=incident.service,
        engineer=engineer,
        key=_MINT,
    )


@dataclass(frozen=True)
class Recorded:
    written: bool
    version: int | None
    message: str


class ResolutionRecorder(Protocol):
    """Where ``log_incident`` hands the post-mortem: the service that owns resolutions.

    ``actor`` is who the write is made for; ``record`` re-checks the incident in the database and,
    with ``commit``, stores the resolution (a new version if one exists) with its memory outbox row."""

    actor: str

    async def record(
        self, context: ResolutionContext, fields: dict[str, str], *, commit: bool
    ) -> Recorded: ...


class ToolBox:
    """The tools of one conversation, bound to its bank, evidence and (maybe) resolution context."""

    def __init__(
        self,
        *,
        bank: Recall | None,
        memory_timeout_s: float = 10.0,
        resolution: ResolutionContext | None = None,
        recorder: ResolutionRecorder | None = None,
        commit: bool = False,
    ) -> None:
        self._bank = bank
        self._timeout = memory_timeout_s
        self._resolution = resolution
        self._recorder = recorder
        self._commit = commit
        self.fence = boundary()

    def offered(self, conversation: ConversationView) -> list[str]:
        """Recall and reflect when memory is on; the write only in a clean resolution conversation."""
        names: list[str] = []
        if conversation.memory_on and self._bank is not None:
            names += [RECALL, REFLECT]
        if (
            self._resolution is not None
            and self._recorder is not None
            and not conversation.evidence.injections
        ):
            names.append(LOG)
        return names

    def schemas(self, names: list[str]) -> list[dict[str, Any]]:
        return [TOOL_SCHEMAS[name] for name in names]

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

        if call.name not in TOOL_SCHEMAS or call.name not in offered:
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
            log_args = LogIncidentArgs.model_validate(raw)
            logged = await self._log(log_args, conversation)
            return outcome(True, logged.message, log_args.model_dump(), logged=logged)
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
        """The records memory returns, then the corrections they name (not yet folded in)."""
        assert self._bank is not None
        found = await self._memory(
            memory_service.recall_similar_incidents(
                self._bank, args.alert_description, args.service, args.limit
            )
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
        ordered = sorted(outcome.matches, key=lambda m: m.strength, reverse=True)
        return results_message(self.fence, [(m.item, evidence.why(m)) for m in ordered], header)

    async def _log(self, args: BaseModel, conversation: ConversationView) -> LoggedPostMortem:
        """Every check again, here, whatever was offered: the model's call is a request, not a right."""
        context, recorder = self._resolution, self._recorder
        if not isinstance(context, ResolutionContext) or recorder is None:
            raise PermissionError("post-mortems are logged only in a resolution conversation")
        if conversation.evidence.injections:
            raise PermissionError("this conversation carried instruction-like data; writes are disabled")
        if conversation.evidence.alert.incident_id != context.public_id:
            raise PermissionError(f"this conversation is not about {context.public_id}")
        if recorder.actor != context.engineer:
            raise PermissionError(f"the conversation was started by {context.engineer}, not {recorder.actor}")
        if any(o.logged is not None for o in conversation.outcomes):
            raise PermissionError("the post-mortem was already logged once in this conversation")
        fields, citations, _ = clean_post_mortem(args.model_dump(), conversation)
        empty = [name for name in REQUIRED_FIELDS if not fields[name]]
        if empty:
            raise ValueError(f"{', '.join(empty)} empty once citations are removed")
        unsupported = unsupported_fields(fields, citations, conversation.evidence.items)
        recorded = await recorder.record(context, fields, commit=self._commit and not unsupported)
        message = recorded.message
        if self._commit and unsupported:
            message = (
                f"Not logged: {', '.join(unsupported)} cite(s) neither the engineer's notes nor a record. "
                + message
            )
        return LoggedPostMortem(
            fields=fields,
            citations=citations,
            written=recorded.written,
            version=recorded.version,
            message=message,
            unsupported=unsupported,
        )


def clean_post_mortem(
    raw: dict[str, str], conversation: ConversationView, tally: Tally | None = None
) -> tuple[dict[str, str], dict[str, list[int]], list[str]]:
    """Post-mortem fields as stored: citations read out and removed, invented incident ids replaced
    (and returned, so the engineer is told)."""
    count = len(conversation.evidence.items)
    known = conversation.evidence.known_ids
    fields: dict[str, str] = {}
    citations: dict[str, list[int]] = {}
    invented: list[str] = []
    for name, value in raw.items():
        text, cited = plain_cited(value or "", count, tally)
        fields[name], unknown = replace_unknown_ids(text, known)
        citations[name] = cited
        invented += [ident for ident in unknown if ident not in invented]
    return fields, citations, invented
