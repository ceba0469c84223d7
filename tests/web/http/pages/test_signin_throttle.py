"""Sign-in throttling through the page, counted in the database (on SQLite and PostgreSQL).

Five failures for a name at an address make that pair wait (429, password unchecked) with a
doubling wait; the right password from an address that has not failed still gets in; an address
spraying many names waits too; a success clears its pair.
"""

from datetime import timedelta

from sqlalchemy import update
from starlette.testclient import TestClient

from incidents.auth.models import SignInFailure
from incidents.auth.throttle import ADDRESS_LIMIT, PAIR_LIMIT, wait_after
from incidents.database import transaction
from incidents.timeutil import utcnow
from tests.web.http.pages.conftest import PASSWORD, Site


def _attempt(site: Site, name: str, password: str, client: TestClient | None = None):  # type: ignore[no-untyped-def]
    browser = Site(client) if client is not None else site
    data = {"name": name, "password": password, "csrf_token": browser.csrf()}
    return browser.client.post("/signin", data=data, follow_redirects=False)


def _from(site: Site, address: str) -> TestClient:
    return TestClient(site.client.app, client=(address, 50000))


def _unblock(site: Site) -> None:
    with transaction(site.container.sessions) as db:
        db.execute(update(SignInFailure).values(blocked_until=utcnow() - timedelta(seconds=1)))


def test_five_failures_make_that_name_at_that_address_wait(any_db_site: Site) -> None:
    site = any_db_site
    site.add_user("oncall")
    for _ in range(PAIR_LIMIT):
        assert _attempt(site, "oncall", "wrong password!").status_code == 401
    refused = _attempt(site, "oncall", PASSWORD)
    assert refused.status_code == 429
    assert 50 <= int(refused.headers["retry-after"]) <= 60  # a minute, less the time the tries took
    assert "Too many failed sign-ins" in refused.text
    assert site.client.get("/incidents", follow_redirects=False).status_code == 303  # not signed in
    _unblock(site)
    assert _attempt(site, "oncall", "wrong again!!!").status_code == 401
    doubled = _attempt(site, "oncall", PASSWORD)
    assert doubled.status_code == 429 and 110 <= int(doubled.headers["retry-after"]) <= 120


def test_a_lockout_never_keeps_the_right_password_out_from_a_clean_address(any_db_site: Site) -> None:
    site = any_db_site
    site.add_user("oncall")
    attacker = _from(site, "198.51.100.7")
    for _ in range(PAIR_LIMIT + 1):
        _attempt(site, "oncall", "wrong password!", client=attacker)
    assert _attempt(site, "oncall", PASSWORD, client=attacker).status_code == 429
    engineer = _from(site, "192.0.2.10")
    assert _attempt(site, "oncall", PASSWORD, client=engineer).status_code == 303


def test_an_address_spraying_names_waits(site: Site) -> None:
    site.add_user("ana")
    sprayer = _from(site, "203.0.113.5")
    for n in range(ADDRESS_LIMIT):
        assert _attempt(site, f"guess{n}", "wrong password!", client=sprayer).status_code == 401
    assert _attempt(site, "ana", PASSWORD, client=sprayer).status_code == 429
    assert _attempt(site, "ana", PASSWORD, client=_from(site, "192.0.2.9")).status_code == 303


def test_a_success_clears_the_count(site: Site) -> None:
    site.add_user("ana")
    for _ in range(PAIR_LIMIT - 1):
        _attempt(site, "ana", "wrong password!")
    assert _attempt(site, "ana", PASSWORD).status_code == 303
    site.client.cookies.clear()
    for _ in range(PAIR_LIMIT - 1):
        assert _attempt(site, "ana", "wrong password!").status_code == 401
    assert _attempt(site, "ana", PASSWORD).status_code == 303


def test_the_wait_doubles_up_to_fifteen_minutes() -> None:
    assert wait_after(PAIR_LIMIT - 1, PAIR_LIMIT) is None
    waits = [wait_after(PAIR_LIMIT + n, PAIR_LIMIT) for n in range(6)]
    assert [w.total_seconds() for w in waits if w] == [60, 120, 240, 480, 900, 900]


def test_a_nul_in_the_name_is_a_422_not_a_crash(any_db_site: Site) -> None:
    any_db_site.add_user("ana")
    assert _attempt(any_db_site, "an\x00a", PASSWORD).status_code == 422
