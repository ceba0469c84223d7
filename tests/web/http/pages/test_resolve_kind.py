"""The resolve form asks how the incident ended; notes can say it, the incident page shows it."""

import re

from incidents.resolution.models import Resolution
from tests.web.http.pages.conftest import Site

FIELDS = {
    "symptom": "Checkout p99 above 2 s at 03:00",
    "error_signature": "CheckoutLatencyHigh",
    "root_cause": "The nightly price import slowed lookups; nothing failed",
    "resolution_steps": "Watched the import finish",
    "outcome": "Cleared by itself in 7 minutes",
}


def _selected(page: str) -> str:
    select = re.search(r'<select id="f-resolution_kind".*?</select>', page, re.S)
    assert select, "no resolution kind choice on the form"
    chosen = re.search(r'<option value="([^"]*)" selected>', select.group(0))
    return chosen.group(1) if chosen else ""


def test_the_form_offers_every_kind_and_a_submitted_kind_is_shown(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    public_id = site.open_incident()
    path = f"/incidents/{public_id}/resolve"
    form = site.client.get(path).text
    for kind in ("fixed", "mitigated", "self-recovered", "false-alarm", "duplicate"):
        assert f'<option value="{kind}"' in form
    assert _selected(form) == ""

    response = site.post_form(path, {**FIELDS, "resolution_kind": "self-recovered"}, csrf_from=path)
    assert response.status_code in (302, 303), response.text
    with site.container.sessions() as db:
        assert db.query(Resolution).one().resolution_kind == "self-recovered"
    page = site.client.get(f"/incidents/{public_id}").text
    assert re.search(r'id="resolution-kind">\s*self recovered', page)


def test_notes_that_say_how_it_ended_preselect_the_kind(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    path = f"/incidents/{site.open_incident()}/resolve"
    notes = "Root cause: price import load\nOutcome: cleared by itself\nKind: false alarm"
    page = site.post_form(f"{path}/draft", {"notes": notes}, csrf_from=path).text
    assert _selected(page) == "false-alarm"


def test_an_unknown_kind_is_named_on_the_form(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    path = f"/incidents/{site.open_incident()}/resolve"
    response = site.post_form(path, {**FIELDS, "resolution_kind": "healed"}, csrf_from=path)
    assert response.status_code == 422
    assert "Resolution kind" in response.text and "self-recovered" in response.text
