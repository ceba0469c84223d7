"""Every resolution teaches: inferred labels after grading, an engineer's marks, refits, rollback."""

from dataclasses import replace
from typing import Any

import pytest

from agent.core.confidence import MODERATE, RESOLUTION, shipped_fit
from agent.core.team_fit import TeamFit, refit
from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.incident.models import Incident
from incidents.labels import service as labels
from incidents.resolution import service
from memory.schema import format_record
from tests.agent.fakes import record
from tests.incidents.resolution.factories import make_incident, post_mortem
from tests.support.fits import adopt
from web.app import confidence, relevance
from web.app.container import Container
from web.app.grading import grade_incident

POOL = "Postgres connection pool sized for average load, exhausted by the flash-sale burst"
PROBE = tuple(shipped_fit().mean)


def _briefing() -> dict[str, Any]:
    evidence: list[dict[str, Any]] = [{"n": 1, "kind": "alert", "title": "alert", "text": "pool timeout"}]
    for n, (ident, cause) in enumerate((("PM-0001", POOL), ("PM-0002", "an expired TLS certificate")), 2):
        text = format_record(record(ident, root_cause=cause))
        evidence.append(
            {"n": n, "kind": "incident", "id": ident, "title": ident, "text": text, "probability": 0.6}
            | {"features": list(PROBE)}
        )
    return {
        "summary": "Pool exhaustion again.",
        "likely_causes": [{"text": f"Root cause recorded for PM-0001: {POOL}", "citations": [2]}],
        "related_incidents": [],
        "evidence": evidence,
    }


def _resolved_incident(container: Container, public_id: str) -> int:
    with transaction(container.sessions) as db:
        incident = make_incident(db, public_id)
        briefings.store_briefing(
            db_session=db, incident_id=incident.id, data=_briefing(), mode="evidence-only", memory="on"
        )
        service.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
        return incident.id


def _marks(container: Container, incident_id: int) -> dict[str, tuple[str, str]]:
    with container.sessions() as db:
        rows = labels.incident_labels(
            db_session=db, bank_id=container.settings.memory.bank_id, incident_id=incident_id
        )
        return {r.precedent: (r.mark, r.how) for r in rows}


async def test_grading_a_resolution_infers_labels_an_engineer_can_correct(container: Container) -> None:
    """Every precedent the briefing showed is labelled, the one no line cited (PM-0002) too."""
    incident_id = _resolved_incident(container, "INC-0001")
    assert grade_incident(container, incident_id) == 1
    assert _marks(container, incident_id) == {
        "PM-0001": ("same_failure", "inferred"),
        "PM-0002": ("not_related", "inferred"),
    }
    with container.sessions() as db:
        incident = db.get(Incident, incident_id)
        db.expunge_all()
    assert incident is not None
    relevance.mark(container, incident, {"PM-0002": "related"}, who="dana")
    assert _marks(container, incident_id)["PM-0002"] == ("related", "engineer")
    with pytest.raises(relevance.UnknownPrecedent, match="PM-9999"):
        relevance.mark(container, incident, {"PM-9999": "related"}, who="dana")
    with pytest.raises(relevance.UnknownPrecedent, match="maybe"):
        relevance.mark(container, incident, {"PM-0001": "maybe"}, who="dana")


def _resolved_and_marked(container: Container, numbers: range, marks: dict[str, str]) -> None:
    """Incidents resolved from the same briefing, each with the engineer's marks."""
    ids = [_resolved_incident(container, f"INC-{i:04d}") for i in numbers]
    with container.sessions() as db:
        incidents = [db.get(Incident, i) for i in ids]
        db.expunge_all()
    for incident in incidents:
        assert incident is not None
        relevance.mark(container, incident, marks, who="dana")


async def test_refits_are_versioned_adopted_when_better_and_rolled_back(container: Container) -> None:
    assert confidence.refit(container) is None  # no labels yet
    _resolved_and_marked(container, range(1, 9), {"PM-0001": "not_related", "PM-0002": "not_related"})
    assert confidence.status(container).version is None
    row = confidence.refit(container)
    assert row is not None and row.version == 1 and row.labels == 16 and row.engineer_labels == 16
    assert row.adopted  # the labels say the shipped fit was too sure of these precedents
    fit = confidence.load_fit(container)
    assert isinstance(fit, TeamFit) and fit.probability(PROBE) < shipped_fit().probability(PROBE)
    status = confidence.status(container)
    assert (status.version, status.incidents, status.labels) == (1, 8, 16)
    assert "fitted on 8 of your incidents" in status.sentence and "ECE" in status.sentence
    assert status.bar == MODERATE and "listed from 30% likely relevant" in status.sentence
    assert confidence.refit(container) is None  # nothing changed since
    assert confidence.rollback(container) == (1, None)
    assert confidence.load_fit(container) is shipped_fit()

    # The rollback holds: new labels do not make the worker adopt again what the operator left...
    _resolved_and_marked(container, range(9, 14), {"PM-0001": "not_related"})
    assert confidence.refit(container) is None
    assert "paused since a rollback" in confidence.status(container).sentence
    # ...until the operator refits, which needs no new label.
    again = confidence.refit(container, force=True)
    assert again is not None and again.version == 2 and again.adopted
    assert confidence.status(container).held is False


def test_the_listing_bar_a_refit_chose_is_the_one_briefings_and_the_status_use(container: Container) -> None:
    adopt(container, replace(refit([], shipped_fit()), bar=0.18).as_dict())
    assert confidence.load_fit(container).bar == 0.18
    status = confidence.status(container)
    assert status.bar == 0.18 and "listed from 18% likely relevant" in status.sentence
    assert status.resolution == RESOLUTION and "ranked by it when 5 points apart or more" in status.sentence


def test_a_fit_made_for_other_features_gives_way_to_the_shipped_fit(container: Container) -> None:
    data = {
        "features": ["keyword_rr", "keyword_rr_other_service"],
        "offset": 0.0,
        "slope": 1.0,
        "weights": [0.0, 0.0],
    }
    adopt(container, data, labels=5)
    assert confidence.load_fit(container) is shipped_fit()


async def test_a_refit_another_replica_recorded_meanwhile_is_not_recorded_twice(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every replica's worker refits when labels are due: one that finishes after another replica
    stored a refit of the same labels drops its own, so a rollback does not land on a twin of the fit
    it leaves."""
    _resolved_and_marked(container, range(1, 9), {"PM-0001": "not_related", "PM-0002": "not_related"})
    decide = confidence.decide

    def decide_while_another_replica_refits(*args: Any, **kwargs: Any) -> Any:
        adopt(container, refit([], shipped_fit()).as_dict(), labels=16)  # the other replica's refit
        return decide(*args, **kwargs)

    monkeypatch.setattr(confidence, "decide", decide_while_another_replica_refits)
    assert confidence.refit(container) is None
    status = confidence.status(container)
    assert (status.version, status.pending) == (1, 0)
