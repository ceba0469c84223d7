"""The outbox worker against a real embedded bank: records and corrections land, failures back off."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from incidents.database import transaction
from incidents.incident.models import Incident, IncidentEvent
from incidents.queue.backoff import BACKOFF_MIN_S
from incidents.resolution import service
from memory.corrections import parse_correction
from memory.schema import parse_record
from tests.e2e.resolution_helpers import memory_locked
from tests.incidents.resolution.factories import make_incident, post_mortem
from tests.web.http.routes.conftest import configure
from web.app.container import Container
from web.app.memory_outbox import deliver_due


@pytest.fixture(params=[None])
async def container(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Container]:
    """A container whose memory calls wait ``request.param`` seconds (the default when None).

    Only the test that locks the memory file wants a short wait; elsewhere the first write loads the
    embedding model, which on a busy machine takes longer than a short timeout allows.
    """
    if request.param is not None:
        monkeypatch.setenv("RECALLOPS_MEMORY_TIMEOUT_S", str(request.param))
    built = Container.build(configure(monkeypatch, tmp_path / "data", f"sqlite:///{tmp_path / 'r.db'}"))
    yield built
    await built.aclose()


def resolve_and_correct(container: Container) -> int:
    with transaction(container.sessions) as db:
        incident = make_incident(db)
        service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
        service.add_correction(
            db_session=db, incident=incident, text="It was idle-in-transaction sessions", actor="lee"
        )
        return incident.id


async def test_the_record_and_its_correction_land_under_their_own_ids(container: Container) -> None:
    incident_id = resolve_and_correct(container)
    report = await deliver_due(container)
    assert (report["synced"], report["failed"]) == (2, 0)
    assert (await deliver_due(container)).attempted == 0

    found = await container.bank.recall(query="idle-in-transaction connection pool", limit=5)
    by_id = {r.id: r for r in found}
    assert set(by_id) == {"INC-0001", "INC-0001-correction-1"}
    record = parse_record(by_id["INC-0001"].text)
    assert record.resolved_by == "dana" and record.root_cause == post_mortem().root_cause
    assert {"service:checkout-service", "kind:incident", "severity:critical"} <= set(by_id["INC-0001"].tags)
    assert by_id["INC-0001"].metadata["corrections"] == "INC-0001-correction-1"
    fix = by_id["INC-0001-correction-1"]
    assert "kind:correction" in fix.tags and fix.metadata["corrects"] == "INC-0001"
    assert parse_correction(fix.text).author == "lee"
    with container.sessions() as db:
        assert service.memory_status(db_session=db, incident_id=incident_id) == "synced"
        kinds = list(db.scalars(select(IncidentEvent.kind).where(IncidentEvent.kind == "memory_synced")))
        assert len(kinds) == 2


@pytest.mark.parametrize("container", [0.5], indirect=True)
async def test_memory_down_leaves_the_writes_failing_with_the_error_and_a_next_attempt(
    container: Container,
) -> None:
    await container.bank.health()  # creates the memory file
    incident_id = resolve_and_correct(container)
    failed_after = datetime.now(UTC)
    with memory_locked(container.settings.memory.data_dir):
        report = await deliver_due(container)
    assert (report["synced"], report["failed"]) == (0, 2)
    with container.sessions() as db:
        detail = service.memory_detail(db_session=db, incident_id=incident_id)
        assert detail is not None and detail.state == "failing" and detail.attempts == 1
        assert detail.last_error and "MemoryUnavailable" in detail.last_error
        assert db.get(Incident, incident_id) is not None
        # Not due again before the backoff ends (read from the row: a clock on a busy machine may
        # already be past a one-second backoff by the time a second drain runs).
        assert detail.next_attempt_at is not None
        assert detail.next_attempt_at >= failed_after + timedelta(seconds=BACKOFF_MIN_S)
