"""The record page of a remembered incident: its labeled record as memory holds it, and its corrections.

Citations and related incidents link here. An incident RecallOps knows (resolved here, seeded or
imported) shows the labeled record built from its stored post-mortem, which is exactly the text
written to memory, with the memory write's state, and what each rewrite of imported history
replaced; an id known only to memory (a bank shared with
another installation) is looked up in memory itself.
"""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData

from incidents.history import accepted_for
from incidents.incident import service as incident_service
from incidents.resolution import service as resolution_service
from memory.service import FIELDS, MemoryUnavailable, format_record, get_record
from web.app.container import Container
from web.http.deps import get_container, get_db
from web.http.routes.pages.common import (
    PageError,
    checked_form,
    flash,
    incident_write,
    page_user,
    page_writer,
    redirect,
    render,
)
from web.http.security import Principal
from web.http.views.history import HISTORY, record_origin

router = APIRouter(include_in_schema=False)

MAX_CORRECTION_CHARS = 20_000


def _stored_record(container: Container, public_id: str) -> dict[str, object] | None:
    with container.sessions() as db:
        incident = incident_service.get_by_public_id(db_session=db, public_id=public_id)
        if incident is None:
            return None
        resolution = resolution_service.get_resolution(db_session=db, incident_id=incident.id)
        corrections = resolution_service.list_corrections(db_session=db, incident_id=incident.id)
        record = None
        if resolution is not None:
            payload = resolution_service.record_payload(incident, resolution, corrections)
            record = resolution_service.payload_record(payload)
        replaced = [
            e
            for e in incident_service.timeline(db_session=db, incident=incident)
            if e.kind == "history_updated"
        ]
        return {
            "incident": incident,
            "replaced": replaced,
            "resolution": resolution,
            "corrections": corrections,
            "record": record,
            "text": format_record(record) if record else None,
            "labels": FIELDS,
            "memory": resolution_service.memory_detail(db_session=db, incident_id=incident.id),
            "draft": accepted_for(db_session=db, public_id=public_id),
            "origin": record_origin(incident, resolved=resolution is not None),
        }


@router.get("/records/{public_id}", response_class=HTMLResponse)
async def record_page(
    request: Request,
    public_id: str,
    principal: Principal = Depends(page_user),
    container: Container = Depends(get_container),
) -> HTMLResponse:
    found = await run_in_threadpool(_stored_record, container, public_id)
    context: dict[str, object] = {"nav": "memory", "public_id": public_id, "remote": None, "history": HISTORY}
    if found is None:
        try:
            remote = await get_record(container.bank, public_id)
        except MemoryUnavailable as exc:
            message = f"{public_id} is not stored here and memory is unreachable: {exc}"
            raise PageError(503, "Memory unavailable", message) from exc
        if remote is None:
            raise PageError(404, "No such record", f"Neither this service nor its memory knows {public_id}.")
        context["remote"] = remote
    else:
        context.update(found)
    return await run_in_threadpool(render, request, "record.html", context, principal=principal)


@router.post("/records/{public_id}/corrections")
def add_correction(
    request: Request,
    public_id: str,
    form: FormData = Depends(checked_form),
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
    container: Container = Depends(get_container),
) -> RedirectResponse:
    text = str(form.get("text", "")).strip()
    if not text or len(text) > MAX_CORRECTION_CHARS:
        flash(request, f"A correction needs 1 to {MAX_CORRECTION_CHARS} characters of text.", "error")
        return redirect(f"/records/{public_id}#correct")
    with incident_write(request, db, public_id, "Cannot correct") as incident:
        added = resolution_service.add_correction(
            db_session=db, incident=incident, text=text, actor=principal.name
        )
    flash(
        request,
        "Correction saved; memory will put it ahead of the original record."
        if added.created
        else "That correction is already on the record; nothing was added.",
    )
    return redirect(f"/records/{public_id}")
