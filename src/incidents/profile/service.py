"""Bookkeeping for the reliability profile's refreshes: when one is due, what it covered, what it said.

Rules, in one place so they can be tested on their own:
- a refresh is **due** when memory holds a write newer than the profile has covered, no refresh is in
  flight, and the last one was asked for at least ``debounce_s`` ago (so a burst of resolutions costs
  one refresh, not one each);
- a refresh **covers** the newest memory write known when it was asked for; that becomes the profile's
  ``last_memory_seen_at`` once the bank reports a ``last_refreshed_at`` at or after the request.
"""

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from incidents.database import insert_ignoring_conflicts, rowcount, table_of
from incidents.profile.models import ProfileState
from incidents.timeutil import utcnow

IN_FLIGHT = ("pending", "running")
# A refresh still unfinished after this is presumed lost (its process died, or memory failed under it
# before it could record the failure) and may be asked for again: a spare refresh costs little, a
# profile stuck behind a lost one costs every briefing.
STALE_OPERATION = timedelta(minutes=2)


def get_state(*, db_session: Session, model_id: str) -> ProfileState | None:
    return db_session.get(ProfileState, model_id)


def list_states(*, db_session: Session) -> list[ProfileState]:
    return list(db_session.scalars(select(ProfileState).order_by(ProfileState.model_id)))


def ensure_state(*, db_session: Session, model_id: str, name: str, service: str | None) -> ProfileState:
    """The profile's row, made if missing; two replicas making it at once make one, neither fails."""
    state = get_state(db_session=db_session, model_id=model_id)
    if state is None:
        row = {"model_id": model_id, "name": name, "service": service, "content": "", "updated_at": utcnow()}
        dialect = db_session.get_bind().dialect.name
        db_session.execute(
            insert_ignoring_conflicts(dialect, table_of(ProfileState), ["model_id"]).values(row)
        )
        state = db_session.get(ProfileState, model_id, populate_existing=True)
        assert state is not None
    return state


def claim_refresh(
    *,
    db_session: Session,
    model_id: str,
    name: str,
    service: str | None,
    seen: datetime | None,
    now: datetime,
) -> bool:
    """Claim the refresh a replica found due, given the ``refresh_requested_at`` it read (``seen``):
    True for the one replica whose state was still current, which then asks the bank; False for a
    replica another one claimed it from under. Two replicas making the row at once make one."""
    ensure_state(db_session=db_session, model_id=model_id, name=name, service=service)
    requested = ProfileState.refresh_requested_at
    still = requested.is_(None) if seen is None else requested == seen
    claim = (
        update(ProfileState).where(ProfileState.model_id == model_id, still).values(refresh_requested_at=now)
    )
    return rowcount(db_session.execute(claim.execution_options(synchronize_session=False))) == 1


def in_flight(state: ProfileState, *, now: datetime) -> bool:
    """A refresh was asked for and has not finished (one older than ``STALE_OPERATION`` is presumed lost)."""
    return (
        state.operation_status in IN_FLIGHT
        and state.refresh_requested_at is not None
        and now - state.refresh_requested_at < STALE_OPERATION
    )


def refresh_due(
    state: ProfileState | None, *, newest_write: datetime | None, now: datetime, debounce_s: float
) -> bool:
    if newest_write is None:
        return False
    if state is None:
        return True
    if state.last_memory_seen_at is not None and newest_write <= state.last_memory_seen_at:
        return False
    if in_flight(state, now=now):
        return False
    return state.refresh_requested_at is None or now - state.refresh_requested_at >= timedelta(
        seconds=debounce_s
    )


def record_request(
    state: ProfileState, *, operation_id: str, status: str, newest_write: datetime | None, now: datetime
) -> None:
    state.refresh_requested_at = now
    state.refresh_memory_mark = newest_write
    state.operation_id = operation_id
    state.operation_status = status
    state.last_error = None


def record_operation(state: ProfileState, *, status: str, error: str | None) -> None:
    state.operation_status = status
    if status == "failed":
        state.last_error = error or "the refresh failed"


def record_model(
    state: ProfileState,
    *,
    content: str,
    structured: dict[str, Any] | None,
    last_refreshed_at: datetime | None,
) -> bool:
    """Mirror what the bank holds; True when it is newer than what was mirrored before.

    A refresh the bank ran on its own (Hindsight after consolidation) updates the content but not
    ``last_memory_seen_at``: which writes it saw is unknown, so only a refresh asked for here advances it.
    """
    if last_refreshed_at is None:
        return False
    if state.last_refreshed_at is not None and last_refreshed_at <= state.last_refreshed_at:
        return False
    state.content = content
    state.structured = structured
    state.last_refreshed_at = last_refreshed_at
    requested = state.refresh_requested_at
    if requested is not None and last_refreshed_at >= requested:
        mark = state.refresh_memory_mark
        if mark is not None and (state.last_memory_seen_at is None or mark > state.last_memory_seen_at):
            state.last_memory_seen_at = mark
        if state.operation_status in IN_FLIGHT:
            state.operation_status = "completed"
    return True
