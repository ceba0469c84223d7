"""Item vectors in the embedded bank's file: each record's steps and failed attempts, embedded once.

A record's items (``memory.items``) are embedded when the record is written, in the same embedding
call as the record and in the same transaction; an item key already stored is not embedded again, so
the records of one failure mode share their items' vectors. Documents written before items were
stored (``vectors.items_model`` is ``NULL``) or by another model are backfilled when the bank opens.
"""

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from memory.embedded.store import Store
from memory.embedder import Embedder
from memory.items import record_items
from memory.schema import RecordFormatError, parse_record

BACKFILL_BATCH = 256
_LOOKUP_CHUNK = 500  # keys per query, under SQLite's variable limit


def item_keys(content: str) -> list[str]:
    """The item keys of a stored text: none when it is not a labeled record (a runbook, a note)."""
    try:
        return record_items(parse_record(content))
    except RecordFormatError:
        return []


def stored(conn: sqlite3.Connection, keys: Iterable[str], model_id: str) -> dict[str, np.ndarray]:
    """The vectors stored under these keys by this model."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(wanted), _LOOKUP_CHUNK):
        chunk = wanted[start : start + _LOOKUP_CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT key, vector FROM item_vectors WHERE model_id = ? AND key IN ({marks})",
            [model_id, *chunk],
        )
        found.update((key, np.frombuffer(blob, np.float32)) for key, blob in rows)
    return found


def missing(conn: sqlite3.Connection, keys: Iterable[str], model_id: str) -> list[str]:
    """The keys this model has no vector for yet, each once."""
    wanted = list(dict.fromkeys(keys))
    have = stored(conn, wanted, model_id)
    return [k for k in wanted if k not in have]


def write(conn: sqlite3.Connection, vectors: Mapping[str, np.ndarray], model_id: str) -> None:
    """Store item vectors (inside the caller's write transaction)."""
    conn.executemany(
        "INSERT INTO item_vectors(key, model_id, vector) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET model_id = excluded.model_id, vector = excluded.vector",
        [(k, model_id, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()],
    )


def embed_with_items(
    conn: sqlite3.Connection, embedder: Embedder, contents: Sequence[str]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The contents' vectors and the vectors of their items not stored yet, from one embedding call."""
    new = missing(conn, (k for c in contents for k in item_keys(c)), embedder.model_id)
    vectors = embedder.embed([*contents, *new]) if contents or new else np.empty((0, embedder.dimension))
    return vectors[: len(contents)], dict(zip(new, vectors[len(contents) :], strict=True))


def backfill(conn: sqlite3.Connection, embedder: Embedder) -> None:
    """Embed the items of documents stored without them (or by another model), in batches."""
    model_id = embedder.model_id
    while True:
        pending = conn.execute(
            "SELECT v.doc, d.content FROM vectors AS v JOIN documents AS d ON d.id = v.doc "
            "WHERE v.items_model IS NULL OR v.items_model < ? OR v.items_model > ? LIMIT ?",
            (model_id, model_id, BACKFILL_BATCH),
        ).fetchall()
        if not pending:
            return
        new = missing(conn, (k for _, content in pending for k in item_keys(content)), model_id)
        vectors = embedder.embed(new) if new else np.empty((0, embedder.dimension), dtype=np.float32)
        with Store.write(conn):
            write(conn, dict(zip(new, vectors, strict=True)), model_id)
            conn.executemany(
                "UPDATE vectors SET items_model = ? WHERE doc = ?", [(model_id, doc) for doc, _ in pending]
            )
