"""The review page says why a draft was refused in the words the page shows: each field by its label,
what is wrong with it, never pydantic's own messages."""

import re

import pytest

from incidents.database import transaction
from incidents.drafts import service as drafts
from incidents.drafts.drafting import Seen, draft_of
from memory.extraction.readers import read_bytes
from tests.web.http.pages.conftest import Site

THIN = "# Search outage, 22 January 2026\n\nSearch was slow for an hour.\n"
FLASH = re.compile(r'<p class="flash flash-error" role="status">(.*?)</p>')


@pytest.fixture
def draft_page(site: Site) -> str:
    site.signed_in()
    [document] = read_bytes("search-outage.md", THIN.encode()).documents
    with transaction(site.container.sessions) as db:
        return f"/review/{drafts.add(db_session=db, draft=draft_of(document, Seen([])), actor='cli:dana').id}"


def _refusal(site: Site, page: str, data: dict[str, str]) -> str:
    response = site.post_form(page, data, csrf_from=page)
    assert response.status_code == 303 and response.headers["location"] == page
    [said] = FLASH.findall(site.client.get(page).text)
    assert "String should" not in said and "Value error" not in said and "Input should" not in said
    return said


def test_accepting_a_draft_with_empty_required_fields_names_them_by_their_labels(
    site: Site, draft_page: str
) -> None:
    said = _refusal(site, draft_page, {"action": "accept"})
    assert said == "Not accepted: fill in Error signature, Root cause, Resolution steps, Outcome."


def test_a_value_accepting_would_refuse_is_named_with_what_it_must_be(site: Site, draft_page: str) -> None:
    said = _refusal(site, draft_page, {"action": "accept", "timestamp": "yesterday", "title": "x" * 301})
    assert said == (
        "Not accepted: Title: at most 300 characters; "
        "When it started: must be a date or a time, e.g. 2026-03-14 or 2026-03-14T09:42:00Z."
    )


def test_saving_a_date_before_1970_is_refused_naming_it_while_required_fields_are_empty(
    site: Site, draft_page: str
) -> None:
    said = _refusal(site, draft_page, {"action": "save", "timestamp": "1969-07-20"})
    assert said == "Not saved: When it started: timestamp 1969-07-20T00:00:00+00:00 is before 1970."
    assert 'value="1969-07-20"' not in site.client.get(draft_page).text
