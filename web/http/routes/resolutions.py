"""Resolving teaches memory: resolve with a post-mortem, edit it, correct it, and see memory catch up.

Each write commits the incident change and its memory outbox row together, answers, then wakes the
worker, which delivers the record to memory in the background. Memory being down never fails a resolve:
the response says the write is pending, and ``GET .../memory`` shows it become synced.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from fastapi import APIRouter, Depends, HTTPException, Response, status
from sqlalchemy.orm import Session

from incidents.auth.tokens import REPLACE_HISTORY
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from incidents.resolution import service
from incidents.resolution.models import (
    CorrectionCreate,
    CorrectionRead,
    CorrectionResult,
    MemoryStatusRead,
    Resolution,
    ResolutionCreate,
    ResolutionRead,
    ResolutionResult,
    ResolutionUpdate,
)
from web.app.container import Container
from web.http.auth import require
from web.http.deps import get_container, get_db
from web.http.routes.common import NO_INCIDENT, PublicId, errors
from web.http.security import Principal

T = TypeVar("T")
router = APIRouter(prefix="/api/v1/incidents", tags=["resolutions"])

ERRORS = errors(
    "incidents:write",
    {
        404: NO_INCIDENT,
        409: "the incident's state does not allow it; the detail says why",
        422: "a field is missing or invalid; the detail names it",
    },
)

EDIT_ERRORS = {
    **ERRORS,
    403: {"description": "lacks incidents:write, or history:replace to edit imported or seeded history"},
}


def _load(db: Session, public_id: str) -> Incident:
    incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
    if incident is None:
        raise HTTPException(404, f"no incident {public_id!r}")
    return incident


def _memory(db: Session, incident: Incident) -> MemoryStatusRead:
    detail = service.memory_detail(db_session=db, incident_id=incident.id)
    return MemoryStatusRead(state=None) if detail is None else MemoryStatusRead.model_validate(detail)


@dataclass(frozen=True)
class Writer:
    """Who writes, in which request's session; ``write`` is the one write unit every route here uses."""

    actor: str
    db: Session
    container: Container
    rewrites_history: bool = False  # holds ``history:replace``: may edit imported or seeded history

    def write(self, public_id: str, change: Callable[[Session, Incident, str], T]) -> tuple[Incident, T]:
        """Load, change (a conflict is a 409), commit before answering, then wake the worker."""
        with serialized_writes(self.db):
            incident = _load(self.db, public_id)
            try:
                result = change(self.db, incident, self.actor)
            except service.ResolutionConflict as exc:
                raise HTTPException(409, str(exc)) from exc
            except service.HistoryProtected as exc:
                raise HTTPException(403, str(exc)) from exc
            self.db.commit()
        if self.container.worker is not None:
            self.container.worker.wake()
        return incident, result

    def result(self, incident: Incident, resolution: Resolution, created: bool) -> ResolutionResult:
        return _result(self.db, incident, resolution, created)


def writer(
    principal: Principal = Depends(require("incidents:write")),
    db: Session = Depends(get_db),
    container: Container = Depends(get_container),
) -> Writer:
    return Writer(
        actor=principal.name, db=db, container=container, rewrites_history=principal.can(REPLACE_HISTORY)
    )


def _result(db: Session, incident: Incident, resolution: Resolution, created: bool) -> ResolutionResult:
    return ResolutionResult(
        incident=incident.public_id,
        status=incident.status,
        created=created,
        resolution=ResolutionRead.model_validate(resolution),
        memory=_memory(db, incident),
    )


@router.post(
    "/{public_id}/resolve",
    response_model=ResolutionResult,
    status_code=status.HTTP_201_CREATED,
    responses={**ERRORS, 200: {"description": "the same post-mortem was already submitted; nothing changed"}},
)
def resolve(
    public_id: PublicId, body: ResolutionCreate, response: Response, w: Writer = Depends(writer)
) -> ResolutionResult:
    """Resolve with the post-mortem template; ``resolved_by`` is the caller. Memory is written after."""
    incident, result = w.write(
        public_id,
        lambda db, incident, actor: service.resolve(
            db_session=db, incident=incident, fields=body, actor=actor
        ),
    )
    if not result.created:
        response.status_code = status.HTTP_200_OK
    return w.result(incident, result.resolution, result.created)


@router.get("/{public_id}/resolution", response_model=ResolutionResult, responses=ERRORS)
def get_resolution(
    public_id: PublicId, _: Principal = Depends(require("read")), db: Session = Depends(get_db)
) -> ResolutionResult:
    incident = _load(db, public_id)
    resolution = service.get_resolution(db_session=db, incident_id=incident.id)
    if resolution is None:
        raise HTTPException(404, f"{public_id} has no resolution yet")
    return _result(db, incident, resolution, False)


def _edit(w: Writer, public_id: str, changes: ResolutionUpdate) -> ResolutionResult:
    incident, resolution = w.write(
        public_id,
        lambda db, incident, actor: service.update_resolution(
            db_session=db, incident=incident, changes=changes, actor=actor, rewrite_history=w.rewrites_history
        ),
    )
    return w.result(incident, resolution, False)


@router.put("/{public_id}/resolution", response_model=ResolutionResult, responses=EDIT_ERRORS)
def replace_resolution(
    public_id: PublicId, body: ResolutionCreate, w: Writer = Depends(writer)
) -> ResolutionResult:
    """Replace the whole post-mortem: a new version, the same memory record re-synced."""
    return _edit(w, public_id, ResolutionUpdate(**body.model_dump()))


@router.patch("/{public_id}/resolution", response_model=ResolutionResult, responses=EDIT_ERRORS)
def amend_resolution(
    public_id: PublicId, body: ResolutionUpdate, w: Writer = Depends(writer)
) -> ResolutionResult:
    """Change only the fields given: a new version, the same memory record re-synced."""
    return _edit(w, public_id, body)


@router.post(
    "/{public_id}/corrections",
    response_model=CorrectionResult,
    status_code=status.HTTP_201_CREATED,
    responses={**ERRORS, 200: {"description": "the same text already corrects this incident; nothing added"}},
)
def add_correction(
    public_id: PublicId, body: CorrectionCreate, response: Response, w: Writer = Depends(writer)
) -> CorrectionResult:
    """Correct a past incident: kept as its own ``kind:correction`` memory, and the record re-synced."""
    incident, added = w.write(
        public_id,
        lambda db, incident, actor: service.add_correction(
            db_session=db, incident=incident, text=body.text, actor=actor
        ),
    )
    if not added.created:
        response.status_code = status.HTTP_200_OK
    return CorrectionResult(
        incident=incident.public_id,
        correction=CorrectionRead.model_validate(added.correction),
        document_id=service.correction_document_id(incident, added.correction),
        memory=_memory(w.db, incident),
        created=added.created,
    )


@router.get("/{public_id}/corrections", response_model=list[CorrectionRead], responses=ERRORS)
def list_corrections(
    public_id: PublicId, _: Principal = Depends(require("read")), db: Session = Depends(get_db)
) -> list[CorrectionRead]:
    incident = _load(db, public_id)
    return [
        CorrectionRead.model_validate(c)
        for c in service.list_corrections(db_session=db, incident_id=incident.id)
    ]


@router.get("/{public_id}/memory", response_model=MemoryStatusRead, responses=ERRORS)
def memory_status(
    public_id: PublicId, _: Principal = Depends(require("read")), db: Session = Depends(get_db)
) -> MemoryStatusRead:
    """pending | synced | failing (with the last error and the next attempt), or null if nothing owed."""
    return _memory(db, _load(db, public_id))
