"""Signed-in people are principals of the JSON API too: reads with the cookie, changes with its CSRF token."""

import pytest

from tests.web.http.pages.conftest import Site


def test_a_signed_in_user_can_read_the_api(site: Site) -> None:
    site.add_user("vic", role="viewer")
    site.sign_in("vic")
    public_id = site.open_incident()
    response = site.client.get(f"/api/v1/incidents/{public_id}")
    assert response.status_code == 200
    assert response.json()["id"] == public_id


def test_an_anonymous_browser_is_refused(site: Site) -> None:
    site.open_incident()
    assert site.client.get("/api/v1/incidents").status_code == 401


def test_api_changes_from_a_session_need_the_csrf_header(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    public_id = site.open_incident()
    url = f"/api/v1/incidents/{public_id}/acknowledge"
    assert site.client.post(url).status_code == 401
    assert site.client.post(url, headers={"X-CSRF-Token": "guess"}).status_code == 401
    response = site.client.post(url, headers={"X-CSRF-Token": site.csrf("/incidents")})
    assert response.status_code == 200
    events = site.client.get(f"/api/v1/incidents/{public_id}").json()["timeline"]
    assert any(e["actor"] == "ana" and e["kind"] == "acknowledged" for e in events)


def test_a_viewer_session_lacks_the_write_scope(site: Site) -> None:
    site.add_user("vic", role="viewer")
    site.sign_in("vic")
    public_id = site.open_incident()
    response = site.client.post(
        f"/api/v1/incidents/{public_id}/acknowledge", headers={"X-CSRF-Token": site.csrf("/incidents")}
    )
    assert response.status_code == 403


@pytest.fixture
def sso_site(site: Site, monkeypatch: pytest.MonkeyPatch) -> Site:
    monkeypatch.setattr(site.container.settings.web, "sso_header", "X-Forwarded-User")
    return site


def test_sso_header_signs_in_a_known_user(sso_site: Site) -> None:
    sso_site.add_user("carol", role="engineer", password=None)
    response = sso_site.client.get("/incidents", headers={"X-Forwarded-User": "carol"})
    assert response.status_code == 200
    assert "carol" in response.text
    assert "Sign out" not in response.text  # the proxy owns the sign-in


def test_sso_header_for_an_unknown_or_disabled_name_is_not_a_sign_in(sso_site: Site) -> None:
    response = sso_site.client.get(
        "/incidents", headers={"X-Forwarded-User": "mallory"}, follow_redirects=True
    )
    assert "has no active RecallOps account" in response.text
    assert "<strong>mallory</strong>" in response.text


def test_sso_header_is_ignored_unless_configured(site: Site) -> None:
    site.add_user("carol", role="engineer", password=None)
    response = site.client.get("/incidents", headers={"X-Forwarded-User": "carol"}, follow_redirects=False)
    assert response.status_code == 303
