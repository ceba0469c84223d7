"""How an incident ended travels with it: the resolve API, the edit, the import, the tag in memory."""

from tests.web.http.routes.conftest import Api
from tests.web.http.routes.test_memory import import_, jsonl, post_mortem, search
from tests.web.http.routes.test_resolutions import POST_MORTEM, open_incident, resolve


def test_the_resolve_api_takes_a_kind_in_the_words_people_use(api: Api) -> None:
    incident = open_incident(api)
    response = resolve(api, incident, {**POST_MORTEM, "resolution_kind": "Self recovered"})
    assert response.status_code == 201, response.text
    assert response.json()["resolution"]["resolution_kind"] == "self-recovered"
    edited = api.client.patch(
        f"/api/v1/incidents/{incident}/resolution",
        json={"resolution_kind": "false alarm"},
        headers=api.auth("automation"),
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["resolution"]["resolution_kind"] == "false-alarm"


def test_without_a_kind_it_is_not_recorded(api: Api) -> None:
    response = resolve(api, open_incident(api), POST_MORTEM)
    assert response.status_code == 201, response.text
    assert response.json()["resolution"]["resolution_kind"] == ""


def test_an_unknown_kind_is_a_422_naming_the_field_and_the_kinds(api: Api) -> None:
    response = resolve(api, open_incident(api), {**POST_MORTEM, "resolution_kind": "healed itself"})
    assert response.status_code == 422
    assert "resolution_kind" in response.json()["detail"]
    assert "self-recovered" in response.json()["detail"]


def test_an_imported_kind_becomes_a_tag_and_a_template_line(api: Api) -> None:
    response = import_(api, jsonl(post_mortem("PM-9", resolution_kind="self-recovered"), post_mortem("PM-8")))
    assert response.status_code == 200 and response.json()["imported"] == 2, response.text
    hits = {h["id"]: h for h in search(api, q="bulk indexing queue catalogue import").json()["incidents"]}
    assert "resolution:self-recovered" in hits["PM-9"]["tags"]
    assert "Resolution kind: self-recovered" in hits["PM-9"]["text"]
    assert hits["PM-9"]["record"]["resolution_kind"] == "self-recovered"
    assert not any(t.startswith("resolution:") for t in hits["PM-8"]["tags"])
    rejected = import_(api, jsonl(post_mortem("PM-7", resolution_kind="resolved")))
    assert "resolution_kind" in " ".join(rejected.json()["rejected"][0]["reasons"])


def test_a_refusal_is_said_in_its_own_words_without_pydantics_prefix(api: Api) -> None:
    response = resolve(api, open_incident(api), {**POST_MORTEM, "resolution_kind": "bogus"})
    assert response.status_code == 422
    assert response.json()["detail"].startswith("resolution_kind: must be one of fixed"), response.text
    assert "Value error" not in response.text
