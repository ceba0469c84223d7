"""Putting a SQLite file in WAL mode when other connections may be opening it at the same moment.

Both SQLite stores (the incidents database and the embedded memory bank) read while one writes, so
both use WAL. The switch needs the file to itself, and SQLite answers "database is locked" at once
instead of calling the busy handler; two connections opening a new file together would fail one of
them. The switch is retried until the caller's timeout instead.
"""

import sqlite3

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed


def use_wal(conn: sqlite3.Connection, *, timeout_s: float) -> None:
    """Switch ``conn``'s file to WAL (it persists in the file), retrying while another holds it."""
    for attempt in Retrying(
        retry=retry_if_exception(_locked),
        stop=stop_after_delay(timeout_s),
        wait=wait_fixed(0.01),
        reraise=True,
    ):
        with attempt:
            conn.execute("PRAGMA journal_mode = WAL")


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
