"""The worker's lanes, wired to this process's container: one per kind of owed work.

Each lane has its own concurrency limit, thread, event loop and thread pool (``web.app.lanes``), so
a stuck chat receiver fills only the delivery lane and briefings go on. Each lane's depth, age of the
oldest item and in-flight count are in ``/metrics`` (``recallops_lane_*``) and on ``/readyz``.
"""

from collections.abc import Callable
from typing import Any

from web.app.briefings import briefing_lane
from web.app.confidence import refit_task
from web.app.container import Container
from web.app.grading import grading_task
from web.app.lanes import Lane, QueueLane, TaskLane
from web.app.memory_outbox import memory_lane
from web.app.metrics import LANE_DEPTH, LANE_IN_FLIGHT, LANE_OLDEST
from web.app.notify.deliver import delivery_lane
from web.app.profile import profile_task


def build_lanes(container: Container) -> list[Lane]:
    poll_s = container.settings.web.worker_poll_s
    return [
        briefing_lane(container),
        memory_lane(container),
        delivery_lane(container.sessions, container.notifier, poll_s=poll_s),
        TaskLane("profile", profile_task(container), poll_s=poll_s),
        TaskLane("grading", grading_task(container), poll_s=poll_s),
        TaskLane("confidence", refit_task(container), poll_s=poll_s),
    ]


def lane_status(lanes: list[Lane]) -> dict[str, dict[str, Any]]:
    """Each lane's figures for ``/readyz``: depth and oldest age (every replica), in flight (this one)."""
    status: dict[str, dict[str, Any]] = {}
    for lane in lanes:
        backlog = lane.backlog()
        status[lane.name] = {
            "concurrency": lane.concurrency,
            "in_flight": lane.in_flight,
            "depth": backlog.depth if backlog else None,
            "oldest_s": round(backlog.oldest_s, 3) if backlog else None,
        }
    return status


def track_lanes(lanes: list[Lane]) -> None:
    """The lane gauges, read at scrape time."""
    for lane in lanes:
        LANE_IN_FLIGHT.labels(lane=lane.name).set_function(_in_flight(lane))
        if isinstance(lane, QueueLane):
            LANE_DEPTH.labels(lane=lane.name).set_function(_figure(lane, "depth"))
            LANE_OLDEST.labels(lane=lane.name).set_function(_figure(lane, "oldest_s"))


def _in_flight(lane: Lane) -> Callable[[], float]:
    return lambda: float(lane.in_flight)


def _figure(lane: Lane, name: str) -> Callable[[], float]:
    def value() -> float:
        backlog = lane.backlog()
        return float("nan") if backlog is None else float(getattr(backlog, name))

    return value
