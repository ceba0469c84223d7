"""Mental models, their refresh operations and the bank configuration, as rows in ``memory.db``."""

import json
import sqlite3
import uuid
from datetime import UTC, datetime
from typing import Any

from memory.bank import BankConfig, MentalModel, Operation, OperationStatus
from memory.config import default_bank_config
from memory.embedded.store import Store, dumps, from_epoch, to_epoch


def utcnow() -> datetime:
    return datetime.now(UTC)


_MODEL_COLUMNS = "id, name, source_query, tags, content, structured, last_refreshed_at"
_OPERATION_COLUMNS = "id, kind, target, status, error, created_at, finished_at"


def _model(row: tuple[Any, ...]) -> MentalModel:
    id_, name, source_query, tags, content, structured, refreshed = row
    return MentalModel(
        id=id_,
        name=name,
        source_query=source_query,
        tags=json.loads(tags),
        content=content,
        structured=json.loads(structured) if structured else None,
        last_refreshed_at=from_epoch(refreshed) if refreshed is not None else None,
    )


def _operation(row: tuple[Any, ...]) -> Operation:
    id_, kind, target, status, error, created, finished = row
    return Operation(
        id=id_,
        kind=kind,
        target=target,
        status=status,
        error=error,
        created_at=from_epoch(created),
        finished_at=from_epoch(finished) if finished is not None else None,
    )


def upsert_model(
    conn: sqlite3.Connection, *, model_id: str, name: str, source_query: str, tags: list[str]
) -> None:
    with Store.write(conn):
        conn.execute(
            "INSERT INTO mental_models(id, name, source_query, tags) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET name = excluded.name, source_query = excluded.source_query, "
            "tags = excluded.tags",
            (model_id, name, source_query, dumps(tags)),
        )


def get_model(conn: sqlite3.Connection, model_id: str) -> MentalModel | None:
    row = conn.execute(f"SELECT {_MODEL_COLUMNS} FROM mental_models WHERE id = ?", (model_id,)).fetchone()
    return _model(row) if row else None


def list_models(conn: sqlite3.Connection) -> list[MentalModel]:
    return [_model(r) for r in conn.execute(f"SELECT {_MODEL_COLUMNS} FROM mental_models ORDER BY name")]


def store_model_content(
    conn: sqlite3.Connection, model_id: str, *, content: str, structured: dict[str, Any] | None
) -> datetime:
    """Save a refresh's result; ``last_refreshed_at`` strictly advances even within one clock tick."""
    with Store.write(conn):
        previous = conn.execute(
            "SELECT last_refreshed_at FROM mental_models WHERE id = ?", (model_id,)
        ).fetchone()
        now = to_epoch(utcnow())
        if previous and previous[0] is not None and now <= previous[0]:
            now = previous[0] + 1e-6
        conn.execute(
            "UPDATE mental_models SET content = ?, structured = ?, last_refreshed_at = ? WHERE id = ?",
            (content, dumps(structured) if structured is not None else None, now, model_id),
        )
    return from_epoch(now)


def new_operation(conn: sqlite3.Connection, *, kind: str, target: str | None) -> Operation:
    op_id = uuid.uuid4().hex
    with Store.write(conn):
        conn.execute(
            "INSERT INTO operations(id, kind, target, status, created_at) VALUES (?, ?, ?, 'pending', ?)",
            (op_id, kind, target, to_epoch(utcnow())),
        )
    found = get_operation(conn, op_id)
    assert found is not None
    return found


def set_operation(
    conn: sqlite3.Connection, op_id: str, status: OperationStatus, error: str | None = None
) -> None:
    finished = to_epoch(utcnow()) if status in ("completed", "failed") else None
    with Store.write(conn):
        conn.execute(
            "UPDATE operations SET status = ?, error = ?, finished_at = ? WHERE id = ?",
            (status, error, finished, op_id),
        )


def get_operation(conn: sqlite3.Connection, op_id: str) -> Operation | None:
    row = conn.execute(f"SELECT {_OPERATION_COLUMNS} FROM operations WHERE id = ?", (op_id,)).fetchone()
    return _operation(row) if row else None


def fail_orphaned_operations(conn: sqlite3.Connection, *, older_than_s: float) -> None:
    """Operations left running by a process that died never finish: say so instead of hanging pollers."""
    cutoff = to_epoch(utcnow()) - older_than_s
    with Store.write(conn):
        conn.execute(
            "UPDATE operations SET status = 'failed', error = 'interrupted: the process running it stopped', "
            "finished_at = ? WHERE status IN ('pending', 'running') AND created_at < ?",
            (to_epoch(utcnow()), cutoff),
        )


def save_config(conn: sqlite3.Connection, bank_id: str, config: BankConfig) -> None:
    with Store.write(conn):
        conn.execute(
            "INSERT INTO bank_config(bank_id, mission, directives, dispositions) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(bank_id) DO UPDATE SET mission = excluded.mission, "
            "directives = excluded.directives, dispositions = excluded.dispositions",
            (bank_id, config.mission, dumps(config.directives), dumps(config.dispositions)),
        )


def load_config(conn: sqlite3.Connection, bank_id: str) -> BankConfig:
    row = conn.execute(
        "SELECT mission, directives, dispositions FROM bank_config WHERE bank_id = ?", (bank_id,)
    ).fetchone()
    if row is None:
        return default_bank_config()
    return BankConfig(mission=row[0], directives=json.loads(row[1]), dispositions=json.loads(row[2]))
