"""Reading and writing document rows of the embedded bank's file."""

import sqlite3
import time

import numpy as np

from memory.bank import RecalledIncident
from memory.embedded.store import (
    DOCUMENT_COLUMNS,
    Draft,
    Store,
    StoredDocument,
    dumps,
    row_to_document,
    to_epoch,
)
from memory.schema import RecordFormatError, parse_record, tag_value


def upsert_document(conn: sqlite3.Connection, *, draft: Draft, vector: np.ndarray, model_id: str) -> None:
    """Insert or replace one document (inside the caller's write transaction), with a fresh seq."""
    seq = Store.next_seq(conn)
    doc = conn.execute(
        "INSERT INTO documents(document_id, content, tags, metadata, ts, context, kind, vector, "
        "model_id, seq, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(document_id) DO UPDATE SET content = excluded.content, tags = excluded.tags, "
        "metadata = excluded.metadata, ts = excluded.ts, context = excluded.context, "
        "kind = excluded.kind, vector = excluded.vector, model_id = excluded.model_id, "
        "seq = excluded.seq, updated_at = excluded.updated_at RETURNING id",
        (
            draft.document_id,
            draft.content,
            dumps(draft.tags),
            dumps(draft.metadata),
            to_epoch(draft.timestamp),
            draft.context,
            tag_value(draft.tags, "kind"),
            np.ascontiguousarray(vector, dtype=np.float32).tobytes(),
            model_id,
            seq,
            time.time(),
        ),
    ).fetchone()[0]
    conn.execute("DELETE FROM document_tags WHERE doc = ?", (doc,))
    conn.executemany("INSERT INTO document_tags(tag, doc) VALUES (?, ?)", [(t, doc) for t in draft.tags])


def fetch_by_document_id(conn: sqlite3.Connection, *, document_id: str) -> StoredDocument | None:
    row = conn.execute(
        f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE document_id = ?", (document_id,)
    ).fetchone()
    return row_to_document(row) if row else None


def fetch_by_ids(conn: sqlite3.Connection, ids: list[int]) -> dict[int, StoredDocument]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id IN ({marks})", ids)
    return {doc.id: doc for doc in map(row_to_document, rows)}


def recalled(doc: StoredDocument, score: float, ranks: dict[str, int]) -> RecalledIncident:
    try:
        record = parse_record(doc.content)
    except RecordFormatError:
        record = None  # runbooks and appended notes are recalled as text
    return RecalledIncident(
        id=doc.document_id,
        text=doc.content,
        record=record,
        score=score,
        why=ranks,
        tags=doc.tags,
        metadata=doc.metadata,
        timestamp=doc.timestamp,
    )
