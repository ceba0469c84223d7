"""Near-duplicates and revisions as a document is drafted."""

from pathlib import Path

from incidents.drafts import service as drafts
from incidents.drafts.drafting import Seen, draft_of
from incidents.drafts.revisions import Revised
from memory.extraction.readers import read_bytes

FILES = Path(__file__).parents[2] / "memory" / "extraction" / "files"


def test_a_near_duplicate_of_an_incident_an_accepted_draft_became_is_a_revision_of_it() -> None:
    text = (FILES / "checkout-db-failover.md").read_text()
    [first] = read_bytes("checkout-db-failover.md", text.encode()).documents
    stored = drafts.comparison_text(draft_of(first, Seen()).fields)
    [moved] = read_bytes("2026/checkout.md", text.replace("18%", "about a fifth").encode()).documents

    seen = Seen()
    seen.add("INC-7", stored)
    flagged = draft_of(moved, seen)
    assert flagged.revises is None and str(flagged.near_duplicate).startswith("INC-7 (")

    seen.revisable = {"INC-7": "checkout-api"}
    revision = draft_of(moved, seen)
    assert (revision.revises, revision.near_duplicate) == ("INC-7", None)
    assert str(revision.revision_reason).startswith("near-duplicate, ")

    seen.revisable = {"INC-7": "orders-db"}  # the same write-up posted for another service
    assert draft_of(moved, seen).revises is None


def test_the_incident_a_new_version_revises_is_no_near_duplicate_of_it() -> None:
    text = (FILES / "checkout-db-failover.md").read_text()
    [first] = read_bytes("checkout-db-failover.md", text.encode()).documents
    seen = Seen()
    seen.add("INC-7", drafts.comparison_text(draft_of(first, Seen()).fields))
    [again] = read_bytes("checkout-db-failover.md", text.replace("18%", "a fifth").encode()).documents
    revision = draft_of(again, seen, Revised("INC-7", "a new version of checkout-db-failover.md"))
    assert (revision.revises, revision.near_duplicate) == ("INC-7", None)
    seen.drop("INC-7")
    assert draft_of(again, seen).near_duplicate is None
