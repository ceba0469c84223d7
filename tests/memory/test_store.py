"""The embedded store never closes a connection under running work (SQLite would crash the process)."""

import sqlite3
import threading
from pathlib import Path

from memory.embedded.store import Store


def test_close_waits_for_running_work(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db", timeout_s=5.0)
    started, release = threading.Event(), threading.Event()
    results: list[int] = []

    def slow_work(conn: sqlite3.Connection) -> int:
        started.set()
        release.wait(10)
        return conn.execute("SELECT 1").fetchone()[0]

    worker = threading.Thread(target=lambda: results.append(store.run(slow_work)))
    worker.start()
    assert started.wait(10)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive(), "close() returned while work was still running on a connection"
    release.set()
    worker.join(10)
    closer.join(10)
    assert results == [1]
    assert not closer.is_alive()


def test_store_reopens_after_close(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db", timeout_s=5.0)
    assert store.run(lambda conn: conn.execute("SELECT 1").fetchone()[0]) == 1
    store.close()
    assert store.run(lambda conn: conn.execute("SELECT 2").fetchone()[0]) == 2
    store.close()
