"""The review queue on SQLite and PostgreSQL: nothing is owed to memory until a person accepts."""

from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.drafts import revisions
from incidents.drafts import service as drafts
from incidents.drafts.drafting import Seen, draft_of
from incidents.drafts.models import Draft
from incidents.history import accepted_for
from incidents.incident.models import Incident
from incidents.incident.service import timeline
from incidents.resolution.models import OutboxEntry
from incidents.resolution.service import add_correction, get_resolution
from memory.extraction.readers import read_bytes

FILES = Path(__file__).parents[2] / "memory" / "extraction" / "files"


def _queued(db: Session, name: str = "checkout-db-failover.md") -> Draft:
    [document] = read_bytes(name, (FILES / name).read_bytes()).documents
    return drafts.add(db_session=db, draft=draft_of(document, Seen()), actor="cli:dana")


def test_a_draft_keeps_its_source_and_each_field_points_into_it(db: Session) -> None:
    draft = _queued(db)
    root = draft.fields["root_cause"]
    [[start, end]] = root["spans"]
    assert draft.source_text[start:end].startswith("The orders primary was failed over")
    assert root["value"].startswith("The orders primary was failed over")
    assert drafts.known_hashes(db_session=db, hashes=[draft.content_hash, "0" * 64]) == {draft.content_hash}
    assert db.scalars(select(OutboxEntry)).all() == []


def test_accepting_stores_the_incident_and_owes_memory_the_record_with_its_source(db: Session) -> None:
    draft = _queued(db)
    incident = drafts.accept(db_session=db, draft=draft, actor="oncall")
    assert incident.origin == "import" and incident.status == "resolved"
    assert incident.service == "checkout-api"
    [entry] = db.scalars(select(OutboxEntry)).all()
    assert entry.document_id == incident.public_id == draft.incident_id
    assert entry.payload["history"] == {
        "origin": "import",
        "imported_by": "cli:dana",
        "accepted_by": "oncall",
        "source": "checkout-db-failover.md",
    }
    assert entry.payload["record"]["root_cause"].startswith("The orders primary was failed over")
    assert draft.state == "accepted" and draft.decided_by == "oncall"
    assert accepted_for(db_session=db, public_id=incident.public_id) is draft
    with pytest.raises(drafts.DraftRefused, match="already accepted"):
        drafts.accept(db_session=db, draft=draft, actor="oncall")
    add_correction(db_session=db, incident=incident, text="The failover took 4 minutes.", actor="lee")
    [entry] = db.scalars(select(OutboxEntry).where(OutboxEntry.kind == "incident")).all()
    assert entry.payload["history"]["source"] == "checkout-db-failover.md"  # a re-write keeps its file


def test_a_draft_missing_required_fields_is_refused_until_a_person_fills_them(db: Session) -> None:
    draft = _queued(db, "search-latency.txt")
    drafts.edit(db_session=db, draft=draft, values={"symptom": ""})
    assert "symptom" in draft.missing
    with pytest.raises(drafts.DraftRefused, match="symptom"):
        drafts.accept(db_session=db, draft=draft, actor="oncall")
    assert db.scalars(select(Incident)).all() == []
    filled = {
        "service": "search-api",
        "symptom": "Search took 8 to 12 seconds.",
        "error_signature": "circuit_breaking_exception: [parent] Data too large",
        "root_cause": "A faceted query loaded the brand field into fielddata.",
        "resolution_steps": "Turned the query off with its flag; cleared the fielddata cache.",
        "outcome": "Latency under 300 ms by 15:30.",
    }
    changed = drafts.edit(db_session=db, draft=draft, values=filled)
    assert set(changed) <= set(filled) and draft.missing == []
    assert draft.fields["symptom"] == {"value": filled["symptom"], "spans": [], "origin": "edited"}
    incident = drafts.accept(db_session=db, draft=draft, actor="oncall")
    assert incident.service == "search-api"


@pytest.mark.parametrize("when", ["1969-07-20T20:17:00Z", "9999-12-31"])
def test_an_implausible_date_is_refused_as_it_is_typed_while_required_fields_are_still_empty(
    db: Session, when: str
) -> None:
    draft = _queued(db, "search-latency.txt")
    drafts.edit(db_session=db, draft=draft, values={"symptom": ""})
    with pytest.raises(drafts.FieldRefused) as refused:
        drafts.edit(db_session=db, draft=draft, values={"timestamp": when, "outcome": "Latency back"})
    assert list(refused.value.by_field) == ["timestamp"]
    assert (
        "before 1970" in refused.value.by_field["timestamp"]
        or "future" in refused.value.by_field["timestamp"]
    )
    assert drafts.value(draft, "timestamp") != when and drafts.value(draft, "outcome") != "Latency back"


def test_rejecting_needs_a_reason_and_keeps_it(db: Session) -> None:
    draft = _queued(db)
    with pytest.raises(drafts.DraftRefused, match="reason"):
        drafts.reject(db_session=db, draft=draft, actor="oncall", reason="  ")
    drafts.reject(db_session=db, draft=draft, actor="oncall", reason="a drill, not an incident")
    assert (draft.state, draft.reason) == ("rejected", "a drill, not an incident")
    assert drafts.counts(db_session=db) == {"pending": 0, "accepted": 0, "rejected": 1}
    with pytest.raises(drafts.DraftRefused, match="already rejected"):
        drafts.accept(db_session=db, draft=draft, actor="oncall")


def test_editing_refuses_fields_that_are_not_drafted(db: Session) -> None:
    draft = _queued(db)
    with pytest.raises(drafts.DraftRefused, match="incident_id: not a drafted field; the fields are title, "):
        drafts.edit(db_session=db, draft=draft, values={"incident_id": "INC-0001"})
    with pytest.raises(drafts.DraftRefused, match=r"errorsig: not a drafted field; did you mean error_si"):
        drafts.edit(db_session=db, draft=draft, values={"errorsig": "HikariPool-1"})
    with pytest.raises(drafts.DraftRefused, match="unpaired surrogate"):
        drafts.edit(db_session=db, draft=draft, values={"symptom": "bad \ud800"})
    with pytest.raises(drafts.DraftRefused, match="NUL"):
        drafts.reject(db_session=db, draft=draft, actor="oncall", reason="a\x00b")


def test_the_same_incident_written_up_twice_is_flagged_as_a_near_duplicate(db: Session) -> None:
    first = _queued(db)
    text = (FILES / "checkout-db-failover.md").read_text().replace("18%", "about a fifth")
    [copy] = read_bytes("copy.md", text.encode()).documents
    seen = Seen()
    seen.add(f"draft {first.id}", drafts.comparison_text(first.fields))
    flagged = draft_of(copy, seen)
    assert flagged.near_duplicate is not None and flagged.near_duplicate.startswith(f"draft {first.id} (")
    [other] = read_bytes("x.html", (FILES / "confluence-cache-eviction.html").read_bytes()).documents
    assert draft_of(other, seen).near_duplicate is None


def test_a_draft_without_a_service_says_so_until_one_is_written(db: Session) -> None:
    """Accepting needs a service to file the record under: the missing list names it from the start,
    so the hint to fill the missing fields leads to an accept that works."""
    draft = _queued(db)
    drafts.edit(db_session=db, draft=draft, values={"service": ""})
    assert draft.missing == ["service"]
    with pytest.raises(drafts.DraftRefused, match="service"):
        drafts.accept(db_session=db, draft=draft, actor="oncall")
    drafts.edit(db_session=db, draft=draft, values={"service": "checkout-api"})
    assert draft.missing == []
    assert drafts.accept(db_session=db, draft=draft, actor="oncall").service == "checkout-api"


def test_accepting_an_incomplete_draft_says_which_fields_in_words(db: Session) -> None:
    [document] = read_bytes("notes.md", b"# Search outage\n\nSearch was slow for an hour.\n").documents
    draft = drafts.add(db_session=db, draft=draft_of(document, Seen([])), actor="cli:dana")
    with pytest.raises(drafts.DraftRefused) as refused:
        drafts.accept(db_session=db, draft=draft, actor="oncall")
    assert refused.value.by_field["root_cause"] == "must not be blank"
    assert refused.value.by_field["timestamp"] == "must not be blank"  # not "input is too short"
    assert "root_cause: must not be blank" in refused.value.reasons


def test_a_document_naming_no_service_is_drafted_with_service_missing() -> None:
    [document] = read_bytes("notes.md", b"## Root cause\n\nThe disk filled.\n").documents
    assert draft_of(document, Seen()).missing[0] == "service"


@pytest.mark.parametrize(
    ("field", "typed", "reason"),
    [("resolution_kind", "banana", "must be one of"), ("timestamp", "1960-01-01", "1970")],
)
def test_an_edit_accepting_would_refuse_is_refused_when_typed(
    db: Session, field: str, typed: str, reason: str
) -> None:
    draft = _queued(db)
    before = dict(draft.fields)
    with pytest.raises(drafts.DraftRefused, match=reason) as refused:
        drafts.edit(db_session=db, draft=draft, values={field: typed})
    assert refused.value.reasons[0].startswith(f"{field}: ")
    assert draft.fields == before


FIRST_CAUSE = (
    "The orders primary was failed over for a kernel patch. checkout-api held its pooled connections to\n"
    "the old primary and did not reconnect, because the pool's health check was disabled in the\n"
    "2026-02 release."
)
DEEPER_CAUSE = (
    "The orders primary was failed over for a kernel patch. PgBouncer kept sending checkout-api to the\n"
    "old primary because it cached the primary's DNS name for an hour."
)


def _revision(db: Session, name: str = "checkout-db-failover.md") -> Draft:
    """The same file with its root cause rewritten after a deeper look, drafted as the import does."""
    text = (FILES / "checkout-db-failover.md").read_text().replace(FIRST_CAUSE, DEEPER_CAUSE)
    [document] = read_bytes(name, text.encode()).documents
    revised = revisions.of_source(db_session=db, source_name=name)
    return drafts.add(db_session=db, draft=draft_of(document, Seen(), revised), actor="cli:dana")


def test_accepting_a_revision_replaces_the_record_of_the_incident_it_revises(db: Session) -> None:
    first = drafts.accept(db_session=db, draft=_queued(db), actor="oncall")
    revision = _revision(db)
    assert revision.revises == first.public_id != revision.incident_id
    incident = drafts.accept(db_session=db, draft=revision, actor="lead")
    assert incident is first and db.scalars(select(Incident)).all() == [first]
    resolution = get_resolution(db_session=db, incident_id=first.id)
    assert resolution is not None and resolution.version == 2
    assert "PgBouncer kept sending checkout-api to the old primary" in resolution.root_cause
    events = {e.kind: e for e in timeline(db_session=db, incident=first)}
    assert events["history_updated"].data["fields"] == ["root_cause"]
    assert (
        events["history_updated"].data["previous"]["root_cause"].endswith("disabled in the 2026-02 release.")
    )
    assert "Revised from checkout-db-failover.md, accepted by lead" in events["draft_accepted"].message
    [entry] = db.scalars(select(OutboxEntry)).all()
    assert entry.document_id == first.public_id and entry.payload["version"] == 2
    assert entry.payload["record"]["root_cause"] == resolution.root_cause
    assert entry.payload["history"]["accepted_by"] == "lead"
    assert revision.incident_id == first.public_id
    assert accepted_for(db_session=db, public_id=first.public_id) is revision


def test_a_revision_accepted_as_new_is_an_incident_of_its_own(db: Session) -> None:
    first = drafts.accept(db_session=db, draft=_queued(db), actor="oncall")
    revision = _revision(db)
    other = drafts.accept(db_session=db, draft=revision, actor="lead", as_new=True)
    assert other.public_id == revision.incident_id != first.public_id
    assert revision.revises is None
    resolution = get_resolution(db_session=db, incident_id=first.id)
    assert resolution is not None and resolution.version == 1
    [line] = [e for e in timeline(db_session=db, incident=other) if e.kind == "draft_accepted"]
    assert f"as a new incident rather than a revision of {first.public_id}" in line.message


def test_a_revision_naming_another_service_is_refused_until_the_service_is_the_incidents(
    db: Session,
) -> None:
    first = drafts.accept(db_session=db, draft=_queued(db), actor="oncall")
    revision = _revision(db)
    drafts.edit(db_session=db, draft=revision, values={"service": "orders-db"})
    with pytest.raises(drafts.DraftRefused, match="set the service to checkout-api"):
        drafts.accept(db_session=db, draft=revision, actor="lead")
    drafts.edit(db_session=db, draft=revision, values={"service": "checkout-api"})
    assert drafts.accept(db_session=db, draft=revision, actor="lead") is first
