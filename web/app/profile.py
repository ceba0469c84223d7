"""The reliability profile in the service: created on demand, refreshed after memory writes, mirrored.

The bank holds the profile (a mental model per scope: the team, and each service). This module asks
for refreshes (the API, the CLI, and the worker after new memory writes, debounced), follows their
operations to the end, and mirrors the result into ``profile_state`` so the page and the API still show
the last profile, its ``last_refreshed_at`` and ``last_memory_seen_at`` while memory is unreachable.
"""

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from incidents.database import transaction
from incidents.incident import service as incident_service
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from incidents.profile import service as profile_state
from incidents.profile.models import ProfileState
from incidents.resolution import outbox
from incidents.timeutil import utcnow
from memory.service import (
    PROFILE_ID,
    PROFILE_NAME,
    SOURCE_QUERY,
    MemoryUnavailable,
    MentalModel,
    Operation,
    Pattern,
    load_patterns,
    refresh_profile,
    service_model_id,
    service_model_name,
    service_model_tags,
)
from web.app.container import Container
from web.app.lanes import Task

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scope:
    """One profile: the team's (``service=None``) or one service's."""

    service: str | None

    @property
    def model_id(self) -> str:
        return service_model_id(self.service) if self.service else PROFILE_ID

    @property
    def name(self) -> str:
        return service_model_name(self.service) if self.service else PROFILE_NAME

    @property
    def tags(self) -> list[str]:
        return service_model_tags(self.service) if self.service else []


class UnknownService(LookupError):
    """A service profile asked of a service no incident is on: it would profile nothing, and a typo
    would leave a profile behind that the worker never refreshes."""


def asked_scope(container: Container, service: str | None) -> Scope:
    """The scope a reader or a refresh asked for: the team's, or a service that has incidents here."""
    if service is None:
        return Scope(None)
    with container.sessions() as db:
        known = incident_service.distinct_services(db_session=db)
    if service not in known:
        raise UnknownService(
            f"no incident is on service {service!r}; services with incidents: {', '.join(known) or 'none'}"
        )
    return Scope(service)


@dataclass(frozen=True)
class ProfileView:
    scope: Scope
    source: str  # memory | snapshot | none
    content: str
    patterns: list[Pattern]
    last_refreshed_at: datetime | None
    last_memory_seen_at: datetime | None
    memory_last_written_at: datetime | None
    refresh: dict[str, Any]
    memory_error: str | None

    @property
    def stale(self) -> bool:
        written, seen = self.memory_last_written_at, self.last_memory_seen_at
        return written is not None and (seen is None or written > seen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.scope.model_id,
            "name": self.scope.name,
            "service": self.scope.service,
            "source_query": SOURCE_QUERY,
            "source": self.source,
            "last_refreshed_at": _iso(self.last_refreshed_at),
            "last_memory_seen_at": _iso(self.last_memory_seen_at),
            "memory_last_written_at": _iso(self.memory_last_written_at),
            "stale": self.stale,
            "refresh": self.refresh,
            "memory_error": self.memory_error,
            "patterns": [p.to_dict() for p in self.patterns],
            "content": self.content,
        }


async def newest_write(container: Container, service: str | None = None) -> datetime | None:
    """The newest memory write known: the bank's own mark (seeds and imports too) or this outbox's."""
    with container.sessions() as db:
        marks = [outbox.newest_sync(db_session=db, service=service)]
    if service is None:
        try:
            health = await container.bank.health()
            marks.append(health.last_memory_seen_at if health.ok else None)
        except MemoryUnavailable:
            pass
    known = [m for m in marks if m is not None]
    return max(known) if known else None


async def request_refresh(container: Container, scope: Scope) -> Operation:
    """Refresh the model, creating it first if the bank lacks it; may raise MemoryUnavailable."""
    mark = await newest_write(container, scope.service)
    operation = await refresh_profile(container.bank, service=scope.service)
    with transaction(container.sessions) as db, serialized_writes(db):
        state = profile_state.ensure_state(
            db_session=db, model_id=scope.model_id, name=scope.name, service=scope.service
        )
        profile_state.record_request(
            state, operation_id=operation.id, status=operation.status, newest_write=mark, now=utcnow()
        )
        db.commit()
    return operation


async def get_operation(container: Container, operation_id: str) -> Operation | None:
    """The bank's operation; a finished profile refresh is mirrored on the way."""
    operation = await container.bank.get_operation(operation_id)
    if operation is not None and operation.status in ("completed", "failed"):
        with container.sessions() as db:
            model_id = db.scalar(
                select(ProfileState.model_id).where(ProfileState.operation_id == operation_id)
            )
        if model_id is not None:
            await _settle(container, model_id, operation)
    return operation


async def view(container: Container, scope: Scope) -> ProfileView:
    """The profile as the bank has it now, or the last mirrored copy when memory is unreachable."""
    memory_error = None
    model: MentalModel | None = None
    try:
        model = await container.bank.get_mental_model(scope.model_id)
        if model is not None:
            _mirror(container, model)
    except MemoryUnavailable as exc:
        memory_error = str(exc) or "memory unavailable"
    written = await newest_write(container, scope.service)
    with container.sessions() as db:
        state = profile_state.get_state(db_session=db, model_id=scope.model_id)
    if model is None and state is not None and state.last_refreshed_at is not None:
        model = _from_state(state)
        source = "snapshot"
    else:
        source = "memory" if model is not None else "none"
    return ProfileView(
        scope=scope,
        source=source,
        content=model.content if model else "",
        patterns=load_patterns(model),
        last_refreshed_at=model.last_refreshed_at if model else None,
        last_memory_seen_at=state.last_memory_seen_at if state else None,
        memory_last_written_at=written,
        refresh=_refresh_info(state),
        memory_error=memory_error,
    )


def profile_task(container: Container) -> Task:
    """Every ``profile_check_s``: settle finished refreshes, refresh profiles new writes made stale."""
    settings = container.settings.web
    next_check = 0.0

    async def refresh_reliability_profile() -> bool:
        nonlocal next_check
        if time.monotonic() < next_check:
            return False
        next_check = time.monotonic() + settings.profile_check_s
        try:
            return await _check(container, settings.profile_refresh_debounce_s)
        except MemoryUnavailable as exc:
            log.info("profile refresh waits for memory", extra={"error": str(exc)})
            return False

    return refresh_reliability_profile


async def _check(container: Container, debounce_s: float) -> bool:
    did_work = False
    with container.sessions() as db:
        states = {s.model_id: s for s in profile_state.list_states(db_session=db)}
        services = list(db.scalars(select(Incident.service).where(Incident.status == "resolved").distinct()))
    now = utcnow()
    for state in states.values():
        if state.operation_id and profile_state.in_flight(state, now=now):
            operation = await container.bank.get_operation(state.operation_id)
            if operation is not None and operation.status in ("completed", "failed"):
                await _settle(container, state.model_id, operation)
                did_work = True
    with container.sessions() as db:
        states = {s.model_id: s for s in profile_state.list_states(db_session=db)}
    team_newest = await newest_write(container)
    for scope in [Scope(None), *(Scope(s) for s in sorted(services))]:
        known = states.get(scope.model_id)
        newest = team_newest if scope.service is None else await newest_write(container, scope.service)
        if newest is None and known is None:
            newest = team_newest  # a service known only from seeds or imports still gets its profile once
        if profile_state.refresh_due(
            known, newest_write=newest, now=utcnow(), debounce_s=debounce_s
        ) and _claim(container, scope, known):
            operation = await request_refresh(container, scope)
            log.info("profile refresh started", extra={"model_id": scope.model_id, "operation": operation.id})
            did_work = True
    return did_work


def _claim(container: Container, scope: Scope, known: ProfileState | None) -> bool:
    """Every replica's lane finds the same refresh due: the first to claim it asks the bank."""
    with transaction(container.sessions) as db, serialized_writes(db):
        claimed = profile_state.claim_refresh(
            db_session=db,
            model_id=scope.model_id,
            name=scope.name,
            service=scope.service,
            seen=known.refresh_requested_at if known is not None else None,
            now=utcnow(),
        )
        db.commit()
    return claimed


async def _settle(container: Container, model_id: str, operation: Operation) -> None:
    model = await container.bank.get_mental_model(model_id) if operation.status == "completed" else None
    with transaction(container.sessions) as db, serialized_writes(db):
        state = profile_state.get_state(db_session=db, model_id=model_id)
        if state is not None and state.operation_id == operation.id:
            profile_state.record_operation(state, status=operation.status, error=operation.error)
            if model is not None:
                _record_model(state, model)
        db.commit()


def _mirror(container: Container, model: MentalModel) -> None:
    """Keep the snapshot in step with what the bank returned, when it is newer."""
    with container.sessions() as db:
        state = profile_state.get_state(db_session=db, model_id=model.id)
        if state is not None and state.last_refreshed_at == model.last_refreshed_at:
            return
    with transaction(container.sessions) as db, serialized_writes(db):
        state = profile_state.ensure_state(
            db_session=db, model_id=model.id, name=model.name, service=_service_of(model)
        )
        _record_model(state, model)
        db.commit()


def _record_model(state: ProfileState, model: MentalModel) -> None:
    profile_state.record_model(
        state, content=model.content, structured=model.structured, last_refreshed_at=model.last_refreshed_at
    )


def _service_of(model: MentalModel) -> str | None:
    services = [t.split(":", 1)[1] for t in model.tags if t.startswith("service:")]
    return services[0] if services else None


def _from_state(state: ProfileState) -> MentalModel:
    return MentalModel(
        id=state.model_id,
        name=state.name,
        source_query=SOURCE_QUERY,
        tags=service_model_tags(state.service) if state.service else [],
        content=state.content,
        structured=state.structured,
        last_refreshed_at=state.last_refreshed_at,
    )


def _refresh_info(state: ProfileState | None) -> dict[str, Any]:
    if state is None:
        return {"operation_id": None, "status": None, "requested_at": None, "error": None}
    return {
        "operation_id": state.operation_id,
        "status": state.operation_status,
        "requested_at": _iso(state.refresh_requested_at),
        "error": state.last_error,
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
