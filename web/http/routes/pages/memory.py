"""Memory search: what the bank recalls for a query, with scores, why each incident matched and how likely
it is a relevant precedent (``web.app.search``)."""

from dataclasses import dataclass

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from agent.core.confidence import Confidence
from incidents.incident import service as incident_service
from memory.service import MemoryUnavailable, RecalledIncident
from web.app.container import Container
from web.app.search import Found, recalled_precedents
from web.http.deps import get_container
from web.http.routes.pages.common import page_user, render
from web.http.security import Principal
from web.http.views.search import Piece, highlight, terms, why

router = APIRouter(include_in_schema=False)

MAX_QUERY_CHARS = 2000
LIMITS = (5, 10, 20)


@dataclass(frozen=True)
class Result:
    recalled: RecalledIncident
    confidence: Confidence
    pieces: list[Piece]  # the whole record
    gist: list[tuple[str, list[Piece]]]  # symptom and root cause, for reading at a glance
    why: str


def _result(found: Found, marks: list[str]) -> Result:
    recalled = found.incident
    record = recalled.record
    gist = []
    if record is not None:
        gist = [
            ("Symptom", highlight(record.symptom, marks)),
            ("Root cause", highlight(record.root_cause, marks)),
        ]
    return Result(
        recalled=recalled,
        confidence=found.confidence,
        pieces=highlight(recalled.text, marks),
        gist=gist,
        why=why(recalled),
    )


def _services(container: Container) -> list[str]:
    with container.sessions() as db:
        return incident_service.distinct_services(db_session=db)


@router.get("/memory", response_class=HTMLResponse)
async def memory_search(
    request: Request,
    q: str = "",
    service: str = "",
    limit: str = "10",
    principal: Principal = Depends(page_user),
    container: Container = Depends(get_container),
) -> HTMLResponse:
    query = q.strip()[:MAX_QUERY_CHARS]
    count = int(limit) if limit.isascii() and limit.isdigit() and int(limit) in LIMITS else 10
    results: list[Result] = []
    error = None
    if query:
        try:
            recalled = await recalled_precedents(container, query, service or None, count)
        except MemoryUnavailable as exc:
            error = str(exc) or "memory is unreachable"
        else:
            marks = terms(query)
            results = [_result(r, marks) for r in recalled]
    context = {
        "nav": "memory",
        "q": query,
        "service": service,
        "limit": count,
        "limits": LIMITS,
        "services": await run_in_threadpool(_services, container),
        "results": results,
        "error": error,
        "driver": container.settings.memory.memory,
    }
    return await run_in_threadpool(render, request, "memory.html", context, principal=principal)
