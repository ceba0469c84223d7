"""A database that refuses connections is a 503 the sender retries, at the gate and in a route, never
a 500 (the pages: tests/web/http/pages/test_page_edges.py)."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, event

from tests.web.http.routes.conftest import Api


@contextmanager
def database_down(engine: Engine) -> Iterator[None]:
    """Every new connection refused, as by a stopped server; the pool emptied so none is left open."""

    def refuse(*_: Any) -> None:
        raise engine.dialect.loaded_dbapi.OperationalError("connection refused")

    event.listen(engine, "do_connect", refuse)
    engine.dispose()
    try:
        yield
    finally:
        event.remove(engine, "do_connect", refuse)
        engine.dispose()


def test_a_database_that_refuses_connections_is_a_503_to_retry_not_a_500(api: Api) -> None:
    container = api.client.app.state.container  # type: ignore[attr-defined]
    with database_down(container.engine):
        posted = api.post("/api/v1/alerts", {"title": "pool exhausted", "service": "checkout"})
        assert posted.status_code == 503 and posted.json()["detail"] == "database busy or unavailable; retry"
        assert posted.headers["retry-after"] == "5"
        listed = api.client.get("/api/v1/incidents", headers=api.auth("reader"))
        assert listed.status_code == 503 and listed.headers["retry-after"] == "5"
        event = {"routing_key": api.secrets["sender"], "event_action": "trigger"}
        event["payload"] = {"summary": "pool exhausted", "source": "checkout", "severity": "critical"}
        paged = api.client.post("/v2/enqueue", json=event)
        assert paged.status_code == 503 and paged.json()["status"] == "unavailable", paged.text
        assert paged.headers["retry-after"] == "5"
    assert api.post("/api/v1/alerts", {"title": "pool exhausted", "service": "checkout"}).status_code == 200
