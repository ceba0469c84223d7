"""The review queue over HTTP: send a post-mortem file or an export, read the drafts, decide them.

``POST /api/v1/drafts/import?name=FILE`` takes one file's bytes as the body (Markdown, text, HTML, or a
PagerDuty or incident.io CSV or JSON export; the name's extension and the content say which) and
answers with the import report; an unreadable file is a 422 naming why, and drafts nothing. The other
routes list, read, edit, accept and reject drafts, as the review page and ``recallops review`` do.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from incidents.drafts import service as drafts
from incidents.drafts.models import Draft, DraftState
from incidents.locking import serialized_writes
from memory.service import read_bytes
from web.app.container import Container
from web.app.drafts import ImportReport, import_documents
from web.http.auth import require
from web.http.deps import get_container, get_db
from web.http.routes.common import errors
from web.http.security import Principal

router = APIRouter(prefix="/api/v1/drafts", tags=["drafts"])

DraftId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The draft's number")]
NOT_FOUND = {404: "no such draft"}
REFUSED = {409: "the draft was already decided, or misses what the template requires; the detail says what"}
WRITE_ERRORS = errors("incidents:write", NOT_FOUND | REFUSED)
EDIT_ERRORS = errors(
    "incidents:write",
    NOT_FOUND | REFUSED | {422: "a field that drafts do not have, or a value it cannot hold"},
)


class DraftSummary(BaseModel):
    id: int
    source_name: str
    source_kind: str
    state: str
    fill_rate: float
    missing: list[str]
    near_duplicate: str | None
    incident_id: str
    revises: str | None = Field(
        description="the incident whose record accepting replaces (a new version of its post-mortem)"
    )
    revision_reason: str | None = Field(description="why the draft is taken for a revision")


class DraftField(BaseModel):
    value: str
    spans: list[tuple[int, int]] = Field(description="offsets into source_text the value was taken from")
    origin: str


class DraftRead(DraftSummary):
    source_text: str
    source_meta: dict[str, str]
    fields: dict[str, DraftField]
    imported_by: str
    decided_by: str | None
    reason: str | None


class DraftEdit(BaseModel):
    fields: dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=20_000)]]


class Rejection(BaseModel):
    reason: Annotated[str, Field(min_length=1, max_length=2000)]


class Accepted(BaseModel):
    draft: int
    incident_id: str
    revised: bool = Field(description="the draft replaced the post-mortem of an incident stored before")


def summary(draft: Draft) -> DraftSummary:
    return DraftSummary(
        id=draft.id,
        source_name=draft.source_name,
        source_kind=draft.source_kind,
        state=draft.state,
        fill_rate=round(draft.fill_rate, 4),
        missing=list(draft.missing),
        near_duplicate=draft.near_duplicate,
        incident_id=draft.incident_id,
        revises=draft.revises,
        revision_reason=draft.revision_reason,
    )


def read(draft: Draft) -> DraftRead:
    fields: dict[str, Any] = {
        name: DraftField(
            value=str(field.get("value") or ""),
            spans=[(int(s), int(e)) for s, e in field.get("spans") or []],
            origin=str(field.get("origin") or ""),
        )
        for name, field in draft.fields.items()
    }
    return DraftRead(
        **summary(draft).model_dump(),
        source_text=draft.source_text,
        source_meta=dict(draft.source_meta),
        fields=fields,
        imported_by=draft.imported_by,
        decided_by=draft.decided_by,
        reason=draft.reason,
    )


def _load(db: Session, draft_id: int) -> Draft:
    draft = drafts.get(db_session=db, draft_id=draft_id)
    if draft is None:
        raise HTTPException(404, f"no draft {draft_id}")
    return draft


@contextmanager
def _deciding(db: Session, draft_id: int) -> Iterator[Draft]:
    """One change to a draft under the write lock, committed; a field the edit names wrongly is a 422,
    any other refusal (decided already, incomplete) a 409, each with its reasons."""
    with serialized_writes(db):
        draft = _load(db, draft_id)
        try:
            yield draft
        except drafts.FieldRefused as exc:
            raise HTTPException(422, str(exc)) from exc
        except drafts.DraftRefused as exc:
            raise HTTPException(409, str(exc)) from exc
        db.commit()


@router.post(
    "/import",
    response_model=ImportReport,
    responses=errors(
        "incidents:write", {413: "body too large", 422: "the file cannot be read; the detail says why"}
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def import_file(
    request: Request,
    name: Annotated[str, Query(min_length=1, max_length=255, pattern=r"^[^\x00/\\]+$")],
    principal: Principal = Depends(require("incidents:write")),
    container: Container = Depends(get_container),
) -> ImportReport:
    """Draft the post-mortems of one file (its name gives the kind); nothing reaches memory yet."""
    result = await run_in_threadpool(read_bytes, name, await request.body())
    if result.unreadable is not None:
        raise HTTPException(422, f"{name}: {result.unreadable.reason}")
    return await run_in_threadpool(
        import_documents, sessions=container.sessions, reads=[result], actor=principal.name
    )


@router.get("", response_model=list[DraftSummary], responses=errors("read"))
def list_drafts(
    state: DraftState | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    _: Principal = Depends(require("read")),
    db: Session = Depends(get_db),
) -> list[DraftSummary]:
    """Drafts in import order, with their fill rates and the required fields they miss."""
    return [summary(d) for d in drafts.list_drafts(db_session=db, state=state, limit=limit, offset=offset)]


@router.get("/{draft_id}", response_model=DraftRead, responses=errors("read", NOT_FOUND))
def get_draft(
    draft_id: DraftId, _: Principal = Depends(require("read")), db: Session = Depends(get_db)
) -> DraftRead:
    """One draft: its source text, and each field with the spans of the source it came from."""
    return read(_load(db, draft_id))


@router.patch("/{draft_id}", response_model=DraftRead, responses=EDIT_ERRORS)
def edit_draft(
    draft_id: DraftId,
    edit: DraftEdit,
    _: Principal = Depends(require("incidents:write")),
    db: Session = Depends(get_db),
) -> DraftRead:
    """Set fields as a person wrote them (an edited field keeps no span)."""
    with _deciding(db, draft_id) as draft:
        drafts.edit(db_session=db, draft=draft, values=edit.fields)
    return read(draft)


@router.post("/{draft_id}/accept", response_model=Accepted, responses=WRITE_ERRORS)
def accept_draft(
    request: Request,
    draft_id: DraftId,
    as_new: Annotated[
        bool, Query(description="file a revision as a new incident instead of replacing the one it revises")
    ] = False,
    principal: Principal = Depends(require("incidents:write")),
    db: Session = Depends(get_db),
) -> Accepted:
    """Accept the draft: stored as resolved history, its record owed to memory, accepted by the caller.
    A revision replaces the post-mortem of the incident it revises (the earlier one kept on its
    timeline), unless ``as_new``."""
    with _deciding(db, draft_id) as draft:
        revised = draft.revises is not None and not as_new
        incident = drafts.accept(db_session=db, draft=draft, actor=principal.name, as_new=as_new)
    accepted = Accepted(draft=draft_id, incident_id=incident.public_id, revised=revised)
    worker = get_container(request).worker
    if worker is not None:
        worker.wake()
    return accepted


@router.post("/{draft_id}/reject", response_model=DraftRead, responses=WRITE_ERRORS)
def reject_draft(
    draft_id: DraftId,
    rejection: Rejection,
    principal: Principal = Depends(require("incidents:write")),
    db: Session = Depends(get_db),
) -> DraftRead:
    """Keep the draft out of memory, with the reason; the same file imported again stays rejected."""
    with _deciding(db, draft_id) as draft:
        drafts.reject(db_session=db, draft=draft, actor=principal.name, reason=rejection.reason)
    return read(draft)
