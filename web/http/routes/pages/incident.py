"""The incident page and its actions: acknowledge, re-run the briefing, check a move against memory.

The page is what the on-call engineer works from: the alert signal and the likely root cause on the
left; the suggested fix, the risky actions and the recalled incidents on the right, each citation a
link to its source; memory and LLM status; the actions an engineer may take (viewers see none).
"""

from collections.abc import Mapping

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from agent.resolution.labels import MARK_LABELS
from incidents.briefings import service as briefing_service
from incidents.delivery.status import incident_delivery
from incidents.grades import service as grade_service
from incidents.incident import service as incident_service
from incidents.incident.service import IncidentNotFound
from incidents.labels import service as label_service
from incidents.resolution import service as resolution_service
from incidents.timeutil import utcnow
from memory.service import MemoryUnavailable
from web.app import relevance
from web.app.check_action import check_incident_action
from web.http.deps import get_container, get_db
from web.http.routes.pages.common import (
    PageError,
    checked_form,
    flash,
    incident_write,
    load_incident,
    page_user,
    page_writer,
    redirect,
    render,
)
from web.http.security import Principal
from web.http.views.briefing import SECTIONS, briefing_view
from web.http.views.history import history_of, no_briefing

router = APIRouter(include_in_schema=False)

TIMELINE_SHOWN = 200
CHECK_SESSION_KEY = "action_check"


@router.get("/incidents/{public_id}", response_class=HTMLResponse)
def incident_page(
    request: Request,
    public_id: str,
    principal: Principal = Depends(page_user),
    db: Session = Depends(get_db),
) -> HTMLResponse:
    incident = load_incident(db, public_id)
    settings = get_container(request).settings
    briefing = briefing_service.latest_briefing(db_session=db, incident_id=incident.id)
    job = briefing_service.latest_job(db_session=db, incident_id=incident.id)
    events = incident_service.timeline(db_session=db, incident=incident)
    recurrence = None
    if incident.recurrence_of_id is not None:
        recurrence = incident_service.public_ids(db_session=db, ids=[incident.recurrence_of_id]).get(
            incident.recurrence_of_id
        )
    now = utcnow()
    briefing_pending = job is not None and job.state in ("pending", "running")
    deliveries = incident_delivery(db_session=db, incident=incident, now=now)
    context = {
        "nav": "incidents",
        "deliveries": deliveries,
        "deliveries_pending": any(line.state == "pending" for line in deliveries),
        "deliveries_waiting": any(line.state in ("held", "failing") for line in deliveries),
        "incident": incident,
        "alert": incident_service.latest_alert(db_session=db, incident=incident),
        "events": events[-TIMELINE_SHOWN:],
        "events_hidden": max(len(events) - TIMELINE_SHOWN, 0),
        "briefing": briefing_view(briefing.data) if briefing else None,
        "unbriefed": no_briefing(incident, job.state if job else None),
        "history": history_of(incident),
        "briefing_version": briefing.version if briefing else None,
        "briefing_pending": briefing_pending,
        "job": job,
        "sections": SECTIONS,
        "resolution": resolution_service.get_resolution(db_session=db, incident_id=incident.id),
        "corrections": resolution_service.list_corrections(db_session=db, incident_id=incident.id),
        "memory": resolution_service.memory_detail(db_session=db, incident_id=incident.id),
        "memory_driver": settings.memory.memory,
        "llm": {"configured": settings.llm.uses_llm, "model": settings.llm.llm_model},
        "recurrence_of": recurrence,
        "action_check": _last_check(request, public_id),
        "grades": grade_service.incident_grades(db_session=db, incident_id=incident.id),
        "labels": relevance.label_lines(
            get_container(request),
            incident.id,
            label_service.incident_labels(
                db_session=db, bank_id=settings.memory.bank_id, incident_id=incident.id
            ),
        ),
        "marks": MARK_LABELS,
        "now": now,
    }
    return render(request, "incident.html", context, principal=principal)


def _last_check(request: Request, public_id: str) -> dict[str, object] | None:
    """The check this browser just ran on this incident, shown once."""
    check = request.session.get(CHECK_SESSION_KEY)
    if not isinstance(check, dict) or check.get("incident") != public_id:
        return None
    request.session.pop(CHECK_SESSION_KEY, None)
    return check


@router.post("/incidents/{public_id}/acknowledge")
def acknowledge(
    request: Request,
    public_id: str,
    _: FormData = Depends(checked_form),
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
) -> RedirectResponse:
    with incident_write(request, db, public_id, "Cannot acknowledge") as incident:
        changed = incident_service.acknowledge(db_session=db, incident=incident, actor=principal.name)
    flash(request, "Acknowledged." if changed else "Already acknowledged.")
    return redirect(f"/incidents/{public_id}")


@router.post("/incidents/{public_id}/briefing")
def rerun_briefing(
    request: Request,
    public_id: str,
    _: FormData = Depends(checked_form),
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
) -> RedirectResponse:
    with incident_write(request, db, public_id, "Cannot re-run the briefing") as incident:
        briefing_service.enqueue_briefing(db_session=db, incident_id=incident.id)
        incident_service.add_event(
            db_session=db,
            incident=incident,
            kind="briefing_requested",
            actor=principal.name,
            message=f"briefing re-run requested by {principal.name}",
        )
    flash(request, "Briefing re-run queued; this page updates when it is ready.")
    return redirect(f"/incidents/{public_id}#briefing")


@router.post("/incidents/{public_id}/labels")
def mark_precedents(
    request: Request,
    public_id: str,
    form: FormData = Depends(checked_form),
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
) -> RedirectResponse:
    """The page's precedent marks: one choice per precedent shown, prefilled with its current label. Only
    the choices the engineer changed, or an inferred label they confirmed, are stored as theirs: a
    prefilled radio left alone is the post-mortem's inference, not the engineer's judgment."""
    incident = load_incident(db, public_id)
    marks = _changed_marks({str(key): str(value) for key, value in form.multi_items()})
    if not marks:
        flash(request, "No mark changed: nothing was saved.")
        return redirect(f"/incidents/{public_id}#labels")
    try:
        stored = relevance.mark(get_container(request), incident, marks, who=principal.name)
    except relevance.UnknownPrecedent as exc:
        raise PageError(422, "Cannot mark the precedents", str(exc)) from exc
    flash(request, f"{stored} precedent mark(s) saved.")
    return redirect(f"/incidents/{public_id}#labels")


def _changed_marks(fields: Mapping[str, str]) -> dict[str, str]:
    """``{precedent: mark}`` for each ``mark:`` choice that differs from the ``shown:`` one, or whose
    inferred label the engineer ticked ``confirm:``."""
    changed = {}
    for key, value in fields.items():
        precedent = key.removeprefix("mark:")
        if precedent == key or not value:
            continue
        if value != fields.get(f"shown:{precedent}") or f"confirm:{precedent}" in fields:
            changed[precedent] = value
    return changed


@router.post("/incidents/{public_id}/check-action")
async def check_action_form(
    request: Request,
    public_id: str,
    form: FormData = Depends(checked_form),
    principal: Principal = Depends(page_user),
) -> RedirectResponse:
    """The page's "About to do something?" box: any signed-in reader may ask; the answer is shown once."""
    action = str(form.get("action") or "").strip()
    if not action:
        flash(request, "Type the move you are about to make, then check it.", "warn")
        return redirect(f"/incidents/{public_id}#check")
    try:
        result = await check_incident_action(
            get_container(request), public_id=public_id, action=action, actor=principal.name
        )
    except IncidentNotFound as exc:
        raise PageError(404, "No such incident", f"There is no incident {public_id}.") from exc
    except MemoryUnavailable as exc:
        flash(request, f"Memory is unavailable, nothing was checked: {exc}", "error")
        return redirect(f"/incidents/{public_id}#check")
    check = result.check
    request.session[CHECK_SESSION_KEY] = {
        "incident": public_id,
        "action": check.action,
        "verdict": check.verdict,
        "sentence": check.sentence,
        "citations": check.citations,
    }
    return redirect(f"/incidents/{public_id}#check")
