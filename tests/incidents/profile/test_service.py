"""When the profile is due for a refresh, and what a finished refresh covered."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from incidents.profile import service
from incidents.profile.models import ProfileState

T0 = datetime(2026, 3, 1, tzinfo=UTC)
seconds = st.integers(min_value=0, max_value=3600)


def state(**values: object) -> ProfileState:
    return ProfileState(model_id="team", name="Team", service=None, content="", **values)


@given(write=seconds, seen=seconds, requested=seconds, now=seconds, debounce=seconds)
def test_a_refresh_is_due_only_for_unseen_writes_after_the_debounce(
    write: int, seen: int, requested: int, now: int, debounce: int
) -> None:
    at = lambda s: T0 + timedelta(seconds=s)  # noqa: E731
    current = state(
        last_memory_seen_at=at(seen), refresh_requested_at=at(requested), operation_status="completed"
    )
    due = service.refresh_due(current, newest_write=at(write), now=at(now), debounce_s=debounce)
    assert due == (write > seen and now - requested >= debounce)


def test_nothing_written_is_never_due_and_a_first_write_always_is() -> None:
    assert not service.refresh_due(None, newest_write=None, now=T0, debounce_s=0)
    assert service.refresh_due(None, newest_write=T0, now=T0, debounce_s=60)


def test_a_refresh_in_flight_blocks_another_until_it_is_presumed_lost() -> None:
    running = state(refresh_requested_at=T0, operation_status="running", operation_id="op")
    assert not service.refresh_due(
        running, newest_write=T0 + timedelta(seconds=5), now=T0 + timedelta(minutes=1), debounce_s=0
    )
    assert service.refresh_due(
        running, newest_write=T0 + timedelta(seconds=5), now=T0 + timedelta(hours=1), debounce_s=0
    )


def test_a_finished_refresh_covers_the_writes_known_when_it_was_asked_for() -> None:
    current = state()
    service.record_request(
        current, operation_id="op-1", status="pending", newest_write=T0, now=T0 + timedelta(seconds=1)
    )
    assert not service.record_model(current, content="old", structured=None, last_refreshed_at=None)
    assert service.record_model(
        current, content="profile", structured={"patterns": []}, last_refreshed_at=T0 + timedelta(seconds=2)
    )
    assert current.last_memory_seen_at == T0 and current.operation_status == "completed"
    assert current.content == "profile"
    assert not service.record_model(current, content="older", structured=None, last_refreshed_at=T0)


def test_a_refresh_the_bank_ran_on_its_own_does_not_claim_coverage() -> None:
    current = state(last_memory_seen_at=T0)
    assert service.record_model(
        current, content="x", structured=None, last_refreshed_at=T0 + timedelta(hours=1)
    )
    assert current.last_memory_seen_at == T0


def test_failed_refreshes_keep_their_error(db: Session) -> None:
    current = service.ensure_state(db_session=db, model_id="team", name="Team", service=None)
    assert service.ensure_state(db_session=db, model_id="team", name="Team", service=None) is current
    service.record_operation(current, status="failed", error="LLM unavailable")
    db.flush()
    [stored] = service.list_states(db_session=db)
    assert stored.last_error == "LLM unavailable" and stored.operation_status == "failed"


def test_two_replicas_making_a_profiles_row_at_once_make_one_and_neither_fails(
    db: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other replica's row is committed after this one looked and found none."""
    with Session(db.get_bind()) as other:
        service.ensure_state(db_session=other, model_id="team--checkout", name="Checkout", service="checkout")
        other.commit()
    monkeypatch.setattr(service, "get_state", lambda **_: None)  # this replica looked before that commit
    made = service.ensure_state(db_session=db, model_id="team--checkout", name="Checkout", service="checkout")
    assert made.service == "checkout" and len(service.list_states(db_session=db)) == 1


def test_two_replicas_finding_one_refresh_due_claim_it_once(db: Session) -> None:
    """Every replica's profile lane finds the same refresh due: only the first to claim it asks the bank,
    so one write costs one refresh of each profile, not one per replica."""
    team = {"model_id": "team", "name": "Team", "service": None}
    with Session(db.get_bind()) as other:  # the other replica claims first, from the state both read
        assert service.claim_refresh(db_session=other, **team, seen=None, now=T0)
        other.commit()
    assert not service.claim_refresh(db_session=db, **team, seen=None, now=T0 + timedelta(seconds=1))
    current = service.get_state(db_session=db, model_id="team")
    assert current is not None and current.refresh_requested_at == T0
    later = T0 + timedelta(minutes=5)  # the next refresh, claimed from the state as it now is
    assert service.claim_refresh(db_session=db, **team, seen=current.refresh_requested_at, now=later)
