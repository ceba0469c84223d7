"""The worker's task list: each package's due work, wired to this process's container."""

from web.container import Container
from web.worker import Task, Worker


def build_worker(container: Container) -> Worker:
    tasks: list[Task] = []
    return Worker(tasks, poll_s=container.settings.web.worker_poll_s)
