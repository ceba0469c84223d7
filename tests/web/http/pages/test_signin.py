"""Signing in and out: sessions, CSRF, redirect safety, disabled users and password changes."""

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import update
from starlette.testclient import TestClient

from incidents.auth import users
from incidents.auth.models import UserSession
from incidents.database import transaction
from incidents.timeutil import utcnow
from tests.web.http.pages.conftest import PASSWORD, Site
from web.http.routes.pages.common import safe_next


def test_pages_send_strangers_to_sign_in_with_a_local_next(site: Site) -> None:
    response = site.client.get("/incidents?status=open&service=checkout", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/signin?next=/incidents%3Fstatus%3Dopen%26service%3Dcheckout"
    form = site.client.get(response.headers["location"]).text
    assert 'name="next" value="/incidents?status=open&amp;service=checkout"' in form


def test_sign_in_sets_a_signed_httponly_lax_cookie(site: Site) -> None:
    site.add_user("ana")
    token = site.csrf()
    response = site.client.post(
        "/signin",
        data={"name": "ana", "password": PASSWORD, "next": "/incidents", "csrf_token": token},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/incidents"
    cookie = response.headers["set-cookie"].lower()
    assert "recallops_session=" in cookie
    assert "httponly" in cookie
    assert "samesite=lax" in cookie
    assert "secure" not in cookie  # plain HTTP here; see the https test below
    assert site.client.get("/incidents").status_code == 200


def test_cookie_is_secure_when_served_over_https(site: Site) -> None:
    site.client.base_url = site.client.base_url.copy_with(scheme="https")
    response = site.client.get("/signin")
    assert "secure" in response.headers["set-cookie"].lower()


def test_wrong_password_is_refused_without_saying_which_part(site: Site) -> None:
    site.add_user("ana")
    token = site.csrf()
    for name, password in (("ana", "wrong password!"), ("nobody", PASSWORD)):
        response = site.client.post("/signin", data={"name": name, "password": password, "csrf_token": token})
        assert response.status_code == 401
        assert "Wrong name or password." in response.text
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303


def test_sign_in_without_the_csrf_token_is_refused(site: Site) -> None:
    site.add_user("ana")
    site.client.get("/signin")
    response = site.client.post("/signin", data={"name": "ana", "password": PASSWORD, "csrf_token": "forged"})
    assert response.status_code == 403
    assert "Form expired" in response.text


def test_a_csrf_token_from_another_session_is_refused(site: Site) -> None:
    site.add_user("ana")
    stolen = site.csrf()
    site.client.cookies.clear()
    site.client.get("/signin")
    response = site.client.post("/signin", data={"name": "ana", "password": PASSWORD, "csrf_token": stolen})
    assert response.status_code == 403


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "http:/x", ""],
)
def test_sign_in_never_redirects_off_site(site: Site, target: str) -> None:
    site.add_user("ana")
    token = site.csrf()
    response = site.client.post(
        "/signin",
        data={"name": "ana", "password": PASSWORD, "next": target, "csrf_token": token},
        follow_redirects=False,
    )
    assert response.headers["location"] == "/incidents"


def test_sign_in_returns_to_the_page_asked_for(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana", next_path="/incidents?status=resolved")
    assert (
        site.client.get("/signin", params={"next": "/profile"}, follow_redirects=False).headers["location"]
        == "/profile"
    )


@given(st.text(max_size=40))
def test_safe_next_only_ever_returns_a_local_path(value: str) -> None:
    result = safe_next(value)
    assert result.startswith("/")
    assert not result.startswith("//")
    assert "\\" not in result
    assert result == value or result == "/incidents"


def test_sign_out_ends_the_session(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    response = site.post_form("/signout")
    assert response.status_code == 303 and response.headers["location"] == "/signin"
    assert '<p class="flash flash-ok" role="status">Signed out.</p>' in site.client.get("/signin").text
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303


def test_sign_out_needs_the_csrf_token(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    assert site.client.post("/signout", data={"csrf_token": "nope"}).status_code == 403
    assert site.client.get("/incidents").status_code == 200


def test_disabling_a_user_ends_their_session(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    with transaction(site.container.sessions) as db:
        users.disable_user(db_session=db, name="ana")
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303


def test_a_new_password_ends_existing_sessions(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    with transaction(site.container.sessions) as db:
        users.set_password(db_session=db, name="ana", password="a brand new password")
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303


def test_a_tampered_cookie_is_ignored(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    value = site.client.cookies.get("recallops_session")
    assert value
    site.client.cookies.clear()
    genuine = site.client.get(
        "/incidents", headers={"cookie": f"recallops_session={value}"}, follow_redirects=False
    )
    assert genuine.status_code == 200
    tampered = f"recallops_session={value[:-4]}AAAA"
    assert (
        site.client.get("/incidents", headers={"cookie": tampered}, follow_redirects=False).status_code == 303
    )


def test_security_headers_on_pages(site: Site) -> None:
    response = site.client.get("/signin")
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def _copy_of(site: Site) -> TestClient:
    """A second browser holding a copy of this browser's session cookie."""
    thief = TestClient(site.client.app)
    thief.cookies.set("recallops_session", site.client.cookies.get("recallops_session") or "")
    return thief


def test_a_copied_cookie_stops_working_after_sign_out(any_db_site: Site) -> None:
    site = any_db_site
    site.add_user("ana")
    site.sign_in("ana")
    incident = site.open_incident()
    thief = _copy_of(site)
    assert thief.get("/incidents").status_code == 200
    csrf = Site(thief).csrf("/incidents")
    assert site.post_form("/signout").status_code == 303
    assert thief.get("/incidents", follow_redirects=False).status_code == 303
    acknowledged = thief.post(
        f"/incidents/{incident}/acknowledge", data={"csrf_token": csrf}, follow_redirects=False
    )
    assert acknowledged.headers.get("location", "").startswith("/signin")
    api = thief.get("/api/v1/incidents", headers={"X-CSRF-Token": csrf})
    assert api.status_code == 401


def test_sign_out_everywhere_ends_every_browser(any_db_site: Site) -> None:
    site = any_db_site
    site.add_user("ana")
    laptop = TestClient(site.client.app)
    Site(laptop).sign_in("ana")
    site.sign_in("ana")
    assert laptop.get("/incidents").status_code == 200
    assert site.post_form("/signout/everywhere").status_code == 303
    assert "Signed out everywhere: 2 sessions ended." in site.client.get("/signin").text
    assert laptop.get("/incidents", follow_redirects=False).status_code == 303
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303


def test_an_idle_session_ends(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    with transaction(site.container.sessions) as db:
        db.execute(update(UserSession).values(last_seen_at=utcnow() - timedelta(days=1)))
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303


def test_a_form_sent_after_the_session_ended_returns_to_its_page_saying_nothing_was_saved(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    incident = site.open_incident()
    page = f"/incidents/{incident}/resolve"
    token = site.csrf(page)
    with transaction(site.container.sessions) as db:
        users.sign_out_everywhere(db_session=db, name="ana")

    response = site.client.post(
        page,
        data={"csrf_token": token, "root_cause": "typed at 3 a.m."},
        headers={"referer": f"http://testserver{page}"},
        follow_redirects=False,
    )

    assert response.status_code == 303
    assert response.headers["location"] == f"/signin?next={page}"
    signin = site.client.get(response.headers["location"]).text
    assert "Your session ended, so what you submitted was not saved." in signin
    assert f'name="next" value="{page}"' in signin


def test_a_form_from_another_site_after_the_session_ended_goes_back_to_the_incidents(site: Site) -> None:
    site.add_user("ana")
    site.sign_in("ana")
    incident = site.open_incident()
    token = site.csrf("/incidents")
    with transaction(site.container.sessions) as db:
        users.sign_out_everywhere(db_session=db, name="ana")
    response = site.client.post(
        f"/incidents/{incident}/acknowledge",
        data={"csrf_token": token},
        headers={"referer": "https://evil.example/incidents/INC-0001"},
        follow_redirects=False,
    )
    assert response.headers["location"] == "/signin?next=/incidents"
