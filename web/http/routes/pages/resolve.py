"""The resolve form: the post-mortem template, prefilled, validated, saved as the signed-in engineer.

"Draft from my notes" submits the form's fields with the notes and runs the resolution conversation
without committing (the same call the API makes), then shows the form again: what the engineer had
typed kept, the rest filled from the draft, each field with its source. The engineer still reviews
and submits the form.
"""

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData

from agent.resolution.conversation import MAX_NOTES_CHARS
from incidents.briefings import service as briefing_service
from incidents.field_errors import errors_by_field
from incidents.incident import service as incident_service
from incidents.incident.models import Incident
from incidents.incident.service import IncidentNotFound
from incidents.resolution import service as resolution_service
from incidents.resolution.models import ResolutionFields
from incidents.resolution.service import ResolutionConflict
from web.app import resolution_drafts
from web.http.deps import get_container, get_db
from web.http.routes.pages.common import (
    PageError,
    checked_form,
    flash,
    incident_link,
    incident_write,
    load_incident,
    page_user,
    page_writer,
    redirect,
    render,
)
from web.http.routes.resolution_conversation import ConversationRequest
from web.http.security import Principal
from web.http.views.resolve_form import FIELDS, draft, typed, unconfirmed

SOURCE_LABELS = {
    "notes": "from your notes",
    "alert": "from the alert",
    "briefing": "from the briefing, unconfirmed",
    "model": "drafted by the model",
    "none": "not in your notes",
    "typed": "as you typed it",
}

router = APIRouter(include_in_schema=False)


def _form(
    request: Request,
    incident: Incident,
    principal: Principal,
    values: dict[str, str],
    errors: dict[str, str],
    status: int = 200,
    **drafted: Any,
) -> HTMLResponse:
    """``drafted``: what "Draft from my notes" adds (notes, notes_error, sources, warnings)."""
    context = {"nav": "incidents", "incident": incident, "fields": FIELDS, "values": values, "errors": errors}
    extra = {
        "notes": "",
        "notes_error": "",
        "notes_max": MAX_NOTES_CHARS,
        "sources": {},
        "warnings": [],
        "source_labels": SOURCE_LABELS,
    }
    return render(request, "resolve.html", context | extra | drafted, principal=principal, status=status)


def _initial_values(db: Session, incident: Incident) -> dict[str, str]:
    briefing = briefing_service.latest_briefing(db_session=db, incident_id=incident.id)
    alert = incident_service.latest_alert(db_session=db, incident=incident)
    return draft(incident, alert, briefing.data if briefing else None)


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
    return _form(request, incident, principal, _initial_values(db, incident), {})


@router.post("/incidents/{public_id}/resolve", response_model=None)
def resolve(
    request: Request,
    public_id: str,
    form: FormData = Depends(checked_form),
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
) -> Response:
    values = _sent_values(form)
    try:
        fields = ResolutionFields(**values)
        problems = unconfirmed(values)
    except ValidationError as exc:
        problems = unconfirmed(values) | errors_by_field(exc)
    if problems:
        incident = load_incident(db, public_id)
        if incident.status == "resolved":
            raise _resolved_meanwhile(incident)
        return _form(request, incident, principal, values, problems, status=422)
    with incident_write(request, db, public_id, "Cannot resolve") as incident:
        try:
            result = resolution_service.resolve(
                db_session=db, incident=incident, fields=fields, actor=principal.name
            )
        except ResolutionConflict as exc:
            raise _resolved_meanwhile(incident) from exc
    if result.created:
        flash(request, "Resolved; the post-mortem is on its way to memory.")
    else:
        flash(request, "This post-mortem was saved already (the form was sent twice); nothing changed.")
    return redirect(f"/incidents/{public_id}#resolution")


def _resolved_meanwhile(incident: Incident) -> PageError:
    """A resolve form sent for an incident resolved since it was opened (by someone else, or by this
    form sent before and edited since): what happened, and that this form's post-mortem was not saved."""
    by = f" by {incident.resolved_by}" if incident.resolved_by else ""
    at = f" at {incident.resolved_at:%Y-%m-%d %H:%M} UTC" if incident.resolved_at else ""
    message = (
        f"{incident.public_id} was resolved{by}{at}, before this form was sent, so the post-mortem in it "
        "was not saved. The incident page shows the one it was resolved with; to add what you know, add a "
        "correction on its record."
    )
    return PageError(409, "Already resolved", message, incident_link(incident.public_id))


def _open_for_drafting(request: Request, public_id: str) -> tuple[Principal, Response | None]:
    """The engineer, and a redirect instead when the incident is already resolved.

    A short session of its own: no connection is held while the conversation runs.
    """
    with get_container(request).sessions() as db:
        principal = page_writer(page_user(request, db))
        incident = load_incident(db, public_id)
        if incident.status == "resolved":
            flash(request, f"{public_id} is already resolved.", "warn")
            return principal, redirect(f"/incidents/{public_id}")
    return principal, None


def _sent_values(form: FormData) -> dict[str, str]:
    return {f.name: str(form.get(f.name, "")) for f in FIELDS}


def _render_drafted(
    request: Request,
    public_id: str,
    principal: Principal,
    form: FormData,
    *,
    values: dict[str, str] | None = None,
    sources: dict[str, str] | None = None,
    **drafted: Any,
) -> HTMLResponse:
    """``values`` and ``sources``: the draft's, under what the engineer had typed into the form."""
    with get_container(request).sessions() as db:
        incident = load_incident(db, public_id)
        first_draft = _initial_values(db, incident)
        kept = typed(_sent_values(form), first_draft)
        status = 422 if drafted.get("notes_error") else 200
        return _form(
            request,
            incident,
            principal,
            first_draft | (values or {}) | kept,
            {},
            status=status,
            notes=str(form.get("notes", "")),
            sources=(sources or {}) | dict.fromkeys(kept, "typed"),
            **drafted,
        )


@router.post("/incidents/{public_id}/resolve/draft", response_model=None)
async def draft_from_notes(
    request: Request, public_id: str, form: FormData = Depends(checked_form)
) -> Response:
    """The resolve form again, what was typed kept and the rest drafted by a resolution conversation
    over the notes; nothing is written."""
    principal, elsewhere = await run_in_threadpool(_open_for_drafting, request, public_id)
    if elsewhere is not None:
        return elsewhere
    notes = str(form.get("notes", ""))
    try:
        body = ConversationRequest(notes=notes, commit=False)
    except ValidationError as exc:
        problem = "must not be blank" if not notes.strip() else errors_by_field(exc).get("notes", "invalid")
        return await run_in_threadpool(
            _render_drafted, request, public_id, principal, form, notes_error=problem
        )
    try:
        result = await resolution_drafts.draft(
            get_container(request),
            public_id=public_id,
            notes=body.notes,
            commit=False,
            engineer=principal.name,
        )
    except IncidentNotFound as exc:
        raise PageError(404, "No such incident", f"There is no incident {public_id}.") from exc
    fields = result.draft.model_dump()
    return await run_in_threadpool(
        _render_drafted,
        request,
        public_id,
        principal,
        form,
        values={name: fields[name]["text"] for name in fields},
        sources={name: fields[name]["source"] for name in fields},
        warnings=result.warnings,
    )
