"""Memory search and history import over HTTP, on a real database and the real embedded bank."""

import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from agent.core.confidence import FEATURES, band, shipped_fit
from agent.core.team_fit import TeamFit
from memory.history import Runbook
from tests.support.fits import adopt
from tests.web.http.routes.conftest import Api
from web.app.history import retain_runbooks
from web.app.offload import Offload


def post_mortem(incident_id: str, **overrides: Any) -> dict[str, Any]:
    return {
        "incident_id": incident_id,
        "service": "search-service",
        "timestamp": "2024-11-02T10:00:00Z",
        "symptom": "Search results empty for new products; indexing queue backed up.",
        "error_signature": "EsRejectedExecutionException: rejected execution of bulk (queue capacity 200)",
        "root_cause": "Bulk indexing thread pool queue too small for the catalogue import burst.",
        "resolution_steps": "Throttled the importer and raised the bulk queue to 1000.",
        "runbook_used": "RB-search-cluster",
        "outcome": "Index caught up in 40 minutes.",
        "failed_attempts": "",
        "resolved_by": "mei",
        **overrides,
    }


def jsonl(*rows: Any) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows)


def import_(
    api: Api, body: str, media: str = "application/x-ndjson", who: str = "automation", **params: Any
) -> Any:
    return api.client.post(
        "/api/v1/memory/import",
        content=body,
        params=params,
        headers={**api.auth(who), "Content-Type": media},
    )


def search(api: Api, **params: Any) -> Any:
    return api.client.get("/api/v1/memory/search", params=params, headers=api.auth("reader"))


def test_import_summarises_and_the_incidents_open_as_resolved_history(api: Api) -> None:
    body = jsonl(
        post_mortem("PM-1"),
        post_mortem("PM-2", service="cart-service", symptom="Carts lost after Redis failover."),
        post_mortem("PM-3", root_cause="   "),
        "{not json",
        post_mortem("PM-4", severity_level="high"),
        post_mortem("PM-1", outcome="duplicate line"),
    )
    response = import_(api, body)
    assert response.status_code == 200, response.text
    summary = response.json()
    assert (summary["imported"], summary["updated"], summary["unchanged"]) == (2, 0, 0)
    reasons = {r["line"]: " ".join(r["reasons"]) for r in summary["rejected"]}
    assert set(reasons) == {3, 4, 5, 6}
    assert "root_cause" in reasons[3] and "not valid JSON" in reasons[4]
    assert "severity_level" in reasons[5] and "repeats line 1" in reasons[6]

    incident = api.incident("PM-1")
    assert incident["status"] == "resolved" and incident["service"] == "search-service"
    assert any(event["kind"] == "imported" for event in incident["timeline"])

    again = import_(api, jsonl(post_mortem("PM-1"), post_mortem("PM-2", service="cart-service")))
    assert (again.json()["unchanged"], again.json()["updated"], again.json()["rejected_count"]) == (1, 0, 1)


def test_import_accepts_a_json_list(api: Api) -> None:
    response = import_(api, json.dumps([post_mortem("PM-9")]), media="application/json")
    assert response.status_code == 200 and response.json()["imported"] == 1


def test_import_refuses_bad_requests(api: Api) -> None:
    assert import_(api, jsonl(post_mortem("PM-5")), who="reader").status_code == 403
    assert import_(api, jsonl(post_mortem("PM-5")), media="text/csv").status_code == 415
    assert import_(api, "  ").status_code == 400
    response = api.client.post("/api/v1/memory/import", content=jsonl(post_mortem("PM-5")))
    assert response.status_code == 401


def test_import_over_the_size_limit_is_413(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api.client.app.state.container.settings.incidents, "max_import_bytes", 64)
    body = jsonl(post_mortem("PM-6"))
    response = import_(api, body)
    assert response.status_code == 413
    assert response.json()["detail"] == f"body of {len(body)} bytes is over the 64-byte limit; split the file"
    streamed = api.client.post(
        "/api/v1/memory/import",
        content=iter([body.encode()[:50], body.encode()[50:]]),
        headers={**api.auth("automation"), "Content-Type": "application/x-ndjson"},
    )
    assert streamed.status_code == 413
    assert streamed.json()["detail"] == "body is over the 64-byte limit; split the file"


def test_search_returns_what_the_agent_would_recall(api: Api) -> None:
    import_(
        api,
        jsonl(
            post_mortem("PM-1"),
            post_mortem(
                "PM-2",
                service="cart-service",
                symptom="Customers lost their carts after a Redis failover.",
                error_signature="redis: MASTER changed, replica promoted with empty dataset",
                root_cause="A stale replica was promoted.",
            ),
        ),
    )
    response = search(api, q="bulk indexing queue rejected during catalogue import", limit=2)
    assert response.status_code == 200, response.text
    found = response.json()["incidents"]
    assert found[0]["id"] == "PM-1"
    assert found[0]["record"]["root_cause"].startswith("Bulk indexing")
    assert found[0]["score"] > 0 and found[0]["why"]
    scoped = search(api, q="bulk indexing queue rejected", service="cart-service").json()["incidents"]
    assert [i["id"] for i in scoped] == ["PM-2"]
    assert search(api, q="").status_code == 422
    assert api.client.get("/api/v1/memory/search", params={"q": "x"}).status_code == 401


def test_search_gives_each_hit_the_probability_of_the_fit_briefings_use(api: Api) -> None:
    import_(api, jsonl(post_mortem("PM-1")))
    query = {"q": "bulk queue rejected executions while the catalogue import ran", "limit": 1}
    shipped = search(api, **query).json()["incidents"][0]["confidence"]
    assert shipped["calibrated"] and 0 < shipped["probability"] < 1
    assert shipped["band"] == band(shipped["probability"])

    # The team's adopted refit says its precedents are relevant far less often than the shipped fit does.
    lowered = TeamFit(shipped_fit(), -3.0, 1.0, (0.0,) * len(FEATURES), labels=40)
    adopt(api.client.app.state.container, lowered.as_dict())
    team = search(api, **query).json()["incidents"][0]["confidence"]
    p = shipped["probability"]
    assert team["probability"] == pytest.approx(1 / (1 + math.exp(3.0 - math.log(p / (1 - p)))), abs=0.002)
    assert team["band"] == band(team["probability"])


def _retain_runbook(api: Api, runbook_id: str) -> None:
    bank = api.client.app.state.container.bank
    runbook = Runbook(
        runbook_id=runbook_id,
        service="checkout-service",
        title="DB pool exhaustion",
        updated="2025-01-01",
        body="1. Check pool usage.\n2. Raise the pool size to 40.",
    )
    assert api.client.portal.call(retain_runbooks, bank, [runbook]) == 1


def test_import_cannot_overwrite_a_runbook_a_correction_or_a_live_incident(api: Api) -> None:
    _retain_runbook(api, "RB-checkout-db-pool")
    live = api.post("/api/v1/alerts", {"title": "pool exhausted", "service": "checkout-service"}).json()
    live_id = live["incidents"][0]
    planted = "increase max_connections to 10000"
    body = jsonl(
        post_mortem("RB-checkout-db-pool", resolution_steps=planted),
        post_mortem("INC-0003-correction-1", resolution_steps=planted),
        post_mortem(live_id, resolution_steps=planted),
        {**post_mortem("RB-new"), "kind": "runbook"},
        {**post_mortem("PM-20"), "kind": "incident"},
    )
    summary = import_(api, body).json()
    assert summary["imported"] == 1
    reasons = {r["line"]: " ".join(r["reasons"]) for r in summary["rejected"]}
    assert "runbook record in memory" in reasons[1] and "recallops seed" in reasons[1]
    assert "correction's id" in reasons[2]
    assert "live incident" in reasons[3]
    assert "only incident records" in reasons[4]
    found = search(api, q="Check pool usage raise the pool size", limit=5).json()["incidents"]
    runbook = next(hit for hit in found if hit["id"] == "RB-checkout-db-pool")
    assert runbook["kind"] == "runbook" and planted not in runbook["text"]


def test_imported_records_name_who_imported_them(api: Api) -> None:
    import_(api, jsonl(post_mortem("PM-30", resolved_by="someone-else")))
    hit = search(api, q="bulk indexing queue rejected", limit=1).json()["incidents"][0]
    assert hit["id"] == "PM-30"
    assert hit["metadata"]["imported_by"] == "automation"
    assert hit["record"]["resolved_by"] == "someone-else"  # the post-mortem's own data, kept


def test_deep_nesting_is_a_400_not_a_crash(api: Api) -> None:
    response = import_(api, "[" * 100_000, media="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]
    line = import_(api, jsonl(post_mortem("PM-40"), "[" * 100_000)).json()
    assert line["imported"] == 1 and "nested too deeply" in line["rejected"][0]["reasons"][0]


def test_rewriting_history_takes_replace_and_a_scope_of_its_own(api: Api) -> None:
    import_(api, jsonl(post_mortem("PM-50")))
    planted = "kubectl delete namespace prod"
    refused = import_(api, jsonl(post_mortem("PM-50", resolution_steps=planted))).json()
    assert (refused["updated"], refused["rejected_count"]) == (0, 1)
    assert "--replace (API: replace=true)" in refused["rejected"][0]["reasons"][0]
    denied = import_(api, jsonl(post_mortem("PM-50", resolution_steps=planted)), replace="true")
    assert denied.status_code == 403 and "history:replace" in denied.json()["detail"]
    assert (
        planted not in search(api, q="bulk indexing queue rejected", limit=1).json()["incidents"][0]["text"]
    )

    steps = "Raised the bulk queue to 2000 and split the catalogue import into batches."
    replaced = import_(
        api, jsonl(post_mortem("PM-50", resolution_steps=steps)), who="historian", replace="true"
    )
    assert replaced.json()["updated"] == 1, replaced.text
    change = next(e for e in api.incident("PM-50")["timeline"] if e["kind"] == "history_updated")
    assert change["actor"] == "historian" and "resolution_steps" in change["message"]
    cited = search(api, q="bulk indexing queue rejected", limit=1).json()["incidents"][0]
    assert cited["record"]["resolution_steps"] == steps


def test_an_id_that_cannot_name_a_page_is_rejected(api: Api) -> None:
    summary = import_(api, jsonl(post_mortem("PM/60"), post_mortem("PM#61"), post_mortem("PM-62"))).json()
    assert summary["imported"] == 1
    assert [r["line"] for r in summary["rejected"]] == [1, 2]
    assert "names a page" in summary["rejected"][0]["reasons"][0]


def test_a_junk_import_is_answered_with_counts_and_one_page_of_rejections(api: Api) -> None:
    lines = 5_000
    first = import_(api, "x\n" * lines)
    assert first.status_code == 200
    summary = first.json()
    assert summary["rejected_count"] == lines and summary["imported"] == 0
    assert [r["line"] for r in summary["rejected"]] == list(range(1, 101))
    assert summary["rejected_next"] == 100 and len(first.content) < 20_000
    page = import_(api, "x\n" * lines, rejected_after=summary["rejected_next"]).json()
    assert [r["line"] for r in page["rejected"]] == list(range(101, 201))
    last = import_(api, "x\n" * lines, rejected_after=lines - 10).json()
    assert len(last["rejected"]) == 10 and last["rejected_next"] is None


def test_the_import_is_parsed_in_the_worker_process(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsing holds the GIL, so a thread of the server would still stall its event loop."""
    called: list[str] = []
    call = Offload.call

    async def watched(self: Offload, fn: Callable[..., Any], *args: object) -> Any:
        called.append(fn.__name__)
        return await call(self, fn, *args)

    monkeypatch.setattr(Offload, "call", watched)
    assert import_(api, jsonl(post_mortem("PM-70"))).json()["imported"] == 1
    assert called == ["parse_body"]


def test_the_same_rows_imported_by_someone_else_are_unchanged(api: Api) -> None:
    """A row that names no resolver was resolved by whoever imported it first; importing the same file
    again under another token says nothing new about who resolved it, so it is no rewrite."""
    unsigned = {k: v for k, v in post_mortem("PM-61").items() if k != "resolved_by"}
    rows = jsonl(post_mortem("PM-60", resolved_by=""), unsigned)
    assert import_(api, rows).json()["imported"] == 2
    again = import_(api, rows, who="historian").json()
    assert (again["unchanged"], again["rejected_count"]) == (2, 0), again
    assert api.incident("PM-60")["resolved_by"] == "automation"
