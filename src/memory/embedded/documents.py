"""Reading and writing document rows of the embedded bank's file."""

import sqlite3
import time
from collections.abc import Mapping

import numpy as np

from memory.bank import RecalledIncident
from memory.embedded import items as item_vectors
from memory.embedded.store import (
    DOCUMENT_COLUMNS,
    Draft,
    Store,
    StoredDocument,
    dumps,
    row_to_document,
    scope_words,
    to_epoch,
)
from memory.schema import RecordFormatError, parse_record, tag_value


def upsert_document(
    conn: sqlite3.Connection,
    *,
    draft: Draft,
    vector: np.ndarray,
    model_id: str,
    items: Mapping[str, np.ndarray],
) -> None:
    """Insert or replace one document (inside the caller's write transaction), with a fresh seq, and
    the vectors of its items that were not stored yet (``items``: every other one already is)."""
    seq = Store.next_seq(conn)
    doc = conn.execute(
        "INSERT INTO documents"
        "(document_id, seq, ts, kind, tags, metadata, context, updated_at, content, scope) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(document_id) DO UPDATE SET seq = excluded.seq, ts = excluded.ts, kind = excluded.kind, "
        "tags = excluded.tags, metadata = excluded.metadata, context = excluded.context, "
        "updated_at = excluded.updated_at, content = excluded.content, scope = excluded.scope RETURNING id",
        (
            draft.document_id,
            seq,
            to_epoch(draft.timestamp),
            tag_value(draft.tags, "kind"),
            dumps(draft.tags),
            dumps(draft.metadata),
            draft.context,
            time.time(),
            draft.content,
            scope_words(draft.tags),
        ),
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO vectors(doc, model_id, vector, items_model) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(doc) DO UPDATE SET model_id = excluded.model_id, vector = excluded.vector, "
        "items_model = excluded.items_model",
        (
            doc,
            model_id,
            np.ascontiguousarray(vector, dtype=np.float32).tobytes(),
            item_vectors.marker(model_id),
        ),
    )
    item_vectors.write(conn, items, model_id)
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
