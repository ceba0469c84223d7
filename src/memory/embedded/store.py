"""The embedded driver's SQLite file: documents, tags, the FTS5 index, mental models, operations, config.

One file (``memory.db``) shared by the web app, the worker and the CLI. WAL lets readers run beside a
writer; the busy timeout is the memory timeout, after which a locked file becomes ``MemoryUnavailable``.
Every write stamps the document with a fresh ``seq`` so another process can load exactly what changed.

Layout 3 added the vectors of record items (``memory.items``): ``item_vectors`` holds one vector per
item key, and ``vectors.items_model`` says which model embedded a document's items (``NULL``: not yet,
so the bank backfills them when it opens). Layout 4 indexes the services beside the text (``FTS``). Files of
layouts 2 and 3 are migrated in place.
"""

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from incidents.sqlite_wal import use_wal
from memory.bank import DocumentWrite, MemoryUnavailable
from memory.schema import service_tag

SCHEMA_VERSION = 4
# The keyword index: the text, and the document's services as words of their own (``scope_words``), so
# a search within a service has FTS5 rank only that service's rows (``memory.embedded.search``); df per
# column, so a service's word never counts as the text's.
FTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(content, scope, content='documents', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS documents_vocab USING fts5vocab(documents_fts, 'col')",
    """CREATE TRIGGER IF NOT EXISTS documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts(rowid, content, scope) VALUES (new.id, new.content, new.scope);
END""",
    """CREATE TRIGGER IF NOT EXISTS documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, content, scope)
        VALUES ('delete', old.id, old.content, old.scope);
END""",
    """CREATE TRIGGER IF NOT EXISTS documents_au AFTER UPDATE OF content, scope ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, content, scope)
        VALUES ('delete', old.id, old.content, old.scope);
    INSERT INTO documents_fts(rowid, content, scope) VALUES (new.id, new.content, new.scope);
END""",
)
SCOPE_TAG = service_tag("")  # the prefix every service tag has


def scope_word(tag: str) -> str:
    """A service tag as one word of the keyword index: its UTF-8 bytes in hex, as SQLite's ``hex()``
    writes them, so the migration can compute it too."""
    return "s" + tag.encode().hex().upper()


def scope_words(tags: list[str]) -> str:
    """The words of a document's ``scope`` column: one per service tag, so every record adds the same
    length to BM25's and no other tag (a severity, a resolution kind) moves its ranking."""
    return " ".join(scope_word(tag) for tag in tags if tag.startswith(SCOPE_TAG))


APPEND_SEPARATOR = "\n\n"
SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    document_id TEXT NOT NULL UNIQUE,
    seq INTEGER NOT NULL,
    ts REAL NOT NULL,
    kind TEXT,
    tags TEXT NOT NULL,
    metadata TEXT NOT NULL,
    context TEXT,
    updated_at REAL NOT NULL,
    content TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS vectors (
    doc INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    model_id TEXT NOT NULL,
    vector BLOB NOT NULL,
    items_model TEXT
);
CREATE INDEX IF NOT EXISTS vectors_model ON vectors(model_id);
CREATE TABLE IF NOT EXISTS item_vectors (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_seq ON documents(seq);
CREATE TABLE IF NOT EXISTS document_tags (
    tag TEXT NOT NULL,
    doc INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    PRIMARY KEY (tag, doc)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS document_tags_doc ON document_tags(doc, tag);
{fts}
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS mental_models (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    source_query TEXT NOT NULL,
    tags TEXT NOT NULL,
    content TEXT NOT NULL DEFAULT '',
    structured TEXT,
    last_refreshed_at REAL
);
CREATE TABLE IF NOT EXISTS operations (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    target TEXT,
    status TEXT NOT NULL,
    error TEXT,
    created_at REAL NOT NULL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS bank_config (
    bank_id TEXT PRIMARY KEY,
    mission TEXT NOT NULL,
    directives TEXT NOT NULL,
    dispositions TEXT NOT NULL
);
""".replace("{fts}", ";\n".join(FTS) + ";")
# From layout 2: item vectors, backfilled when the bank opens.
MIGRATE_2_TO_3 = (
    "ALTER TABLE vectors ADD COLUMN items_model TEXT",
    "CREATE TABLE IF NOT EXISTS item_vectors "
    "(key TEXT PRIMARY KEY, model_id TEXT NOT NULL, vector BLOB NOT NULL)",
)
# From layout 3: the documents' services are indexed beside their text, and the index rebuilt.
MIGRATE_3_TO_4 = (
    "ALTER TABLE documents ADD COLUMN scope TEXT NOT NULL DEFAULT ''",
    "UPDATE documents SET scope = coalesce((SELECT group_concat('s' || hex(t.value), ' ') "
    f"FROM json_each(documents.tags) AS t WHERE t.value GLOB '{SCOPE_TAG}*'), '')",
    "DROP TRIGGER IF EXISTS documents_ai",
    "DROP TRIGGER IF EXISTS documents_ad",
    "DROP TRIGGER IF EXISTS documents_au",
    "DROP TABLE IF EXISTS documents_vocab",
    "DROP TABLE IF EXISTS documents_fts",
    *FTS,
    "INSERT INTO documents_fts(documents_fts) VALUES ('rebuild')",
)
MIGRATIONS = {2: (*MIGRATE_2_TO_3, *MIGRATE_3_TO_4), 3: MIGRATE_3_TO_4}

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Document:
    """What a document holds, about to be written or stored."""

    document_id: str
    content: str
    tags: list[str]
    metadata: dict[str, str]
    timestamp: datetime
    context: str | None

    def as_write(self) -> DocumentWrite:
        """The write that stores this document again, in any bank."""
        return DocumentWrite(
            document_id=self.document_id,
            content=self.content,
            tags=list(self.tags),
            metadata=dict(self.metadata),
            timestamp=self.timestamp,
            context=self.context,
        )


@dataclass(frozen=True)
class StoredDocument(Document):
    """A stored document: its row id, and the sequence number of its last write."""

    id: int
    seq: int


@dataclass(frozen=True)
class Draft(Document):
    """A document about to be written."""

    def appended_to(self, base: StoredDocument) -> "Draft":
        """Append mode: the text grows, tags are united, newer metadata wins."""
        return Draft(
            document_id=self.document_id,
            content=base.content + APPEND_SEPARATOR + self.content,
            tags=list(dict.fromkeys([*base.tags, *self.tags])),
            metadata={**base.metadata, **self.metadata},
            timestamp=self.timestamp,
            context=self.context,
        )


@dataclass(frozen=True)
class IndexRow:
    """What the in-memory index needs of a document: no text, just position data."""

    id: int
    tags: tuple[str, ...]
    ts: float
    vector: np.ndarray
    seq: int


def to_epoch(value: datetime) -> float:
    return value.timestamp()


def from_epoch(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


class Store:
    """Thread-local connections to one SQLite file; every failure to reach it is ``MemoryUnavailable``."""

    def __init__(self, path: Path, *, timeout_s: float) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._initialized = False
        self._init_lock = threading.Lock()
        self._active = 0  # work running on a connection; close() waits for it
        self._idle = threading.Condition()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        if not self._initialized:
            with self._init_lock:
                if not self._initialized:
                    use_wal(conn, timeout_s=self.timeout_s)  # persists in the file: once per store
                    self._create_schema(conn)
                    self._initialized = True
        return conn

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise MemoryUnavailable(f"{self.path} has schema {version}, newer than this release")
        if version in MIGRATIONS:
            self._migrate(conn, MIGRATIONS[version])
            return
        if 0 < version < SCHEMA_VERSION:
            raise MemoryUnavailable(
                f"{self.path} has the pre-release layout {version}: move it aside and re-seed"
            )
        if version < SCHEMA_VERSION:
            try:
                conn.executescript(
                    f"BEGIN IMMEDIATE;\n{SCHEMA}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;"
                )
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    @staticmethod
    def _migrate(conn: sqlite3.Connection, statements: tuple[str, ...]) -> None:
        """Run ``statements`` and stamp the current layout, all or nothing. Two processes opening an old
        file at once take the write lock in turn, and the second finds the layout already current."""
        try:
            conn.execute("BEGIN IMMEDIATE")
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                for statement in statements:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` on this thread's connection, mapping any SQLite failure to ``MemoryUnavailable``."""
        with self._idle:
            self._active += 1
        try:
            return work(self.connection())
        except sqlite3.Error as exc:
            raise MemoryUnavailable(f"embedded memory at {self.path}: {exc}") from exc
        except OSError as exc:
            raise MemoryUnavailable(f"embedded memory at {self.path}: {exc}") from exc
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    @staticmethod
    @contextmanager
    def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """An IMMEDIATE transaction: takes the write lock up front so a busy file fails fast and whole."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @staticmethod
    def next_seq(conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "INSERT INTO counters(name, value) VALUES ('seq', 1) "
            "ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value"
        ).fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close every connection once no work is running on one.

        Closing a connection another thread is using crashes the interpreter inside SQLite, so work
        still running after the wait keeps its connection (left to the garbage collector) instead.
        """
        with self._idle:
            if not self._idle.wait_for(lambda: self._active == 0, timeout=self.timeout_s + 5):
                log.warning("embedded memory closed with work still running", extra={"path": str(self.path)})
                self._local = threading.local()
                return
            with self._connections_lock:
                for conn in self._connections:
                    conn.close()
                self._connections.clear()
            self._local = threading.local()


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def row_to_document(row: sqlite3.Row | tuple[Any, ...]) -> StoredDocument:
    id_, document_id, content, tags, metadata, ts, context, seq = row
    return StoredDocument(
        id=id_,
        document_id=document_id,
        content=content,
        tags=json.loads(tags),
        metadata=json.loads(metadata),
        timestamp=from_epoch(ts),
        context=context,
        seq=seq,
    )


DOCUMENT_COLUMNS = "id, document_id, content, tags, metadata, ts, context, seq"
