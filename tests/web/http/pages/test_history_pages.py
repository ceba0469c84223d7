"""An incident that came in as history (seeded or imported) is described as what it is: dated by its
post-mortem rather than by the load, never briefed unless asked, so nothing was suggested for it and
no grade is coming."""

import re
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from incidents.briefings.models import Job
from incidents.database import transaction
from incidents.incident import service as incident_service
from incidents.resolution import service as resolution_service
from incidents.resolution.models import ResolutionUpdate
from memory.service import HistoryRow, get_record, incident_write, log_incidents
from tests.support.records import POOL_INCIDENT
from tests.web.http.pages.conftest import Site, _site
from tests.web.http.pages.test_incident_pages import RESOLVED, _store_briefing
from web.app.history import import_history
from web.app.memory_outbox import deliver_due


def test_a_seeded_incident_says_it_was_not_briefed_and_when_its_post_mortem_dates_it(site: Site) -> None:
    site.signed_in()
    [public_id] = site.seed(1)
    page = site.client.get(f"/incidents/{public_id}").text
    assert page.count("Not briefed: loaded as seeded history.") == 6  # the head and each briefing section
    assert "No prior incident is known" not in page and "No fix is known" not in page
    assert "Grading the briefings" not in page
    assert "No briefing was made of this incident, so there is none to grade." in page
    assert "This incident has no alerts on record (it is seeded history)." in page
    resolved = re.search(r'id="resolved-by">(.*?)</dd>', page, re.S)
    assert resolved is not None
    assert re.fullmatch(
        r"priya\.natarajan \(seeded history: its post-mortem dates the incident "
        r'<time datetime="2025-03-14T18:02:00\+00:00">2025-03-14 18:02:00 UTC</time>; loaded here '
        r'<time datetime="[^"]+">[^<]+</time>\)',
        resolved.group(1),
    )


def test_a_resolved_incident_waits_for_its_grade_only_when_a_briefing_was_made_or_is_coming(
    site: Site,
) -> None:
    site.signed_in()
    briefed = site.open_incident()
    _store_briefing(site, briefed)
    coming = site.open_incident(summary="Search slow", service="search")  # its briefing job is queued
    failed = site.open_incident(summary="Queue stuck", service="queue")
    with transaction(site.container.sessions) as db:
        db.execute(update(Job).where(Job.incident_id == _id(db, failed)).values(state="failed"))
    for public_id in (briefed, coming, failed):
        assert site.resolve_form(public_id, RESOLVED).status_code == 303
    for public_id in (briefed, coming):
        page = site.client.get(f"/incidents/{public_id}").text
        assert "Grading the briefings against this post-mortem…" in page
    unbriefed = site.client.get(f"/incidents/{failed}").text
    assert "No briefing was made of this incident, so there is none to grade." in unbriefed
    assert "No prior incident is known" not in unbriefed and "Not briefed" not in unbriefed
    assert re.search(r'id="resolved-by">ana, <time', unbriefed)


def _id(db: Session, public_id: str) -> int:
    incident = incident_service.get_by_public_id(db_session=db, public_id=public_id)
    assert incident is not None
    return incident.id


def test_a_records_origin_badge_says_where_its_post_mortem_came_from(site: Site) -> None:
    site.signed_in()
    [seeded] = site.seed(1)
    live = site.open_incident()
    assert _origin(site, seeded) == "seeded history"
    assert _origin(site, live) == "not resolved yet"
    assert site.resolve_form(live, RESOLVED).status_code == 303
    assert _origin(site, live) == "resolved here"


def test_a_record_known_only_to_memory_says_it_is_history_when_its_metadata_does(site: Site) -> None:
    site.signed_in()
    record = replace(POOL_INCIDENT, incident_id="PM-elsewhere-1")
    write = incident_write(record, metadata={"origin": "import", "title": "Pool exhausted"})
    site.client.portal.call(log_incidents, site.container.bank, [write])  # type: ignore[union-attr]
    assert _origin(site, "PM-elsewhere-1") == "imported history"


def test_a_seeded_record_edited_and_an_imported_one_corrected_still_say_where_they_came_from(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.signed_in()
    [seeded] = site.seed(1)
    imported = "PM-import-1"
    row = HistoryRow.model_validate({**asdict(POOL_INCIDENT), "incident_id": imported})
    site.client.portal.call(  # type: ignore[union-attr]
        partial(
            import_history,
            sessions=site.container.sessions,
            bank=site.container.bank,
            rows=[(1, row)],
            origin="import",
            actor="cli:dana",
        )
    )
    with transaction(site.container.sessions) as db:
        incident = incident_service.get_by_public_id(db_session=db, public_id=seeded)
        assert incident is not None
        changes = ResolutionUpdate(outcome="Recovered after the pool was raised")
        resolution_service.update_resolution(
            db_session=db, incident=incident, changes=changes, actor="lee", rewrite_history=True
        )
        db.commit()
    correction = {"text": "The pool was 30, not 20."}
    assert site.post_form(f"/records/{imported}/corrections", correction).status_code == 303
    assert site.client.portal.call(deliver_due, site.container).attempted == 3  # type: ignore[union-attr]

    held = {p: site.client.portal.call(get_record, site.container.bank, p) for p in (seeded, imported)}  # type: ignore[union-attr]
    seeded_meta, imported_meta = (h.metadata for h in held.values() if h is not None)
    assert seeded_meta["origin"] == "seed"
    assert (imported_meta["origin"], imported_meta["imported_by"]) == ("import", "cli:dana")
    assert _origin(site, seeded) == "seeded history" and _origin(site, imported) == "imported history"

    # another installation sharing the bank knows the records only from memory
    elsewhere = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    for other in _site(tmp_path, monkeypatch, elsewhere):
        other.signed_in()
        assert "Known only to memory" in other.client.get(f"/records/{seeded}").text
        assert _origin(other, seeded) == "seeded history"
        assert _origin(other, imported) == "imported history"


def _origin(site: Site, public_id: str) -> str:
    found = re.search(r'id="record-origin">([^<]*)<', site.client.get(f"/records/{public_id}").text)
    assert found is not None
    return found.group(1)
