"""Importing a post-mortem again after it was edited: a revision of its incident, held for review."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from incidents.database import make_engine, make_session_factory, upgrade
from incidents.drafts import service as drafts
from incidents.incident.models import Incident
from memory.extraction.readers import read_bytes
from web.app.drafts import ImportReport, accept_all, import_documents

FILES = Path(__file__).parents[2] / "memory" / "extraction" / "files"
NAME = "postmortems/checkout-db-failover.md"
TEXT = (FILES / "checkout-db-failover.md").read_text()
CAUSE = "because the pool's health check was disabled in the\n2026-02 release."


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(database_url)
    upgrade(engine)
    yield make_session_factory(engine)
    engine.dispose()


def _import(sessions: sessionmaker[Session], text: str) -> ImportReport:
    return import_documents(sessions=sessions, reads=[read_bytes(NAME, text.encode())], actor="dana")


def _incidents(sessions: sessionmaker[Session]) -> int:
    with sessions() as db:
        return int(db.scalar(select(func.count()).select_from(Incident)) or 0)


def test_an_edited_post_mortem_is_a_revision_left_for_review_unless_the_operator_says_so(
    sessions: sessionmaker[Session],
) -> None:
    first = accept_all(sessions=sessions, report=_import(sessions, TEXT), actor="dana")
    assert first.accepted == 1
    with sessions() as db:
        public_id = db.scalars(select(Incident.public_id)).one()
    assert (_import(sessions, TEXT).unchanged, _import(sessions, TEXT).revisions) == (1, 0)

    edited = TEXT.replace(CAUSE, "because PgBouncer cached the old primary's address.")
    report = _import(sessions, edited)
    assert (report.drafts, report.revisions, report.near_duplicates) == (1, 1, 0)
    held = accept_all(sessions=sessions, report=report, actor="dana")
    [refusal] = held.not_accepted
    assert refusal.reasons == [
        f"revision of {public_id} (a new version of {NAME}); accepting it replaces that record, "
        "compare them on its page"
    ]
    again = ImportReport(draft_ids=report.draft_ids)
    applied = accept_all(sessions=sessions, report=again, actor="dana", revisions_too=True)
    assert (applied.accepted, applied.not_accepted, _incidents(sessions)) == (1, [], 1)


def test_a_later_version_supersedes_the_pending_draft_of_the_earlier_one(
    sessions: sessionmaker[Session],
) -> None:
    first = _import(sessions, TEXT)
    [pending] = first.draft_ids
    later = _import(sessions, TEXT.replace(CAUSE, "because PgBouncer cached the old primary's address."))
    assert (later.superseded, later.revisions, later.near_duplicates) == ([pending], 0, 0)
    with sessions() as db:
        older = drafts.get(db_session=db, draft_id=pending)
        assert older is not None and older.state == "rejected"
        assert str(older.reason).startswith(f"superseded by draft {later.draft_ids[0]}")


@pytest.mark.parametrize("accepted", [True, False], ids=["accepted", "pending"])
def test_what_a_person_typed_into_an_earlier_version_stays_where_the_new_text_says_nothing(
    sessions: sessionmaker[Session], accepted: bool
) -> None:
    """An outcome the document never had, typed in at review, is not lost to the next version of the
    document; a field the new text does say is the text's."""
    text = TEXT.replace(CAUSE, "because of a bad release.")
    [first] = _import(sessions, text).draft_ids
    typed = {"runbook_used": "RB-007 database failover", "root_cause": "A person's reading of the cause."}
    with sessions() as db:
        draft = drafts.get(db_session=db, draft_id=first)
        assert draft is not None and not drafts.value(draft, "runbook_used")
        drafts.edit(db_session=db, draft=draft, values=typed)
        if accepted:
            drafts.accept(db_session=db, draft=draft, actor="dana")
        db.commit()
    [later] = _import(sessions, text.replace("a bad release", "PgBouncer caching the old primary")).draft_ids
    with sessions() as db:
        draft = drafts.get(db_session=db, draft_id=later)
        assert draft is not None
        assert draft.fields["runbook_used"] == {
            "value": typed["runbook_used"],
            "spans": [],
            "origin": "edited",
        }
        assert "PgBouncer caching the old primary" in drafts.value(draft, "root_cause")
        assert draft.fields["root_cause"]["origin"] != "edited"


def test_a_note_naming_a_service_of_the_teams_incidents_in_passing_is_drafted_under_it(
    sessions: sessionmaker[Session],
) -> None:
    accept_all(sessions=sessions, report=_import(sessions, TEXT), actor="dana")
    with sessions() as db:
        [service] = drafts.team_services(db_session=db)
    spoken = service.replace("-", " ").upper()
    note = f"dns thing\n\nok so around 2am the {spoken} pods timed out on every lookup.\n"
    report = import_documents(sessions=sessions, reads=[read_bytes("note.txt", note.encode())], actor="dana")
    with sessions() as db:
        draft = drafts.get(db_session=db, draft_id=report.draft_ids[0])
        assert draft is not None and drafts.value(draft, "service") == service
