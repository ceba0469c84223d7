"""Resolve, edit, correct: one transaction each, the memory write owed in the same one."""

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.incident.models import IncidentEvent
from incidents.resolution import outbox, service
from incidents.resolution.models import OutboxEntry, Resolution, ResolutionUpdate
from tests.incidents.resolution.factories import make_incident, post_mortem


def events(db: Session, kind: str) -> list[IncidentEvent]:
    return list(db.scalars(select(IncidentEvent).where(IncidentEvent.kind == kind)))


def rows(db: Session) -> list[OutboxEntry]:
    return list(db.scalars(select(OutboxEntry).order_by(OutboxEntry.id)))


def test_resolve_stores_the_post_mortem_and_owes_memory_one_record(db: Session) -> None:
    incident = make_incident(db)
    result = service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")

    assert result.created
    assert incident.status == "resolved" and incident.resolved_by == "dana"
    assert result.resolution.resolved_by == "dana" and result.resolution.version == 1
    [entry] = rows(db)
    assert (entry.document_id, entry.kind, entry.state) == ("INC-0001", "incident", "pending")
    record = entry.payload["record"]
    assert record["incident_id"] == "INC-0001" and record["resolved_by"] == "dana"
    assert record["root_cause"].startswith("Postgres connection pool")
    assert entry.payload["severity"] == "critical"
    assert [e.actor for e in events(db, "resolved")] == ["dana"]
    assert service.memory_status(db_session=db, incident_id=incident.id) == "pending"


def test_the_same_resolve_twice_is_one_resolution_and_a_different_one_conflicts(db: Session) -> None:
    incident = make_incident(db)
    service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
    again = service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")

    assert not again.created
    assert len(rows(db)) == 1 and len(list(db.scalars(select(Resolution)))) == 1
    with pytest.raises(service.ResolutionConflict, match="already resolved"):
        service.resolve(db_session=db, incident=incident, fields=post_mortem(outcome="other"), actor="lee")


def test_an_edit_is_a_new_version_of_the_same_document_and_on_the_timeline(db: Session) -> None:
    incident = make_incident(db)
    service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
    [first] = rows(db)
    claim = outbox.claim_due(db_session=db, limit=10, lease_s=60)[0]
    outbox.complete(db_session=db, claim=claim)

    edited = service.update_resolution(
        db_session=db,
        incident=incident,
        changes=ResolutionUpdate(root_cause="Idle-in-transaction sessions"),
        actor="lee",
    )
    unchanged = service.update_resolution(
        db_session=db,
        incident=incident,
        changes=ResolutionUpdate(root_cause="Idle-in-transaction sessions"),
        actor="lee",
    )

    assert edited.version == 2 and unchanged.version == 2
    assert edited.resolved_by == "dana"
    db.expire_all()
    synced, owed = rows(db)
    assert synced.id == first.id and synced.state == "synced"
    assert owed.document_id == "INC-0001" and owed.state == "pending"
    assert (
        owed.payload["version"] == 2
        and owed.payload["record"]["root_cause"] == "Idle-in-transaction sessions"
    )
    [event] = events(db, "resolution_edited")
    assert event.actor == "lee" and event.data == {"version": 2, "fields": ["root_cause"]}


def test_edits_before_delivery_rewrite_the_one_open_row(db: Session) -> None:
    incident = make_incident(db)
    service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
    service.update_resolution(
        db_session=db, incident=incident, changes=ResolutionUpdate(outcome="Recovered in 6 min"), actor="dana"
    )
    [entry] = rows(db)
    assert entry.generation == 2 and entry.payload["version"] == 2


def test_editing_an_unresolved_incident_conflicts(db: Session) -> None:
    incident = make_incident(db)
    with pytest.raises(service.ResolutionConflict, match="no resolution"):
        service.update_resolution(
            db_session=db, incident=incident, changes=ResolutionUpdate(outcome="x"), actor="dana"
        )


def test_a_correction_is_its_own_document_and_re_syncs_the_record(db: Session) -> None:
    incident = make_incident(db)
    with pytest.raises(service.ResolutionConflict, match="not resolved"):
        service.add_correction(db_session=db, incident=incident, text="x", actor="lee")
    service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")

    correction = service.add_correction(
        db_session=db, incident=incident, text="Not the pool size: idle-in-transaction sessions", actor="lee"
    ).correction

    by_doc = {e.document_id: e for e in rows(db)}
    doc = f"INC-0001-correction-{correction.id}"
    assert set(by_doc) == {"INC-0001", doc}
    assert by_doc[doc].kind == "correction"
    assert by_doc[doc].payload["correction"]["corrects"] == "INC-0001"
    assert by_doc[doc].payload["correction"]["author"] == "lee"
    assert by_doc["INC-0001"].payload["corrections"][0]["document_id"] == doc
    [event] = events(db, "correction_added")
    assert event.actor == "lee" and event.data["document_id"] == doc

    owed = len(rows(db))
    again = service.add_correction(
        db_session=db,
        incident=incident,
        text="Not the pool size:  idle-in-transaction sessions ",
        actor="kim",
    )
    assert (again.created, again.correction.id) == (False, correction.id)  # a double click adds nothing
    assert len(rows(db)) == owed and len(events(db, "correction_added")) == 1


def test_memory_status_follows_the_worst_open_write(db: Session) -> None:
    incident = make_incident(db)
    assert service.memory_status(db_session=db, incident_id=incident.id) is None
    service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
    [claim] = outbox.claim_due(db_session=db, limit=10, lease_s=60)
    outbox.fail(db_session=db, claim=claim, error="MemoryUnavailable: database is locked")
    db.expire_all()
    detail = service.memory_detail(db_session=db, incident_id=incident.id)
    assert detail is not None and detail.state == "failing"
    assert detail.last_error == "MemoryUnavailable: database is locked" and detail.next_attempt_at is not None
    outbox.retry_failed(db_session=db)
    [claim] = outbox.claim_due(db_session=db, limit=10, lease_s=60)
    assert outbox.complete(db_session=db, claim=claim)
    db.expire_all()
    assert service.memory_status(db_session=db, incident_id=incident.id) == "synced"
