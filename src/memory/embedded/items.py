"""Item vectors in the embedded bank's file: the lines of each record and runbook, embedded once.

A document's items (``memory.items``) are embedded when the document is written, in the same
embedding call and in the same transaction; an item key already stored is not embedded again, so the
records of one failure mode share their items' vectors. ``vectors.items_model`` says which model and
which version of the items a document's are stored under (``marker``): a document written before items
were stored (``NULL``), by another model or under an earlier version is backfilled when the bank opens.
"""

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from memory.embedded.store import Store
from memory.embedder import Embedder
from memory.items import ITEMS_VERSION, document_items

BACKFILL_BATCH = 256
_LOOKUP_CHUNK = 500  # keys per query, under SQLite's variable limit


def marker(model_id: str) -> str:
    """What ``vectors.items_model`` holds once a document's items are stored by this model."""
    return f"{model_id}#items-{ITEMS_VERSION}"


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


def unchanged(
    conn: sqlite3.Connection, documents: Sequence[tuple[str, str]], model_id: str
) -> dict[tuple[str, str], np.ndarray]:
    """The stored vectors of the (document id, content) pairs stored with exactly that content, by this
    model and with their items current: writing such a document again needs no embedding."""
    wanted = list(dict.fromkeys(document_id for document_id, _ in documents))
    asked = set(documents)
    found: dict[tuple[str, str], np.ndarray] = {}
    for start in range(0, len(wanted), _LOOKUP_CHUNK):
        chunk = wanted[start : start + _LOOKUP_CHUNK]
        rows = conn.execute(
            "SELECT d.document_id, d.content, v.vector FROM documents AS d JOIN vectors AS v ON v.doc = d.id "
            f"WHERE v.model_id = ? AND v.items_model = ? AND d.document_id IN ({','.join('?' * len(chunk))})",
            [model_id, marker(model_id), *chunk],
        )
        found.update(
            ((document_id, content), np.frombuffer(blob, np.float32))
            for document_id, content, blob in rows
            if (document_id, content) in asked
        )
    return found


def embed_with_items(
    conn: sqlite3.Connection, embedder: Embedder, contents: Sequence[str]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The contents' vectors and the vectors of their items not stored yet, from one embedding call."""
    new = missing(conn, (k for c in contents for k in document_items(c)), embedder.model_id)
    vectors = embedder.embed([*contents, *new]) if contents or new else np.empty((0, embedder.dimension))
    return vectors[: len(contents)], dict(zip(new, vectors[len(contents) :], strict=True))


def backfill(conn: sqlite3.Connection, embedder: Embedder) -> None:
    """Embed the items of documents stored without them (or by another model), in batches."""
    model_id, stored_as = embedder.model_id, marker(embedder.model_id)
    while True:
        pending = conn.execute(
            "SELECT v.doc, d.content FROM vectors AS v JOIN documents AS d ON d.id = v.doc "
            "WHERE v.items_model IS NULL OR v.items_model < ? OR v.items_model > ? LIMIT ?",
            (stored_as, stored_as, BACKFILL_BATCH),
        ).fetchall()
        if not pending:
            return
        new = missing(conn, (k for _, content in pending for k in document_items(content)), model_id)
        vectors = embedder.embed(new) if new else np.empty((0, embedder.dimension), dtype=np.float32)
        with Store.write(conn):
            write(conn, dict(zip(new, vectors, strict=True)), model_id)
            conn.executemany(
                "UPDATE vectors SET items_model = ? WHERE doc = ?", [(stored_as, doc) for doc, _ in pending]
            )
