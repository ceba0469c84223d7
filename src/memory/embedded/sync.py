"""Keeping the in-memory vector index in step with the SQLite file.

Every write bumps the ``seq`` counter, so catching up loads only the documents written since the index
last looked, by this process or another; the first use loads every vector in one pass, and vectors a
different embedding model made are recomputed once, first.
"""

import json
import sqlite3

import numpy as np

from memory.embedded import items as item_vectors
from memory.embedded.index import VectorIndex
from memory.embedded.store import IndexRow, Store
from memory.embedder import Embedder

REEMBED_BATCH = 256


def catch_up(conn: sqlite3.Connection, *, index: VectorIndex, embedder: Embedder) -> None:
    """Bring the in-memory index up to date with the file (first use: a bulk load)."""
    row = conn.execute("SELECT value FROM counters WHERE name = 'seq'").fetchone()
    latest = int(row[0]) if row else 0
    with index.lock:
        if not index.loaded:
            _reembed_stale(conn, embedder)
            item_vectors.backfill(conn, embedder)
            _bulk_load(conn, index, embedder.dimension)
        elif latest > index.seq:
            rows = conn.execute(
                "SELECT d.id, d.tags, d.ts, v.vector, d.seq FROM documents AS d "
                "JOIN vectors AS v ON v.doc = d.id WHERE d.seq > ?",
                (index.seq,),
            )
            index.apply(
                IndexRow(
                    id=r[0],
                    tags=tuple(json.loads(r[1])),
                    ts=r[2],
                    vector=np.frombuffer(r[3], np.float32),
                    seq=r[4],
                )
                for r in rows
            )


def _reembed_stale(conn: sqlite3.Connection, embedder: Embedder) -> None:
    """Vectors made by another model (an upgrade, a different embedder) are recomputed once."""
    model_id = embedder.model_id
    while True:
        stale = conn.execute(
            "SELECT v.doc, d.content FROM vectors AS v JOIN documents AS d ON d.id = v.doc "
            "WHERE v.model_id < ? OR v.model_id > ? LIMIT ?",
            (model_id, model_id, REEMBED_BATCH),
        ).fetchall()
        if not stale:
            return
        vectors = embedder.embed([content for _, content in stale])
        with Store.write(conn):
            conn.executemany(
                "UPDATE vectors SET vector = ?, model_id = ? WHERE doc = ?",
                [(v.tobytes(), model_id, doc) for (doc, _), v in zip(stale, vectors, strict=True)],
            )


def _bulk_load(conn: sqlite3.Connection, index: VectorIndex, dim: int) -> None:
    """Every vector into the matrix: two sequential scans in one read transaction."""
    conn.execute("BEGIN")
    try:
        rows = conn.execute("SELECT id, tags, ts, seq FROM documents ORDER BY id").fetchall()
        blobs = [r[0] for r in conn.execute("SELECT vector FROM vectors ORDER BY doc")]
    finally:
        conn.execute("COMMIT")
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    ts = np.fromiter((r[2] for r in rows), dtype=np.float64, count=len(rows))
    vectors = np.frombuffer(bytearray().join(blobs), dtype=np.float32).reshape(len(rows), dim)
    parsed: dict[str, tuple[str, ...]] = {}
    tags = [parsed.get(r[1]) or parsed.setdefault(r[1], tuple(json.loads(r[1]))) for r in rows]
    seq = max((r[3] for r in rows), default=0)
    index.load(ids, vectors, ts, tags, seq)
