"""Many connections opening one new SQLite file at once all end in WAL mode; none is turned away."""

import sqlite3
import threading
from pathlib import Path

import pytest

from incidents.sqlite_wal import use_wal


@pytest.mark.parametrize("run", range(5))
def test_connections_racing_to_open_a_new_file_all_switch_it_to_wal(tmp_path: Path, run: int) -> None:
    path = tmp_path / f"new-{run}.db"
    start = threading.Barrier(8)
    modes: list[str] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        conn = sqlite3.connect(path, timeout=5, check_same_thread=False)
        try:
            start.wait()
            use_wal(conn, timeout_s=5)
            conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
            modes.append(conn.execute("PRAGMA journal_mode").fetchone()[0])
        except BaseException as exc:
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and modes == ["wal"] * 8


def test_a_file_held_past_the_timeout_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            use_wal(sqlite3.connect(path, timeout=0), timeout_s=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
