"""What a changed version of an imported document revises, and which pending drafts it supersedes."""

from sqlalchemy.orm import Session

from incidents.drafts import revisions
from incidents.drafts import service as drafts
from incidents.drafts.drafting import Seen, draft_of
from incidents.drafts.models import Draft
from memory.extraction.document import from_text

TEXT = (
    "# Search outage on 2026-01-22\n\nService: search-api\n\n"
    "## What happened\nSearch took 8 to 12 seconds for an hour.\n\n"
    "## Root cause\n{cause}\n\n## Resolution\nTurned the faceted query off with its flag.\n"
)


def _draft(db: Session, name: str, cause: str) -> Draft:
    document = from_text(name, TEXT.format(cause=cause))
    revised = revisions.of_source(db_session=db, source_name=name)
    return drafts.add(db_session=db, draft=draft_of(document, Seen(), revised), actor="cli:dana")


def _accepted(db: Session, name: str, cause: str) -> Draft:
    draft = _draft(db, name, cause)
    for field in ("error_signature", "outcome"):
        drafts.edit(db_session=db, draft=draft, values={field: f"the {field}"})
    drafts.accept(db_session=db, draft=draft, actor="oncall")
    return draft


def test_a_new_version_of_an_accepted_source_revises_the_incident_it_became(db: Session) -> None:
    first = _accepted(db, "pm/search.md", "Fielddata filled the heap.")
    found = revisions.of_source(db_session=db, source_name="pm/search.md")
    assert found == revisions.Revised(first.incident_id, "a new version of pm/search.md")
    assert revisions.of_source(db_session=db, source_name="pm/other.md") is None
    assert revisions.accepted_incidents(db_session=db) == {first.incident_id: "search-api"}


def test_a_rejected_version_revises_nothing_but_an_accepted_one_before_it_still_counts(db: Session) -> None:
    rejected = _draft(db, "pm/drill.md", "A drill.")
    drafts.reject(db_session=db, draft=rejected, actor="oncall", reason="a drill")
    assert revisions.of_source(db_session=db, source_name="pm/drill.md") is None
    first = _accepted(db, "pm/search.md", "Fielddata filled the heap.")
    second = _draft(db, "pm/search.md", "A faceted query loaded the brand field.")
    drafts.reject(db_session=db, draft=second, actor="oncall", reason="not yet reviewed by the team")
    found = revisions.of_source(db_session=db, source_name="pm/search.md")
    assert found is not None and found.incident_id == first.incident_id


def test_a_later_version_supersedes_the_pending_one_and_keeps_what_it_revised(db: Session) -> None:
    first = _accepted(db, "pm/search.md", "Fielddata filled the heap.")
    pending = _draft(db, "pm/search.md", "A faceted query loaded the brand field.")
    older = revisions.pending_of_source(db_session=db, source_name="pm/search.md")
    assert older == [pending]
    latest = _draft(db, "pm/search.md", "A faceted query loaded the brand field into fielddata.")
    assert latest.revises == first.incident_id
    revisions.supersede(db_session=db, older=older, by=latest, actor="cli:dana")
    assert (pending.state, pending.decided_by) == ("rejected", "cli:dana")
    assert pending.reason == f"superseded by draft {latest.id}, a later version of pm/search.md"
    never = _draft(db, "pm/new.md", "Disk full.")
    assert revisions.of_source(db_session=db, source_name="pm/new.md") is None
    assert never.revises is None
