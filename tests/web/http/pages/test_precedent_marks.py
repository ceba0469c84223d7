"""The incident page's precedent marks (a radio group per precedent, named by its fieldset's legend) and
the profile page's lines on the grades and the confidence fit."""

import re

from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.grades import service as grades
from incidents.labels import service as labels
from incidents.resolution import service
from tests.incidents.resolution.factories import make_incident, post_mortem
from tests.web.app.test_confidence import _briefing
from tests.web.http.pages.conftest import Site


def _resolved(site: Site, score: int | None = None) -> None:
    """INC-0001 briefed and resolved; its briefing graded ``score`` when one is given."""
    with transaction(site.container.sessions) as db:
        incident = make_incident(db)
        briefing = briefings.store_briefing(
            db_session=db, incident_id=incident.id, data=_briefing(), mode="evidence-only", memory="on"
        )
        service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="ana")
        if score is not None:
            grades.store_grade(db_session=db, briefing=briefing, score=score, reason="test", matched=None)


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
    group = re.search(r'id="marks-PM-0001">\s*<legend>(.*?)</legend>(.*?)</fieldset>', page, re.S)
    assert group is not None and 'href="/records/PM-0001"' in group.group(1)
    assert group.group(2).count('type="radio" name="mark:PM-0001"') == 3
    bad = site.post_form(
        "/incidents/INC-0001/labels", {"mark:PM-0404": "related"}, csrf_from="/incidents/INC-0001"
    )
    assert bad.status_code == 422 and "PM-0404" in bad.text


def _form(page: str) -> dict[str, str]:
    """What a browser posts when nothing is touched: the hidden fields and each checked radio."""
    hidden = dict(re.findall(r'<input type="hidden" name="(shown:[^"]+)" value="([^"]*)">', page))
    checked = dict(re.findall(r'name="(mark:[^"]+)" value="([^"]+)" checked', page))
    return {**hidden, **checked}


def test_a_prefilled_inferred_label_left_alone_stays_inferred_and_only_a_change_is_the_engineers(
    site: Site,
) -> None:
    site.signed_in()
    _resolved(site)
    bank = site.container.settings.memory.bank_id
    with transaction(site.container.sessions) as db:
        for precedent in ("PM-0001", "PM-0002"):
            labels.store_label(
                db_session=db,
                bank_id=bank,
                incident_id=1,
                precedent=precedent,
                mark="not_related",
                how=labels.INFERRED,
                who="recallops",
            )
        db.commit()
    page = site.client.get("/incidents/INC-0001").text
    untouched = site.post_form("/incidents/INC-0001/labels", _form(page), csrf_from="/incidents/INC-0001")
    assert untouched.status_code == 303
    page = site.client.get("/incidents/INC-0001").text
    assert "No mark changed" in page and "marked by ana" not in page
    form = {**_form(page), "mark:PM-0001": "same_failure"}
    site.post_form("/incidents/INC-0001/labels", form, csrf_from="/incidents/INC-0001")
    with transaction(site.container.sessions) as db:
        how = {r.precedent: r.how for r in labels.incident_labels(db_session=db, bank_id=bank, incident_id=1)}
    assert how == {"PM-0001": labels.ENGINEER, "PM-0002": labels.INFERRED}
    page = site.client.get("/incidents/INC-0001").text
    confirmed = {**_form(page), "confirm:PM-0002": "1"}
    site.post_form("/incidents/INC-0001/labels", confirmed, csrf_from="/incidents/INC-0001")
    with transaction(site.container.sessions) as db:
        how = {r.precedent: r.how for r in labels.incident_labels(db_session=db, bank_id=bank, incident_id=1)}
    assert how == {"PM-0001": labels.ENGINEER, "PM-0002": labels.ENGINEER}


def test_the_profile_page_says_which_confidence_fit_is_in_use(site: Site) -> None:
    site.signed_in()
    assert (
        "Confidence: the shipped fit (0 label(s) from your incidents so far"
        in site.client.get("/profile").text
    )


def test_the_profile_page_says_the_share_of_briefings_that_scored_100_once(site: Site) -> None:
    site.signed_in()
    _resolved(site, score=100)
    said = re.search(r'<p id="grades-summary">(.*?)</p>', site.client.get("/profile").text)
    assert said is not None
    assert said.group(1) == (
        "Briefings graded in the last 90 days: 1; mean score 100.0 of 100; 100% of them scored 100."
    )
