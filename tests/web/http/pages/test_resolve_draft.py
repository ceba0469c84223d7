"""'Draft from my notes' on the resolve form: a resolution conversation that prefills, never saves."""

import html
import re

from incidents.resolution.models import Resolution
from tests.web.http.pages.conftest import Site

NOTES = (
    "Root cause: idle-in-transaction sessions after the 14:00 deploy\n"
    "Resolution steps: killed them; rolled the deploy back\n"
    "Outcome: errors gone within 4 minutes"
)


def _field(page: str, name: str) -> str:
    match = re.search(rf'<textarea id="f-{name}"[^>]*>(.*?)</textarea>', page, re.S)
    assert match, f"no field {name}"
    return html.unescape(match.group(1))


def _source(page: str, name: str) -> str:
    match = re.search(rf'class="badge src-(\w+)" id="s-{name}"', page)
    assert match, f"no source badge for {name}"
    return match.group(1)


def test_engineer_drafts_the_form_from_notes_and_nothing_is_saved(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    public_id = site.open_incident()
    path = f"/incidents/{public_id}/resolve"
    form = site.client.get(path).text
    assert f'action="{path}/draft"' in form and "Draft from my notes" in form

    response = site.post_form(f"{path}/draft", {"notes": NOTES}, csrf_from=path)

    assert response.status_code == 200, response.text
    page = response.text
    assert _field(page, "root_cause") == "idle-in-transaction sessions after the 14:00 deploy"
    assert _field(page, "outcome") == "errors gone within 4 minutes"
    assert _source(page, "root_cause") == "notes"
    assert _source(page, "resolution_steps") == "notes"
    assert _source(page, "symptom") == "alert"
    assert _source(page, "failed_attempts") == "none"
    assert html.unescape(_field(page, "notes")) == NOTES  # the notes stay for another try
    assert f'action="{path}"' in page  # the engineer still submits the normal form
    with site.container.sessions() as db:
        assert db.query(Resolution).count() == 0
    assert site.client.get(f"/incidents/{public_id}").text.count("resolved by") == 0


def test_missing_fields_are_named_as_warnings(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    public_id = site.open_incident()
    path = f"/incidents/{public_id}/resolve"
    page = site.post_form(f"{path}/draft", {"notes": "Root cause: disk full"}, csrf_from=path).text
    warnings = re.search(r'id="draft-warnings".*?</div>', page, re.S)
    assert warnings and "Required field(s) still empty" in warnings.group(0)
    assert "resolution_steps" in warnings.group(0) and "outcome" in warnings.group(0)


def test_blank_or_unstorable_notes_are_named_on_the_form(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    public_id = site.open_incident()
    path = f"/incidents/{public_id}/resolve"
    blank = site.post_form(f"{path}/draft", {"notes": "   "}, csrf_from=path)
    assert blank.status_code == 422
    assert '<p class="field-error" id="e-notes" aria-live="polite">must not be blank</p>' in blank.text
    nul = site.post_form(f"{path}/draft", {"notes": "Outcome: ok\x00"}, csrf_from=path)
    assert nul.status_code == 422 and "NUL" in nul.text


def test_viewers_never_see_it_and_are_refused(site: Site) -> None:
    site.add_user("ana")
    site.add_user("lee", role="viewer")
    site.sign_in("ana")
    public_id = site.open_incident()
    site.sign_in("lee")
    assert "Draft from my notes" not in site.client.get(f"/incidents/{public_id}").text
    response = site.post_form(f"/incidents/{public_id}/resolve/draft", {"notes": NOTES})
    assert response.status_code == 403


def test_draft_needs_the_csrf_token_and_a_real_incident(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    public_id = site.open_incident()
    refused = site.client.post(f"/incidents/{public_id}/resolve/draft", data={"notes": NOTES})
    assert refused.status_code == 403
    assert site.post_form("/incidents/INC-9999/resolve/draft", {"notes": NOTES}).status_code == 404


def test_drafting_keeps_what_the_engineer_typed_and_fills_only_the_rest(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    public_id = site.open_incident()
    path = f"/incidents/{public_id}/resolve"
    form = site.client.get(path).text
    button = re.search(r'<form [^>]*id="resolve-form".*?</form>', form, re.S)
    assert button and f'formaction="{path}/draft"' in button.group(0)  # the draft sends the typed fields
    first = {name: _field(form, name) for name in ("symptom", "error_signature", "resolution_steps")}

    typed = {
        **first,
        "outcome": "Checkout back under 300 ms\r\nby 14:20",
        "failed_attempts": "",
        "notes": NOTES,
    }
    page = site.post_form(f"{path}/draft", typed, csrf_from=path).text

    assert _field(page, "outcome") == "Checkout back under 300 ms\r\nby 14:20"
    assert _source(page, "outcome") == "typed"
    assert _field(page, "root_cause") == "idle-in-transaction sessions after the 14:00 deploy"
    assert _source(page, "root_cause") == "notes"
    assert _source(page, "symptom") == "alert"  # sent back untouched: not the engineer's word
