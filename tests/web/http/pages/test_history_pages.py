"""An incident that came in as history (seeded or imported) is described as what it is: dated by its
post-mortem rather than by the load, never briefed unless asked, so nothing was suggested for it and
no grade is coming."""

import re
from dataclasses import replace

from sqlalchemy import update
from sqlalchemy.orm import Session

from incidents.briefings.models import Job
from incidents.database import transaction
from incidents.incident import service as incident_service
from memory.service import incident_write, log_incidents
from tests.support.records import POOL_INCIDENT
from tests.web.http.pages.conftest import Site
from tests.web.http.pages.test_incident_pages import RESOLVED, _store_briefing


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


def _origin(site: Site, public_id: str) -> str:
    found = re.search(r'id="record-origin">([^<]*)<', site.client.get(f"/records/{public_id}").text)
    assert found is not None
    return found.group(1)
