"""The resolve form: the post-mortem template, prefilled, validated, saved as the signed-in engineer."""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from incidents.briefings import service as briefing_service
from incidents.incident import service as incident_service
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from incidents.resolution import service as resolution_service
from incidents.resolution.models import ResolutionFields
from web.deps import get_container, get_db
from web.routes.pages.common import PageError, checked_form, flash, page_writer, redirect, render
from web.routes.pages.incident import load_incident
from web.security import Principal
from web.views.resolve_form import FIELDS, draft, errors_by_field

router = APIRouter(include_in_schema=False)


def _form(
    request: Request,
    incident: Incident,
    principal: Principal,
    values: dict[str, str],
    errors: dict[str, str],
    status: int = 200,
) -> HTMLResponse:
    context = {"nav": "incidents", "incident": incident, "fields": FIELDS, "values": values, "errors": errors}
    return render(request, "resolve.html", context, principal=principal, status=status)


@router.get("/incidents/{public_id}/resolve", response_model=None)
def resolve_form(
    request: Request,
    public_id: str,
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
) -> Response:
    incident = load_incident(db, public_id)
    if incident.status == "resolved":
        flash(request, f"{public_id} is already resolved.", "warn")
        return redirect(f"/incidents/{public_id}")
    briefing = briefing_service.latest_briefing(db_session=db, incident_id=incident.id)
    alert = incident_service.latest_alert(db_session=db, incident=incident)
    values = draft(incident, alert, briefing.data if briefing else None)
    return _form(request, incident, principal, values, {})


@router.post("/incidents/{public_id}/resolve", response_model=None)
def resolve(
    request: Request,
    public_id: str,
    form: FormData = Depends(checked_form),
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
) -> Response:
    values = {f.name: str(form.get(f.name, "")) for f in FIELDS}
    try:
        fields = ResolutionFields(**values)
    except ValidationError as exc:
        incident = load_incident(db, public_id)
        return _form(request, incident, principal, values, errors_by_field(exc), status=422)
    with serialized_writes(db):
        incident = load_incident(db, public_id)
        try:
            result = resolution_service.resolve(
                db_session=db, incident=incident, fields=fields, actor=principal.name
            )
        except resolution_service.ResolutionConflict as exc:
            raise PageError(409, "Cannot resolve", str(exc)) from exc
        db.commit()
    worker = get_container(request).worker
    if worker is not None:
        worker.wake()
    message = "Resolved; the post-mortem is on its way to memory." if result.created else "Already resolved."
    flash(request, message)
    return redirect(f"/incidents/{public_id}#resolution")
