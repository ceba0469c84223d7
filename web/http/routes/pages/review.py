"""The review queue's pages: drafts with their fill rates, and one draft beside its source.

A draft page shows the source text with every span a field was extracted from marked, each field
linking to its spans; the engineer edits the fields, then accepts (the draft goes to memory through
the memory outbox as imported history, accepted by them) or rejects it with a reason. A revision of
an incident replaces that incident's post-mortem when accepted, or is filed as a new incident with
``action=accept-new``; its page shows each post-mortem field as the record holds it beside the
revision's, marked changed or unchanged. Viewers read the queue; only engineers decide.
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from incidents.drafts import revisions
from incidents.drafts import service as drafts
from incidents.drafts.models import DRAFT_STATES, Draft, DraftState
from incidents.field_errors import BLANK
from incidents.locking import serialized_writes
from web.http.deps import get_container, get_db
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
from web.http.views.draft_source import anchors, segments
from web.http.views.form_text import as_typed
from web.http.views.resolve_form import FIELDS, Field

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 200
DraftId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The draft's number")]
# The fields a draft page edits: what the import row carries beside the post-mortem, then the template's.
DRAFT_FIELDS = [
    Field("title", "Title", "What the incident is called in lists.", False, 300, 1),
    Field("service", "Service", "The service it happened to.", True, 255, 1),
    Field("timestamp", "When it started", "A date or time, e.g. 2026-03-14T09:42:00Z.", True, 64, 1),
    *FIELDS,
    Field("resolved_by", "Resolved by", "Who resolved it, if the source says.", False, 255, 1),
]
ORIGINS = {"text": "from the source", "meta": "from the file's metadata", "edited": "edited"}


def _refusal(exc: drafts.DraftRefused) -> str:
    """Why a draft was refused, its fields named by the labels the page shows: the blank ones together."""
    labels = {f.name: f.label for f in DRAFT_FIELDS}
    named = [(labels.get(name, name), problem) for name, problem in exc.by_field.items()]
    blank = [label for label, problem in named if problem == BLANK]
    wrong = [f"{label}: {problem}" for label, problem in named if problem != BLANK]
    if not (blank or wrong):
        return str(exc)
    fill = [f"fill in {', '.join(blank)}"] if blank else []
    return "; ".join(fill + wrong) + "."


def _load(db: Session, draft_id: int) -> Draft:
    draft = drafts.get(db_session=db, draft_id=draft_id)
    if draft is None:
        raise PageError(404, "No such draft", f"There is no draft {draft_id}.")
    return draft


@router.get("/review", response_class=HTMLResponse)
def review_list(
    request: Request,
    state: str = Query("pending", max_length=16),
    principal: Principal = Depends(page_user),
    db: Session = Depends(get_db),
) -> HTMLResponse:
    wanted: DraftState | None = next((s for s in DRAFT_STATES if s == state), None)
    if wanted is None and state != "all":
        choices = ", ".join((*DRAFT_STATES, "all"))
        raise PageError(422, "No such state", f"Drafts are {choices}; there are none {state!r}.")
    found = drafts.list_drafts(db_session=db, state=wanted, limit=PAGE_SIZE)
    context = {
        "nav": "review",
        "drafts": found,
        "state": wanted or "all",
        "states": DRAFT_STATES,
        "counts": drafts.counts(db_session=db),
    }
    return render(request, "review.html", context, principal=principal)


@router.get("/review/{draft_id}", response_class=HTMLResponse)
def draft_page(
    request: Request,
    draft_id: DraftId,
    principal: Principal = Depends(page_user),
    db: Session = Depends(get_db),
) -> HTMLResponse:
    draft = _load(db, draft_id)
    parts = segments(draft.source_text, draft.fields)
    context = {
        "nav": "review",
        "draft": draft,
        "fields": DRAFT_FIELDS,
        "values": {f.name: drafts.value(draft, f.name) for f in DRAFT_FIELDS},
        "origins": {name: (field or {}).get("origin", "") for name, field in draft.fields.items()},
        "origin_labels": ORIGINS,
        "segments": parts,
        "anchors": anchors(parts),
        "compared": revisions.compared(db_session=db, draft=draft) if draft.state == "pending" else [],
        "labels": {f.name: f.label for f in DRAFT_FIELDS},
    }
    return render(request, "draft.html", context, principal=principal)


@router.post("/review/{draft_id}")
def decide(
    request: Request,
    draft_id: DraftId,
    form: FormData = Depends(checked_form),
    principal: Principal = Depends(page_writer),
    db: Session = Depends(get_db),
) -> RedirectResponse:
    """Save the edited fields; with ``action=accept`` (or ``accept-new``, a revision as a new incident)
    accept the draft too, with ``reject`` reject it."""
    action = str(form.get("action", "save"))
    as_new = action == "accept-new"
    accepting = action == "accept" or as_new
    values = {f.name: as_typed(form[f.name]) for f in DRAFT_FIELDS if isinstance(form.get(f.name), str)}
    try:
        with serialized_writes(db):  # the edits are kept even when accepting then refuses the draft
            draft = _load(db, draft_id)
            if action == "reject":
                reason = str(form.get("reason", ""))
                drafts.reject(db_session=db, draft=draft, actor=principal.name, reason=reason)
            else:
                drafts.edit(db_session=db, draft=draft, values=values)
            db.commit()
        if accepting:
            with serialized_writes(db):
                draft = _load(db, draft_id)
                revises = None if as_new else draft.revises
                incident = drafts.accept(db_session=db, draft=draft, actor=principal.name, as_new=as_new)
                db.commit()
    except drafts.DraftRefused as exc:
        flash(request, f"Not {'accepted' if accepting else 'saved'}: {_refusal(exc)}", "error")
        return redirect(f"/review/{draft_id}")
    if accepting:
        worker = get_container(request).worker
        if worker is not None:
            worker.wake()
        what = f", its post-mortem replaced (revision of {revises})" if revises else ""
        flash(request, f"Accepted as {incident.public_id}{what}; memory will hold it within seconds.")
        return redirect(f"/records/{incident.public_id}")
    if action == "reject":
        flash(request, "Rejected; importing the same file again leaves it rejected.")
        return redirect("/review")
    flash(request, "Saved.")
    return redirect(f"/review/{draft_id}")
