"""The review pages: a revision of an imported incident is shown as one, and accepted as one or as new."""

import re
from pathlib import Path

from sqlalchemy import func, select

from incidents.database import transaction
from incidents.drafts import service as drafts
from incidents.incident.models import Incident
from memory.extraction.readers import read_bytes
from tests.web.http.pages.conftest import Site
from web.app.drafts import import_documents

FILES = Path(__file__).parents[3] / "memory" / "extraction" / "files"
TEXT = (FILES / "checkout-db-failover.md").read_text()


def _import(site: Site, text: str, name: str = "checkout-db-failover.md") -> int:
    read = read_bytes(name, text.encode())
    [draft_id] = import_documents(sessions=site.container.sessions, reads=[read], actor="dana").draft_ids
    return draft_id


def _incidents(site: Site) -> int:
    with site.container.sessions() as db:
        return int(db.scalar(select(func.count()).select_from(Incident)) or 0)


def _accepted_then_revised(site: Site) -> tuple[str, int]:
    """The post-mortem accepted as an incident, then an edited version imported: (incident, draft)."""
    with transaction(site.container.sessions) as db:
        draft = drafts.get(db_session=db, draft_id=_import(site, TEXT))
        assert draft is not None
        public_id = drafts.accept(db_session=db, draft=draft, actor="ana").public_id
        db.commit()
    return public_id, _import(site, TEXT.replace("health check was disabled", "health check was turned off"))


def test_a_revision_is_shown_as_one_and_accepted_into_the_incident_it_revises_or_as_new(site: Site) -> None:
    site.signed_in()
    public_id, revision = _accepted_then_revised(site)

    listed = site.client.get("/review").text
    assert f'revision of <a href="/records/{public_id}">{public_id}</a> (a new version of' in listed
    page = site.client.get(f"/review/{revision}").text
    assert f"Accept as revision of {public_id}" in page and 'id="accept-new"' in page
    assert f'Accepting replaces the post-mortem of <a id="revised-record" href="/records/{public_id}"' in page

    path = f"/review/{revision}"
    accepted = site.post_form(path, {"action": "accept"}, csrf_from=path)
    assert accepted.headers["location"] == f"/records/{public_id}"
    assert (
        f"its post-mortem replaced (revision of {public_id})" in site.client.get(f"/records/{public_id}").text
    )
    assert _incidents(site) == 1

    other = _import(site, TEXT.replace("18%", "a third"))
    path = f"/review/{other}"
    filed = site.post_form(path, {"action": "accept-new"}, csrf_from=path)
    assert filed.headers["location"] != f"/records/{public_id}"
    flashed = site.client.get(filed.headers["location"]).text
    filed_id = filed.headers["location"].removeprefix("/records/")
    assert f"Accepted as {filed_id}; memory will hold it within seconds." in flashed
    assert _incidents(site) == 2


def test_a_revisions_page_shows_each_field_of_the_record_beside_the_revision_marking_what_changes(
    site: Site,
) -> None:
    site.signed_in()
    public_id, revision = _accepted_then_revised(site)

    page = site.client.get(f"/review/{revision}").text
    assert f"What accepting replaces in {public_id}" in page
    assert "1 of 8 post-mortem fields change." in page
    root = _compared(page, "root_cause")
    assert 'badge-warn">changed<' in root
    assert "health check was disabled" in root and "health check was turned off" in root
    assert f"<dt>Now, in {public_id}</dt>" in root and "<dt>This revision</dt>" in root
    outcome = _compared(page, "outcome")
    assert 'badge-plain">unchanged<' in outcome and outcome.count("Checkout recovered at 10:17.") == 2

    path = f"/review/{revision}"
    with site.container.sessions() as db:
        sent = drafts.get(db_session=db, draft_id=revision)
        assert sent is not None
        steps = drafts.value(sent, "resolution_steps").replace("\n", "\r\n")  # as a browser sends it
    saved = site.post_form(path, {"action": "save", "outcome": "", "resolution_steps": steps}, csrf_from=path)
    assert saved.status_code == 303
    with site.container.sessions() as db:
        kept = drafts.get(db_session=db, draft_id=revision)
        assert kept is not None and kept.fields["resolution_steps"]["origin"] == "text"  # not edited
    page = site.client.get(path).text
    assert "2 of 8 post-mortem fields change." in page
    assert '<span class="muted">(empty)</span>' in _compared(page, "outcome")

    plain = site.client.get(f"/review/{_import(site, TEXT.replace('18%', 'a fifth'), 'other.md')}").text
    assert 'id="revision-compare"' not in plain  # a draft revising nothing compares nothing


def _compared(page: str, name: str) -> str:
    found = re.search(rf'<li id="compare-{name}".*?</li>', page, re.S)
    assert found is not None, name
    return found.group(0)
