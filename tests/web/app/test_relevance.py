"""An engineer's marks in the service: a precedent marked the same failure is named by the resolution, so
the briefings that stated it are graded right even where the causes are told in other words."""

from typing import Any

from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.grades import service as grades
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.resolution import service
from memory.schema import format_record
from tests.agent.fakes import record
from tests.incidents.resolution.factories import make_incident, post_mortem
from web.app import relevance
from web.app.container import Container
from web.app.grading import grade_incident

# The precedent's cause, in the words of the service it happened on, and this incident's, in its own.
THEIRS = "The consumer's poll batch outran max.poll.interval.ms, so the group rebalanced in a loop"
OURS = "SMS calls made inside the poll loop slowed each batch past the poll deadline; members were evicted"


def _briefing() -> dict[str, Any]:
    evidence: list[dict[str, Any]] = [{"n": 1, "kind": "alert", "title": "alert", "text": "lag growing"}]
    for n, (ident, cause) in enumerate((("PM-0001", THEIRS), ("PM-0002", "an expired TLS certificate")), 2):
        text = format_record(record(ident, root_cause=cause))
        evidence.append({"n": n, "kind": "incident", "id": ident, "title": ident, "text": text})
    return {
        "summary": "Looks like PM-0001.",
        "likely_causes": [{"text": f"Root cause recorded for PM-0001: {THEIRS}", "citations": [2]}],
        "related_incidents": [],
        "evidence": evidence,
    }


def _resolved(container: Container) -> Incident:
    with transaction(container.sessions) as db:
        incident = make_incident(db, "INC-0001")
        briefings.store_briefing(
            db_session=db, incident_id=incident.id, data=_briefing(), mode="evidence-only", memory="on"
        )
        service.resolve(db_session=db, incident=incident, fields=post_mortem(root_cause=OURS), actor="dana")
        db.expunge(incident)
        return incident


def _grades(container: Container, incident: Incident) -> list[tuple[int, str]]:
    with container.sessions() as db:
        return [(g.score, g.reason) for g in grades.incident_grades(db_session=db, incident_id=incident.id)]


def _kinds(container: Container, incident: Incident) -> list[str]:
    with container.sessions() as db:
        return [e.kind for e in incidents.timeline(db_session=db, incident=db.get(Incident, incident.id))]


async def test_marking_the_stated_precedent_the_same_failure_grades_its_briefing_again(
    container: Container,
) -> None:
    incident = _resolved(container)
    assert grade_incident(container, incident.id) == 1
    assert [score for score, _ in _grades(container, incident)] == [0]

    relevance.mark(container, incident, {"PM-0002": "not_related"}, who="dana")
    assert [score for score, _ in _grades(container, incident)] == [0]  # no same failure named: kept

    relevance.mark(container, incident, {"PM-0001": "same_failure"}, who="dana")
    assert _grades(container, incident) == []
    assert "grades_owed" in _kinds(container, incident)
    assert grade_incident(container, incident.id) == 1
    [(score, reason)] = _grades(container, incident)
    assert score == 100 and "an engineer marked the same failure" in reason

    relevance.mark(container, incident, {"PM-0001": "related"}, who="dana")  # taken back
    assert grade_incident(container, incident.id) == 1
    assert [score for score, _ in _grades(container, incident)] == [0]


async def test_marks_before_resolution_are_read_when_it_is_graded(container: Container) -> None:
    with transaction(container.sessions) as db:
        incident = make_incident(db, "INC-0002")
        briefings.store_briefing(
            db_session=db, incident_id=incident.id, data=_briefing(), mode="evidence-only", memory="on"
        )
        db.expunge(incident)
    relevance.mark(container, incident, {"PM-0001": "same_failure"}, who="dana")
    with transaction(container.sessions) as db:
        live = db.get(Incident, incident.id)
        assert live is not None
        service.resolve(db_session=db, incident=live, fields=post_mortem(root_cause=OURS), actor="dana")
    assert grade_incident(container, incident.id) == 1
    assert [score for score, _ in _grades(container, incident)] == [100]
