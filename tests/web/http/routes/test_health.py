"""Readiness means the database takes a write: one that answers reads but refuses writes is not ready."""

import asyncio
from typing import Any

import pytest
from sqlalchemy import event

from tests.web.http.routes.conftest import Api
from web.http.routes.health import READY_MEMORY_S


def test_ready_while_the_database_takes_writes_and_not_once_it_refuses_them(api: Api) -> None:
    ready = api.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["checks"]["database"] == {"ok": True}
    engine = api.client.app.state.container.engine  # type: ignore[attr-defined]

    # A full disk or a read-only volume: reads still answer, every write fails.
    @event.listens_for(engine, "connect")
    def refuse_writes(connection: Any, _: Any) -> None:
        cursor = connection.cursor()
        if engine.dialect.name == "sqlite":
            cursor.execute("PRAGMA query_only = ON")
        else:
            cursor.execute("SET default_transaction_read_only = on")
            connection.commit()  # a SET inside the driver's open transaction would be rolled back with it
        cursor.close()

    engine.dispose()
    try:
        refused = api.client.get("/readyz")
        assert refused.status_code == 503
        database = refused.json()["checks"]["database"]
        assert database["ok"] is False and "cannot take a write" in database["detail"]
        assert api.client.get("/healthz").status_code == 200
    finally:
        event.remove(engine, "connect", refuse_writes)
        engine.dispose()


def test_a_memory_that_does_not_answer_is_reported_without_holding_the_probe(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = api.client.app.state.container.bank  # type: ignore[attr-defined]

    async def hung() -> None:
        await asyncio.sleep(3600)

    monkeypatch.setattr(bank, "health", hung)
    ready = api.client.get("/readyz")
    assert ready.status_code == 200  # memory does not gate readiness
    memory = ready.json()["checks"]["memory"]
    assert memory == {"ok": False, "driver": bank.driver, "detail": f"no answer within {READY_MEMORY_S:g} s"}
