"""The worker's task list: each package's due work, wired to this process's container."""

from web.briefings import briefing_task
from web.container import Container
from web.memory_outbox import outbox_task
from web.profile import profile_task
from web.worker import Task, Worker


def build_worker(container: Container) -> Worker:
    tasks: list[Task] = []
    tasks.append(briefing_task(container))
    tasks.append(outbox_task(container))
    tasks.append(profile_task(container))
    return Worker(tasks, poll_s=container.settings.web.worker_poll_s)
