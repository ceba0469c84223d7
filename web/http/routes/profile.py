"""The team reliability profile over HTTP: read it, refresh it, follow the refresh to its end.

``POST /api/v1/profile/refresh`` answers 202 with an operation at once; poll
``GET /api/v1/operations/{id}`` until it is ``completed`` or ``failed`` (never sleep and hope).
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, status

from memory.service import MemoryUnavailable, Operation
from web.app import profile
from web.app.container import Container
from web.http.auth import require
from web.http.deps import get_container
from web.http.routes.common import errors
from web.http.security import Principal

router = APIRouter(prefix="/api/v1", tags=["profile"])

Service = Annotated[
    str | None, Query(max_length=255, description="A service's own profile instead of the team's")
]
ERRORS = errors(None, {503: "memory is unreachable; the detail says why"})
SCOPED = errors(
    None, {404: "no incident is on that service", 503: "memory is unreachable; the detail says why"}
)


def _scope(container: Container, service: str | None) -> profile.Scope:
    try:
        return profile.asked_scope(container, service or None)
    except profile.UnknownService as exc:
        raise HTTPException(404, str(exc)) from exc


def operation_dict(operation: Operation) -> dict[str, Any]:
    return {
        "id": operation.id,
        "status": operation.status,
        "kind": operation.kind,
        "target": operation.target,
        "error": operation.error,
        "created_at": operation.created_at.isoformat() if operation.created_at else None,
        "finished_at": operation.finished_at.isoformat() if operation.finished_at else None,
    }


@router.get("/profile", responses=SCOPED)
async def get_profile(
    service: Service = None,
    _: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> dict[str, Any]:
    """Patterns first (repeated, severe, cross-service), each item citing its incidents.

    While memory is unreachable this is the last copy seen (``source: snapshot``) with ``memory_error``.
    """
    found = await profile.view(container, _scope(container, service))
    return found.to_dict()


@router.post("/profile/refresh", status_code=status.HTTP_202_ACCEPTED, responses=SCOPED)
async def refresh_profile(
    service: Service = None,
    _: Principal = Depends(require("incidents:write")),
    container: Container = Depends(get_container),
) -> dict[str, Any]:
    """Start a refresh (creating the profile if memory has none yet) and return its operation."""
    try:
        operation = await profile.request_refresh(container, _scope(container, service))
    except MemoryUnavailable as exc:
        raise HTTPException(503, f"memory unavailable: {exc}") from exc
    return operation_dict(operation)


@router.get("/operations/{operation_id}", responses={**ERRORS, 404: {"description": "no such operation"}})
async def get_operation(
    operation_id: str,
    _: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> dict[str, Any]:
    try:
        operation = await profile.get_operation(container, operation_id)
    except MemoryUnavailable as exc:
        raise HTTPException(503, f"memory unavailable: {exc}") from exc
    if operation is None:
        raise HTTPException(404, f"no operation {operation_id!r}")
    return operation_dict(operation)
