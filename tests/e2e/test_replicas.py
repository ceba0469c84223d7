"""Two real replicas on one PostgreSQL and one real Hindsight server, as docs/deploy.md describes.

Sessions and the sign-in throttle live in the database, so signing out on one replica ends the
session on the other, and guesses spread over both count against one allowance.

Replica A reaches Hindsight through a proxy that can hold its memory calls; replica B talks to the
server directly. Holding A's recalls (then its retains) freezes A while it holds a leased briefing job
(then leased outbox rows), so the test knows which work A holds when it kills A with SIGKILL, and
measures how long B takes to claim it. Both replicas start at the same moment and migrate the empty
database at once (the advisory lock makes them take turns).
"""

import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func, select

from evals.bench.soak import POST_MORTEM, alert_payload
from incidents.alerts.models import Alert
from incidents.briefings.models import Briefing, Job
from incidents.database import make_engine
from incidents.incident.models import Incident
from incidents.resolution.models import OutboxEntry
from tests.e2e.resolution_helpers import issue_token
from tests.support.hindsight import HindsightServer
from tests.support.holding_proxy import HoldingProxy, holding_proxy
from tests.support.net import wait_for
from tests.support.server import LiveServer

pytestmark = [pytest.mark.e2e, pytest.mark.hindsight, pytest.mark.postgres]

LEASE_S = 10.0  # the default RECALLOPS_LEASE_S
TAKEOVER_LIMIT_S = 15.0
RECALL = r"^POST /v1/default/banks/[^/]+/memories/recall"
RETAIN = r"^POST /v1/default/banks/[^/]+/memories(\?|$)"


@dataclass
class Deployment:
    a: LiveServer
    b: LiveServer
    proxy: HoldingProxy
    engine: Engine
    token: str
    bank_id: str
    accepted: set[str] = field(default_factory=set)

    @property
    def replicas(self) -> list[LiveServer]:
        return [self.a, self.b]

    def http(self, server: LiveServer) -> httpx.Client:
        return httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    def post_alert(self, run: str, i: int, groups: int, order: list[LiveServer]) -> str:
        """Post alert ``i`` to the first replica that answers, as a balancer retrying would."""
        for server in order:
            try:
                with self.http(server) as http:
                    response = http.post("/api/v1/alerts/alertmanager", json=alert_payload(run, i, groups))
            except httpx.TransportError:
                continue
            assert response.status_code == 200, response.text
            [alert] = response.json()["alerts"]
            self.accepted.add(alert["fingerprint"])
            return str(alert["incident"])
        raise AssertionError(f"no replica accepted alert {i}")

    def scalar(self, query: Any) -> Any:
        with self.engine.connect() as conn:
            return conn.execute(query).scalar()

    def rows(self, query: Any) -> list[Any]:
        with self.engine.connect() as conn:
            return list(conn.execute(query).all())


@pytest.fixture
def deployment(database_url: str, hindsight: HindsightServer, tmp_path: Path) -> Iterator[Deployment]:
    bank_id = f"replicas-{uuid.uuid4().hex[:10]}"
    common = {
        "RECALLOPS_DATABASE_URL": database_url,
        "RECALLOPS_MEMORY": "hindsight",
        "RECALLOPS_BANK_ID": bank_id,
        "RECALLOPS_SECRET_KEY": uuid.uuid4().hex,
    }
    with holding_proxy(hindsight.url) as proxy:
        a = LiveServer(
            tmp_path / "a",
            env={
                **common,
                "HINDSIGHT_BASE_URL": proxy.url,
                "RECALLOPS_MEMORY_TIMEOUT_S": "120",
                # One job at a time, so a held recall pins exactly one briefing job on A.
                "RECALLOPS_BRIEFING_CONCURRENCY": "1",
                "RECALLOPS_MEMORY_WRITE_CONCURRENCY": "1",
            },
        )
        b = LiveServer(tmp_path / "b", env={**common, "HINDSIGHT_BASE_URL": hindsight.url})
        engine = make_engine(database_url)
        try:
            for server in (a, b):
                server.launch()
            for server in (a, b):
                server.wait_up(timeout=120)
            yield Deployment(a, b, proxy, engine, issue_token(a), bank_id)
        finally:
            for server in (a, b):
                server.stop()
            engine.dispose()


def briefings_per_incident(deployment: Deployment) -> dict[str, int]:
    rows = deployment.rows(
        select(Incident.public_id, func.count(Briefing.id))
        .outerjoin(Briefing, Briefing.incident_id == Incident.id)
        .group_by(Incident.public_id)
    )
    return {public_id: count for public_id, count in rows}


def jobs_idle(deployment: Deployment) -> bool:
    busy = deployment.scalar(select(func.count(Job.id)).where(Job.state.in_(("pending", "running"))))
    return busy == 0


def job_held_by_a(deployment: Deployment) -> tuple[int, int] | None:
    """The job A is stuck on: A's recall is held at the proxy, and B has finished everything else.

    A's worker takes one job at a time, so while its recall waits A holds exactly one running job;
    once nothing is pending and one job is running, that job is A's.
    """
    if deployment.proxy.held < 1:
        return None
    rows = deployment.rows(
        select(Job.id, Job.attempts, Job.state).where(Job.state.in_(("pending", "running")))
    )
    if len(rows) != 1 or rows[0].state != "running":
        return None
    return int(rows[0].id), int(rows[0].attempts)


class Stream:
    """Alerts posted to the replicas in turn from a thread, until stopped: the storm a kill lands in."""

    def __init__(self, deployment: Deployment, run: str, groups: int) -> None:
        self.deployment, self.run, self.groups = deployment, run, groups
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._post, daemon=True)
        self.error: BaseException | None = None

    def _post(self) -> None:
        replicas = self.deployment.replicas
        try:
            while not self._stop.wait(0.1):
                order = replicas[self.sent % 2 :] + replicas[: self.sent % 2]
                self.deployment.post_alert(self.run, self.sent, self.groups, order)
                self.sent += 1
        except BaseException as exc:
            self.error = exc

    def __enter__(self) -> "Stream":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        assert self.error is None, self.error


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_two_replicas_share_work_without_loss_or_duplicates_and_take_over_a_killed_ones_leases(
    deployment: Deployment, hindsight: HindsightServer
) -> None:
    a, b = deployment.a, deployment.b

    # Alerts posted alternately, eight senders at once: one incident per group, one briefing each.
    run, groups, per_group = uuid.uuid4().hex[:6], 6, 5
    with ThreadPoolExecutor(8) as pool:
        posts = [
            pool.submit(deployment.post_alert, run, i, groups, [a, b] if i % 2 == 0 else [b, a])
            for i in range(groups * per_group)
        ]
    for post in posts:
        post.result()
    incidents = deployment.rows(select(Incident.service, Incident.public_id, Incident.alert_count))
    assert sorted(service for service, _, _ in incidents) == sorted(f"soak-{run}-{g}" for g in range(groups))
    assert {count for _, _, count in incidents} == {per_group}
    wait_for(lambda: jobs_idle(deployment), timeout=120, what="every briefing job done")
    assert set(briefings_per_incident(deployment).values()) == {1}

    # Resolves on both replicas: exactly one memory record each.
    resolved = [public_id for _, public_id, _ in incidents]
    for n, public_id in enumerate(resolved):
        with deployment.http(deployment.replicas[n % 2]) as http:
            response = http.post(f"/api/v1/incidents/{public_id}/resolve", json=POST_MORTEM)
            assert response.status_code == 201, response.text
    wait_for(lambda: synced(deployment) == len(resolved), timeout=120, what="every record in memory")
    assert Counter(d["id"] for d in hindsight.documents(deployment.bank_id)) == Counter(resolved)

    # A killed mid-stream while it holds a briefing job: B claims the job within the lease.
    deployment.proxy.hold(RECALL)
    with Stream(deployment, uuid.uuid4().hex[:6], groups=8) as stream:
        job_id, attempts = wait_for(
            lambda: job_held_by_a(deployment), timeout=120, interval=0.2, what="A stuck on a briefing job"
        )
        killed_at = time.monotonic()
        a.kill()
        wait_for(
            lambda: deployment.scalar(select(Job.attempts).where(Job.id == job_id)) > attempts,
            timeout=LEASE_S + 10,
            interval=0.05,
            what=f"job {job_id} claimed by the other replica",
        )
        job_takeover_s = time.monotonic() - killed_at
        sent_at_kill = stream.sent
        wait_for(lambda: stream.sent >= sent_at_kill + 10, timeout=60, what="the stream to go on through B")
    deployment.proxy.release()
    wait_for(lambda: jobs_idle(deployment), timeout=120, what="every briefing job done after the kill")

    # A again, killed while it delivers a resolution to memory: B delivers the row within the lease.
    # Resolved through A one at a time until A's worker, not B's, claims one (its retain then waits).
    deployment.proxy.hold(RETAIN)
    a.start(timeout=120)
    open_now = [p for p, s in deployment.rows(select(Incident.public_id, Incident.status)) if s != "resolved"]
    held_row = None
    with deployment.http(a) as http:
        for public_id in open_now:
            response = http.post(f"/api/v1/incidents/{public_id}/resolve", json=POST_MORTEM)
            assert response.status_code == 201, response.text
            resolved.append(public_id)
            wait_for(
                lambda p=public_id: deployment.proxy.held >= 1 or outbox_row(deployment, p)[1] == "synced",
                timeout=60,
                what=f"{public_id} claimed",
            )
            if deployment.proxy.held >= 1:
                held_row = outbox_row(deployment, public_id)[0]
                break
    assert held_row is not None, "B claimed every resolution before A could"
    killed_at = time.monotonic()
    a.kill()
    wait_for(
        lambda: deployment.scalar(select(OutboxEntry.state).where(OutboxEntry.id == held_row)) == "synced",
        timeout=LEASE_S + 20,
        interval=0.05,
        what=f"outbox row {held_row} delivered by the other replica",
    )
    outbox_takeover_s = time.monotonic() - killed_at
    deployment.proxy.release()
    with deployment.http(b) as http:
        for public_id in open_now:
            if public_id not in resolved:
                response = http.post(f"/api/v1/incidents/{public_id}/resolve", json=POST_MORTEM)
                assert response.status_code == 201, response.text
                resolved.append(public_id)
    wait_for(lambda: synced(deployment) == len(resolved), timeout=120, what="every record in memory")

    print(
        f"\nfailover: briefing job taken over {job_takeover_s:.1f}s after SIGKILL, "
        f"memory outbox row delivered {outbox_takeover_s:.1f}s after SIGKILL (lease {LEASE_S:g}s)"
    )
    assert job_takeover_s <= TAKEOVER_LIMIT_S
    assert outbox_takeover_s <= TAKEOVER_LIMIT_S

    # Nothing lost, nothing twice: every accepted alert stored once, one incident per group, one
    # briefing per incident, one memory record per resolved incident.
    stored = Counter(f for (f,) in deployment.rows(select(Alert.fingerprint)))
    assert set(stored) == deployment.accepted and set(stored.values()) == {1}
    per_service = Counter(service for (service,) in deployment.rows(select(Incident.service)))
    assert set(per_service.values()) == {1}
    assert set(briefings_per_incident(deployment).values()) == {1}
    assert Counter(d["id"] for d in hindsight.documents(deployment.bank_id)) == Counter(resolved)


def outbox_row(deployment: Deployment, public_id: str) -> tuple[int, str]:
    query = select(OutboxEntry.id, OutboxEntry.state).join(Incident, Incident.id == OutboxEntry.incident_id)
    [(row_id, state)] = deployment.rows(query.where(Incident.public_id == public_id))
    return int(row_id), str(state)


def synced(deployment: Deployment) -> int:
    return int(deployment.scalar(select(func.count(OutboxEntry.id)).where(OutboxEntry.state == "synced")))


PASSWORD = "correct horse battery staple"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf(browser: httpx.Client, path: str) -> str:
    match = CSRF.search(browser.get(path).text)
    assert match, f"no CSRF token on {path}"
    return match.group(1)


def sign_in(browser: httpx.Client, name: str, password: str) -> httpx.Response:
    form = {"name": name, "password": password, "next": "/incidents", "csrf_token": csrf(browser, "/signin")}
    return browser.post("/signin", data=form)


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_sign_out_on_one_replica_ends_the_session_on_the_other_and_the_throttle_counts_across_both(
    deployment: Deployment,
) -> None:
    a, b = deployment.a, deployment.b
    for name in ("dana", "oncall"):
        done = a.cli("user", "add", name, "--role", "engineer", "--password", PASSWORD, check=False)
        assert done.returncode == 0, done.stderr

    with httpx.Client(base_url=a.url, timeout=30) as on_a, httpx.Client(base_url=b.url, timeout=30) as on_b:
        assert sign_in(on_a, "dana", PASSWORD).status_code == 303
        on_b.cookies = on_a.cookies  # the same browser, its next request balanced to B
        assert on_b.get("/incidents").status_code == 200
        copied = httpx.Cookies(on_a.cookies)
        response = on_b.post("/signout", data={"csrf_token": csrf(on_b, "/incidents")})
        assert response.status_code == 303
    with httpx.Client(base_url=a.url, cookies=copied, timeout=30) as replay:
        page = replay.get("/incidents")
        assert page.status_code == 303 and page.headers["location"].startswith("/signin")

    # Five wrong guesses spread over both replicas use up the name's allowance at this address:
    # the sixth try waits on either replica, even with the right password.
    guesses = [a, b, a, b, a]
    for server in guesses:
        with httpx.Client(base_url=server.url, timeout=30) as browser:
            assert sign_in(browser, "oncall", "wrong password!").status_code == 401
    for server in (a, b):
        with httpx.Client(base_url=server.url, timeout=30) as browser:
            refused = sign_in(browser, "oncall", PASSWORD)
            assert refused.status_code == 429, refused.text
            assert "Too many failed sign-ins" in refused.text
