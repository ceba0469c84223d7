"""Memory over HTTP: search it the way the agent does, and import historical post-mortems into it.

``GET /api/v1/memory/search`` calls the agent's own tool (``recall_similar_incidents``), so a person
sees exactly the incidents a briefing would be built from, with their scores, why they matched, and the
probability that each is a relevant precedent by the fit this bank's briefings use (the MCP tool of
the same name answers with the same hits).
``POST /api/v1/memory/import`` takes JSONL (``application/x-ndjson``) or a JSON list and answers with
the summary: imported, updated, unchanged, how many lines were rejected and the first of them with
their reasons. The body is decoded and parsed in a worker process (``web.app.offload``), one line at
a time, so a large or junk import holds neither the event loop nor its GIL (health checks and alert
intake keep answering). Rewriting
an id that is already history takes ``replace=true`` and the ``history:replace`` scope.
"""

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from pydantic import BaseModel

from incidents.auth.tokens import REPLACE_HISTORY
from memory.service import (
    IncidentRecord,
    MemoryUnavailable,
    UnreadableImport,
    parse_body,
    tag_value,
)
from web.app.container import Container
from web.app.history import ImportSummary, import_history
from web.app.metrics import MEMORY_SEARCH_LATENCY
from web.app.offload import WorkerDied
from web.app.search import Found, recalled_precedents
from web.http.auth import authorize, require
from web.http.deps import get_container
from web.http.routes.common import errors
from web.http.security import Principal

router = APIRouter(prefix="/api/v1/memory", tags=["memory"])

IMPORT_TYPES = ("application/json", "application/x-ndjson", "application/jsonl", "application/json-seq")
ERRORS = errors(None, {503: "memory is unreachable; the detail says why"})


class HitConfidence(BaseModel):
    """How likely the hit is a relevant precedent for the text searched, by the bank's fit in use;
    ``calibrated`` is false when the bank ranks with another model than the one the fit was made on."""

    probability: float
    band: Literal["strong", "moderate", "weak"]
    calibrated: bool


class MemoryHit(BaseModel):
    id: str
    service: str | None
    kind: str | None
    score: float
    why: dict[str, int]
    tags: list[str]
    metadata: dict[str, str]
    timestamp: datetime | None
    record: IncidentRecord | None
    text: str
    confidence: HitConfidence


class SearchResult(BaseModel):
    query: str
    service: str | None
    incidents: list[MemoryHit]


def hit(found: Found) -> MemoryHit:
    incident, sure = found.incident, found.confidence
    record = incident.record
    return MemoryHit(
        id=incident.id,
        service=record.service if record else tag_value(incident.tags, "service"),
        kind=tag_value(incident.tags, "kind"),
        score=round(incident.score, 4),
        why=incident.why,
        tags=incident.tags,
        metadata=incident.metadata,
        timestamp=incident.timestamp,
        record=record,
        text=incident.text,
        confidence=HitConfidence(probability=sure.probability, band=sure.band, calibrated=sure.calibrated),
    )


async def search_memory(container: Container, text: str, service: str | None, limit: int) -> SearchResult:
    """What the search answers (``web.app.search``). Raises ``MemoryUnavailable``."""
    found = await recalled_precedents(container, text, service, limit)
    return SearchResult(query=text, service=service, incidents=[hit(f) for f in found])


@router.get("/search", response_model=SearchResult, responses=ERRORS)
async def search(
    q: Annotated[str, Query(min_length=1, max_length=4000, description="Alert text or a question")],
    service: Annotated[str | None, Query(max_length=255, description="Only this service's records")] = None,
    limit: Annotated[int, Query(ge=1, le=50, description="Incidents (not facts) to return")] = 3,
    _: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> SearchResult:
    """The incidents the agent's recall tool returns for this text, best first."""
    try:
        with MEMORY_SEARCH_LATENCY.time():
            return await search_memory(container, q, service or None, limit)
    except MemoryUnavailable as exc:
        raise HTTPException(503, f"memory unavailable: {exc}") from exc


def _media(request: Request) -> None:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in IMPORT_TYPES:
        raise HTTPException(
            415,
            f"send JSONL (application/x-ndjson) or a JSON list (application/json), not {media or 'nothing'}",
        )


@router.post(
    "/import",
    response_model=ImportSummary,
    responses={
        **ERRORS,
        400: {"description": "not UTF-8, empty, or a JSON list that does not parse"},
        403: {"description": "lacks incidents:write, or history:replace for replace=true"},
        413: {"description": "body too large"},
        415: {"description": "not JSON or JSONL"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/x-ndjson": {
                    "schema": {"type": "string", "description": "one JSON record a line"}
                },
                "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
            },
        }
    },
)
async def import_records(
    request: Request,
    replace: Annotated[
        bool, Query(description=f"Rewrite ids that are already history (needs the {REPLACE_HISTORY!r} scope)")
    ] = False,
    rejected_after: Annotated[
        int, Query(ge=0, description="List the rejections after this line (the answer's rejected_next)")
    ] = 0,
    principal: Principal = Depends(require("incidents:write")),
    container: Container = Depends(get_container),
) -> ImportSummary:
    """Import historical post-mortems as resolved incidents, in the incident store and in memory."""
    _media(request)
    if replace:
        authorize(principal, REPLACE_HISTORY)
    try:
        rows, rejections = await container.offload.call(parse_body, await request.body(), rejected_after)
    except UnreadableImport as exc:
        raise HTTPException(400, str(exc)) from exc
    except WorkerDied as exc:
        raise HTTPException(503, f"{exc}; the import is safe to send again") from exc
    try:
        return await import_history(
            sessions=container.sessions,
            bank=container.bank,
            rows=rows,
            origin="import",
            actor=principal.name,
            replace=replace,
            rejections=rejections,
        )
    except MemoryUnavailable as exc:
        raise HTTPException(503, f"memory unavailable: {exc}; the import is safe to send again") from exc
