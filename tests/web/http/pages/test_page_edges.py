"""The pages take hand-edited URLs and forms without a 500, on SQLite and PostgreSQL: a NUL in an id
or a filter is a 422, in a form field a 422 page; page numbers past any list, or in other scripts'
digits, show page 1."""

import pytest

from tests.web.http.pages.conftest import Site
from tests.web.http.routes.test_database_down import database_down


@pytest.fixture
def signed_in(any_db_site: Site) -> Site:
    any_db_site.add_user("ana")
    any_db_site.sign_in("ana")
    return any_db_site


@pytest.mark.parametrize(
    "path",
    [
        "/incidents?service=check%00out",
        "/incidents?severity=%00",
        "/incidents/INC%00-1",
        "/incidents/INC%00-1/resolve",
        "/incidents/INC%00-1/replay",
        "/records/INC%00-1",
        "/memory?q=pool%00",
        "/profile?service=%00",
    ],
)
def test_a_nul_in_a_page_url_is_a_422(signed_in: Site, path: str) -> None:
    assert signed_in.client.get(path).status_code == 422


@pytest.mark.parametrize("page", ["99999999999999999999", "²", "-3", "1e9", "0"])
def test_odd_page_numbers_show_a_page(signed_in: Site, page: str) -> None:
    response = signed_in.client.get("/incidents", params={"page": page})
    assert response.status_code == 200


def test_memory_page_limits_in_other_digits(signed_in: Site) -> None:
    assert signed_in.client.get("/memory", params={"q": "pool", "limit": "²"}).status_code == 200


def test_a_nul_in_a_form_field_is_a_422(signed_in: Site) -> None:
    incident = signed_in.open_incident()
    response = signed_in.post_form(f"/incidents/{incident}/resolve", {"root_cause": "pool\x00"})
    assert response.status_code == 422 and "NUL" in response.text


def test_the_review_list_names_a_state_it_does_not_know(site: Site) -> None:
    """As the CLI does: a mistyped state is not silently every draft."""
    site.signed_in()
    assert site.client.get("/review?state=all").status_code == 200
    response = site.client.get("/review?state=bogus")
    assert response.status_code == 422 and "pending, accepted, rejected, all" in response.text


def test_a_page_while_the_database_refuses_connections_is_the_sites_503_page(signed_in: Site) -> None:
    with database_down(signed_in.container.engine):
        page = signed_in.client.get("/incidents", headers={"Accept": "text/html"})
        assert page.status_code == 503 and "cannot reach its database" in page.text
    assert signed_in.client.get("/incidents").status_code == 200
