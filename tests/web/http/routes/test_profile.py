"""The profile API: a service's profile is asked of a service incidents are on, never of a typo."""

from tests.web.http.routes.conftest import Api


def test_a_service_no_incident_is_on_has_no_profile_to_read_or_refresh(api: Api) -> None:
    api.post("/api/v1/alerts", {"title": "pool exhausted", "service": "checkout"})
    read = api.client.get("/api/v1/profile", params={"service": "chekout"}, headers=api.auth("reader"))
    assert read.status_code == 404
    assert "'chekout'" in read.json()["detail"] and "checkout" in read.json()["detail"]
    refresh = api.client.post(
        "/api/v1/profile/refresh", params={"service": "chekout"}, headers=api.auth("automation")
    )
    assert refresh.status_code == 404
    known = api.client.get("/api/v1/profile", params={"service": "checkout"}, headers=api.auth("reader"))
    assert known.status_code == 200 and known.json()["id"].endswith("checkout")
