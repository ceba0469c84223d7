"""The pages take hand-edited URLs and forms without a 500, on SQLite and PostgreSQL: a NUL in an id
or a filter, an id or a filter that does not validate, or a NUL in a form field is a 422 page saying
what is wrong; page numbers past any list, or in other scripts' digits, show page 1."""

import pytest
from httpx import Response

from tests.web.http.pages.conftest import Site
from tests.web.http.routes.test_database_down import database_down


@pytest.fixture
def signed_in(any_db_site: Site) -> Site:
    any_db_site.add_user("ana")
    any_db_site.sign_in("ana")
    return any_db_site


def _error_page(response: Response) -> str:
    assert response.status_code == 422 and response.headers["content-type"].startswith("text/html")
    assert "<h1>Bad address</h1>" in response.text
    return response.text


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("/incidents?service=check%00out", "in the value of service,"),
        ("/incidents?severity=%00", "in the value of severity,"),
        ("/incidents/INC%00-1", "in its path,"),
        ("/incidents/INC%00-1/resolve", "in its path,"),
        ("/incidents/INC%00-1/replay", "in its path,"),
        ("/records/INC%00-1", "in its path,"),
        ("/memory?q=pool%00", "in the value of q,"),
        ("/profile?service=%00", "in the value of service,"),
        ("/signin?next=%00", "in the value of next,"),
    ],
)
def test_a_nul_in_a_page_url_is_a_422_page_saying_where(signed_in: Site, path: str, where: str) -> None:
    assert f"NUL character (%00) {where}" in _error_page(signed_in.client.get(path))


def test_a_nul_in_an_api_url_stays_a_json_422(signed_in: Site) -> None:
    response = signed_in.client.get("/api/v1/incidents?service=%00")
    assert response.status_code == 422 and "NUL" in response.json()["detail"]


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/review/abc", "The draft&#39;s number (draft_id) in the address&#39;s path is &#39;abc&#39;: "),
        ("/review/0", "The draft&#39;s number (draft_id) in the address&#39;s path is &#39;0&#39;: "),
        ("/review/99999999999", "(draft_id) in the address&#39;s path is &#39;99999999999&#39;: "),
        ("/review?state=" + "x" * 17, "state in the address&#39;s query is &#39;xxxxxxxxxxxxxxxxx&#39;: "),
    ],
)
def test_a_page_url_that_does_not_validate_is_a_422_page_naming_the_parameter(
    signed_in: Site, path: str, named: str
) -> None:
    assert named in _error_page(signed_in.client.get(path))


def test_a_form_posted_to_an_address_that_does_not_validate_is_a_422_page(signed_in: Site) -> None:
    response = signed_in.post_form("/review/abc", {"action": "save"})
    assert "(draft_id) in the address&#39;s path is &#39;abc&#39;" in _error_page(response)


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
