"""The incident page's precedent marks and the profile page's line on the confidence fit."""

import re

from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.resolution import service
from tests.incidents.resolution.factories import make_incident, post_mortem
from tests.web.app.test_confidence import _briefing
from tests.web.http.pages.conftest import Site


def _resolved(site: Site) -> None:
    with transaction(site.container.sessions) as db:
        incident = make_incident(db)
        briefings.store_briefing(
            db_session=db, incident_id=incident.id, data=_briefing(), mode="evidence-only", memory="on"
        )
        service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="ana")


def test_an_engineer_marks_each_cited_precedent_on_the_incident_page(site: Site) -> None:
    site.signed_in()
    _resolved(site)
    page = site.client.get("/incidents/INC-0001").text
    assert 'name="mark:PM-0001"' in page and "not labelled yet" in page
    form = {"mark:PM-0001": "same_failure", "mark:PM-0002": "not_related"}
    response = site.post_form("/incidents/INC-0001/labels", form, csrf_from="/incidents/INC-0001")
    assert response.status_code == 303
    page = site.client.get("/incidents/INC-0001").text
    assert 'value="same_failure" checked' in page
    assert re.search(r'marked by ana, <time datetime="\d{4}-\d{2}-\d{2}T', page), "who marked it, and when"
    bad = site.post_form(
        "/incidents/INC-0001/labels", {"mark:PM-0404": "related"}, csrf_from="/incidents/INC-0001"
    )
    assert bad.status_code == 422 and "PM-0404" in bad.text


def test_the_profile_page_says_which_confidence_fit_is_in_use(site: Site) -> None:
    site.signed_in()
    assert (
        "Confidence: the shipped fit (0 label(s) from your incidents so far"
        in site.client.get("/profile").text
    )
