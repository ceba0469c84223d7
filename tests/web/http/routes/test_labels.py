"""``/api/v1/incidents/{id}/labels``: each precedent shown with its label, and an engineer's marks."""

from incidents.briefings import service as briefings
from incidents.database import transaction
from tests.incidents.resolution.factories import make_incident
from tests.web.app.test_confidence import _briefing
from tests.web.http.routes.conftest import Api
from web.app.container import Container

PATH = "/api/v1/incidents/INC-0001/labels"


def _briefed(api: Api) -> None:
    container: Container = api.client.app.state.container  # type: ignore[attr-defined]
    with transaction(container.sessions) as db:
        incident = make_incident(db)
        briefings.store_briefing(
            db_session=db, incident_id=incident.id, data=_briefing(), mode="evidence-only", memory="on"
        )


def test_marks_are_given_read_back_and_corrected(api: Api) -> None:
    _briefed(api)
    listed = api.client.get(PATH, headers=api.auth("reader"))
    assert listed.status_code == 200
    assert [(r["precedent"], r["mark"]) for r in listed.json()] == [("PM-0001", None), ("PM-0002", None)]
    marked = api.client.put(PATH, json={"marks": {"PM-0001": "same_failure"}}, headers=api.auth("automation"))
    assert marked.status_code == 200, marked.text
    first = marked.json()[0]
    assert (first["mark"], first["how"], first["who"]) == ("same_failure", "engineer", "automation")
    again = api.client.put(PATH, json={"marks": {"PM-0001": "related"}}, headers=api.auth("automation"))
    assert again.json()[0]["mark"] == "related"


def test_bad_marks_are_a_422_naming_the_problem(api: Api) -> None:
    _briefed(api)
    unknown = api.client.put(PATH, json={"marks": {"PM-9999": "related"}}, headers=api.auth("automation"))
    assert unknown.status_code == 422 and "PM-9999" in unknown.text
    bad = api.client.put(PATH, json={"marks": {"PM-0001": "maybe"}}, headers=api.auth("automation"))
    assert bad.status_code == 422 and "marks" in bad.text
    assert api.client.put(PATH, json={"marks": {}}, headers=api.auth("automation")).status_code == 422
    nobody = api.client.put(
        "/api/v1/incidents/INC-4040/labels",
        json={"marks": {"PM-0001": "related"}},
        headers=api.auth("automation"),
    )
    assert nobody.status_code == 404
    assert (
        api.client.put(PATH, json={"marks": {"PM-0001": "related"}}, headers=api.auth("reader")).status_code
        == 403
    )
