"""Where alert intake's transactions run: one thread on SQLite, side by side elsewhere."""

import asyncio
import threading
from pathlib import Path

from sqlalchemy import create_engine

from web.app.write_thread import WriteThread


def _overlap_probe() -> tuple[list[str], list[int], object]:
    threads: list[str] = []
    running: list[int] = []
    lock = threading.Lock()
    state = {"now": 0}

    def call(i: int) -> int:
        with lock:
            state["now"] += 1
            running.append(state["now"])
            threads.append(threading.current_thread().name)
        threading.Event().wait(0.005)  # long enough for a second call to start beside it, were it allowed
        with lock:
            state["now"] -= 1
        return i

    return threads, running, call


def test_on_sqlite_calls_run_one_at_a_time_in_one_thread_in_order(tmp_path: Path) -> None:
    writer = WriteThread(create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}"))
    threads, running, call = _overlap_probe()

    async def main() -> list[int]:
        return list(await asyncio.gather(*(writer.run(call, i) for i in range(8))))  # type: ignore[arg-type]

    try:
        assert asyncio.run(main()) == list(range(8))
    finally:
        writer.close()
    assert max(running) == 1
    assert len(set(threads)) == 1 and threads[0] != threading.main_thread().name


def test_elsewhere_calls_run_side_by_side() -> None:
    writer = WriteThread(create_engine("postgresql+psycopg://nobody@127.0.0.1:9/none"))  # never connected
    both = threading.Barrier(2, timeout=10)

    async def main() -> list[int]:
        return list(await asyncio.gather(*(writer.run(both.wait) for _ in range(2))))

    assert sorted(asyncio.run(main())) == [0, 1]  # one thread alone would break the barrier
    writer.close()


def test_close_lets_the_queued_calls_finish(tmp_path: Path) -> None:
    writer = WriteThread(create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}"))
    done: list[int] = []

    async def main() -> None:
        calls = [asyncio.ensure_future(writer.run(done.append, i)) for i in range(5)]
        await asyncio.sleep(0)  # the calls are handed to the thread
        writer.close()
        await asyncio.gather(*calls)

    asyncio.run(main())
    assert done == [0, 1, 2, 3, 4]
