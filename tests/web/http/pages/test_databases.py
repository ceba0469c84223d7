"""The engineer's path through the pages on SQLite and on PostgreSQL: list, incident, acknowledge, resolve."""

from tests.web.http.pages.conftest import Site


def test_list_incident_acknowledge_and_resolve(any_db_site: Site) -> None:
    site = any_db_site
    site.add_user("ana")
    site.sign_in("ana")
    older = site.open_incident(summary="Checkout latency", service="checkout")
    newer = site.open_incident(summary="Payments 5xx", service="payments", alertname="Errors")
    url = f"/incidents/{newer}"
    assert site.post_form(f"{url}/acknowledge", csrf_from=url).status_code == 303
    data = {
        "symptom": "5xx on payments",
        "error_signature": "HTTP 503 from the processor",
        "root_cause": "processor rate limit",
        "resolution_steps": "backed off retries",
        "outcome": "restored",
    }
    assert site.post_form(f"{url}/resolve", data, csrf_from=f"{url}/resolve").status_code == 303
    listing = site.client.get("/incidents").text
    assert listing.index(older) < listing.index(newer)  # open first, though opened earlier
    assert "memory: pending" in site.client.get(url).text
    assert newer in site.client.get("/incidents", params={"status": "resolved", "service": "payments"}).text
    assert site.client.get(f"/records/{newer}").status_code == 200
