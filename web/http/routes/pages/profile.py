"""The team reliability profile: its patterns with the incidents they cite, freshness, refresh, chart.

A refresh is asynchronous: the button starts one and the page follows its operation (re-rendering
itself until the operation is completed or failed), then shows the refreshed patterns.
"""

from datetime import timedelta
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData

from incidents.grades import service as grade_service
from incidents.grades.service import GradeSummary
from incidents.incident import service as incident_service
from incidents.timeutil import utcnow
from memory.service import (
    FIELD_LABELS,
    PATTERN_FIELDS,
    MemoryUnavailable,
    Operation,
    Pattern,
    Recurrence,
    recurrence,
)
from web.app import confidence, profile
from web.app.container import Container
from web.http.deps import get_container
from web.http.routes.pages.common import (
    PageError,
    checked_form,
    flash,
    page_user,
    page_writer,
    redirect,
    render,
)
from web.http.security import Principal
from web.http.views.chart import Chart, count_by_period, stacked_bars
from web.http.views.recurrence import Strip, recurrence_strip

router = APIRouter(include_in_schema=False)

IN_FLIGHT = ("pending", "running")
GRADE_WINDOW = timedelta(days=90)


def _charts(container: Container, patterns: list[Pattern]) -> tuple[Chart, Chart]:
    """Incidents per service over time, and the incidents each pattern cites over time."""
    with container.sessions() as db:
        points = incident_service.first_seen_points(db_session=db)
    first_seen = {public_id: moment for public_id, _, moment in points}
    by_service = stacked_bars(count_by_period((service, moment) for _, service, moment in points))
    cited = [(p.title, first_seen[i]) for p in patterns for i in set(p.incidents) if i in first_seen]
    return by_service, stacked_bars(count_by_period(cited))


def _recurrences(container: Container, patterns: list[Pattern]) -> dict[str, tuple[Recurrence, Strip, str]]:
    """Each pattern's recurrence, from its incidents' dates (the profile's, else the incidents'), with
    its strip and its sentence as of now."""
    with container.sessions() as db:
        first_seen = {
            public_id: moment for public_id, _, moment in incident_service.first_seen_points(db_session=db)
        }
    found: dict[str, tuple[Recurrence, Strip, str]] = {}
    now = utcnow()
    for pattern in patterns:
        dates = pattern.seen or [first_seen[i] for i in set(pattern.incidents) if i in first_seen]
        again = recurrence(dates)
        if again is not None:
            found[pattern.id] = (again, recurrence_strip(dates, again), again.sentence(now))
    return found


def _grades(container: Container) -> GradeSummary:
    with container.sessions() as db:
        return grade_service.summary(db_session=db, since=utcnow() - GRADE_WINDOW)


def _query(service: str | None, operation: str | None = None) -> str:
    params = {k: v for k, v in (("service", service), ("operation", operation)) if v}
    return f"?{urlencode(params)}" if params else ""


@router.get("/profile", response_class=HTMLResponse)
async def profile_page(
    request: Request,
    service: str = "",
    operation: str = "",
    principal: Principal = Depends(page_user),
    container: Container = Depends(get_container),
) -> HTMLResponse:
    scope = _scope(container, service)
    found = await profile.view(container, scope)
    op_id = operation.strip()[:128] or found.refresh.get("operation_id")
    followed: Operation | None = None
    operation_error = None
    if op_id and (operation or found.refresh.get("status") in IN_FLIGHT):
        try:
            followed = await profile.get_operation(container, op_id)
        except MemoryUnavailable as exc:
            operation_error = str(exc) or "memory is unreachable"
        if followed is not None and followed.status not in IN_FLIGHT:
            found = await profile.view(container, scope)  # settled: show what the refresh produced
    by_service, by_pattern = await run_in_threadpool(_charts, container, found.patterns)
    services = await run_in_threadpool(_services, container)
    context = {
        "nav": "profile",
        "profile": found,
        "service": scope.service or "",
        "services": services,
        "refresh_status": followed.status if followed else found.refresh.get("status"),
        "refresh_error": (followed.error if followed else found.refresh.get("error")) or operation_error,
        "in_flight": followed is not None and followed.status in IN_FLIGHT,
        "fields": [(name, FIELD_LABELS.get(name, name)) for name in PATTERN_FIELDS if name != "services"],
        "by_service": by_service,
        "by_pattern": by_pattern,
        "grades": await run_in_threadpool(_grades, container),
        "confidence": await run_in_threadpool(confidence.status, container),
        "recurrences": await run_in_threadpool(_recurrences, container, found.patterns),
    }
    return await run_in_threadpool(render, request, "profile.html", context, principal=principal)


def _scope(container: Container, service: str | None) -> profile.Scope:
    try:
        return profile.asked_scope(container, (service or "").strip()[:255] or None)
    except profile.UnknownService as exc:
        raise PageError(404, "No such service", str(exc)) from exc


def _services(container: Container) -> list[str]:
    with container.sessions() as db:
        return incident_service.distinct_services(db_session=db)


@router.post("/profile/refresh")
async def refresh(
    request: Request,
    form: FormData = Depends(checked_form),
    _: Principal = Depends(page_writer),
    container: Container = Depends(get_container),
) -> RedirectResponse:
    service = str(form.get("service", "")).strip()[:255] or None
    scope = _scope(container, service)
    try:
        started = await profile.request_refresh(container, scope)
    except MemoryUnavailable as exc:
        flash(request, f"Memory is unreachable, so the profile cannot be refreshed now: {exc}", "error")
        return redirect(f"/profile{_query(service)}")
    return redirect(f"/profile{_query(service, started.id)}")
