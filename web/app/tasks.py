"""The worker's task list: each package's due work, wired to this process's container."""

from web.app.briefings import briefing_task
from web.app.container import Container
from web.app.grading import grading_task
from web.app.memory_outbox import outbox_task
from web.app.notify.deliver import delivery_task
from web.app.profile import profile_task
from web.app.worker import Task, Worker


def build_worker(container: Container) -> Worker:
    tasks: list[Task] = []
    tasks.append(briefing_task(container))
    tasks.append(outbox_task(container))
    tasks.append(delivery_task(container.sessions, container.notifier))
    tasks.append(profile_task(container))
    tasks.append(grading_task(container))
    return Worker(tasks, poll_s=container.settings.web.worker_poll_s)
