"""``log_incident``: the one tool that writes, offered only in a resolution conversation.

It is offered only with a ``ResolutionContext``, which only ``open_resolution_conversation`` can
make: it checks in the database that the incident exists and that a named engineer started the
conversation. The tool checks again before writing (the conversation is about that incident, the
writer is the engineer who started it, no data in it looked like an instruction) and never writes
memory itself: it hands the post-mortem to a ``ResolutionRecorder``, the resolution service, which
stores the resolution and its memory outbox row together. A commit also needs every field supported
by the notes or a record (``agent.resolution.support``).
"""

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field, create_model
from sqlalchemy import select
from sqlalchemy.orm import Session

from agent.core.citations import Tally, plain_cited
from agent.core.conversation import ConversationView, LoggedPostMortem
from agent.core.similarity import Similarity
from agent.core.tools import tool_schema
from agent.resolution.support import fix_not_in_role, is_value, unsupported_fields
from incidents.incident.models import Incident
from memory.template import POST_MORTEM, REQUIRED_NAMES
from memory.text import replace_unknown_ids

LOG = "log_incident"

# The post-mortem the tool takes is the template itself (``memory.template``): its fields, its required ones.
REQUIRED_FIELDS = REQUIRED_NAMES
_LOG_FIELDS: dict[str, Any] = {
    f.name: (str, Field(min_length=1)) if f.required else (str, "") for f in POST_MORTEM
}
LogIncidentArgs: type[BaseModel] = create_model("LogIncidentArgs", **_LOG_FIELDS)


LOG_SCHEMA = tool_schema(
    LOG,
    "Submit the post-mortem of the incident being resolved (cite evidence as [n] in each field). "
    "Only in a resolution conversation an engineer started; the incident and author are fixed by "
    "the server, which either records it as the resolution or keeps it as a draft for the engineer.",
    LogIncidentArgs,
)

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


class LogIncident:
    """``log_incident`` bound to one resolution conversation: its context, recorder and commit mode."""

    name: str = LOG
    schema: dict[str, Any] = LOG_SCHEMA
    args: type[BaseModel] = LogIncidentArgs

    def __init__(
        self,
        context: ResolutionContext,
        recorder: ResolutionRecorder,
        *,
        commit: bool,
        similarity: Similarity,
    ) -> None:
        self._context = context
        self._recorder = recorder
        self._commit = commit
        self._similarity = similarity  # the briefing's, so a drafted fix is checked as a briefing's is

    def offered(self, conversation: ConversationView) -> bool:
        """Never where data in the conversation looked like an instruction."""
        return not conversation.evidence.injections

    async def run(self, args: BaseModel, conversation: ConversationView) -> LoggedPostMortem:
        """Every check again, here, whatever was offered: the model's call is a request, not a right."""
        context, recorder = self._context, self._recorder
        if not isinstance(context, ResolutionContext):
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
        failed_fix = await asyncio.to_thread(
            fix_not_in_role,
            fields["resolution_steps"],
            citations["resolution_steps"],
            conversation.evidence,
            self._similarity,
        )
        recorded = await recorder.record(
            context, fields, commit=self._commit and not unsupported and not failed_fix
        )
        message, refused = recorded.message, None
        if self._commit and unsupported:
            refused = f"{', '.join(unsupported)} cite(s) neither the engineer's notes nor a record"
        elif self._commit and failed_fix:
            refused = "the resolution steps propose what the cited records say failed or made it worse"
        if refused:
            message = f"Not logged: {refused}. {message}"
        return LoggedPostMortem(
            fields=fields,
            citations=citations,
            written=recorded.written,
            version=recorded.version,
            message=message,
            unsupported=unsupported
            + (["resolution_steps"] if failed_fix and "resolution_steps" not in unsupported else []),
            refused=refused,
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
        fields[name], unknown = replace_unknown_ids(text if is_value(text) else "", known)
        citations[name] = cited
        invented += [ident for ident in unknown if ident not in invented]
    return fields, citations, invented
