"""The worker process that takes CPU-bound request work off the server's interpreter."""

import asyncio
import os
from collections.abc import Iterator

import pytest

from web.app.offload import NICENESS, Offload, WorkerDied


@pytest.fixture
def offload() -> Iterator[Offload]:
    worker = Offload()
    yield worker
    worker.close()


def test_a_call_runs_in_another_process_at_a_lower_priority(offload: Offload) -> None:
    async def both() -> tuple[int, int]:
        return await offload.call(os.getpid), await offload.call(os.nice, 0)

    pid, niceness = asyncio.run(both())
    assert pid != os.getpid()
    assert niceness >= min(19, os.nice(0) + NICENESS)


def test_the_same_worker_takes_the_next_call(offload: Offload) -> None:
    async def twice() -> set[int]:
        return {await offload.call(os.getpid), await offload.call(os.getpid)}

    assert len(asyncio.run(twice())) == 1


def test_a_worker_that_dies_is_reported_and_replaced(offload: Offload) -> None:
    async def die_then_call() -> int:
        with pytest.raises(WorkerDied):
            await offload.call(os._exit, 1)
        return await offload.call(os.getpid)

    assert asyncio.run(die_then_call()) != os.getpid()
