"""Schemathesis against a running server's own OpenAPI: whatever the intake and incident routes are
sent, they answer without a 5xx (on SQLite and on PostgreSQL, whose column limits SQLite ignores)."""

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e


@dataclass
class Target:
    server: LiveServer
    token: str


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fuzz_target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    env: dict[str, str] = {}
    if request.param == "postgres":
        base = request.getfixturevalue("postgres_url")
        name = f"fuzz_{secrets.token_hex(4)}"
        server_url = base.rsplit("/", 1)[0]
        with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        env["RECALLOPS_DATABASE_URL"] = f"{server_url}/{name}"
    server = LiveServer(Path(tmp_path_factory.mktemp("fuzz")), env=env).start()
    try:
        token = server.cli(
            "token",
            "create",
            "--name",
            "fuzz",
            "--scope",
            "alerts:write",
            "--scope",
            "incidents:write",
            "--scope",
            "read",
        ).stdout.strip()
        # A few real incidents, so some generated ids and filters hit rows.
        for n in range(3):
            httpx.post(
                f"{server.url}/api/v1/alerts",
                json={"title": f"seed {n}", "service": "checkout", "fingerprint": f"seed-{n}"},
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            ).raise_for_status()
        yield Target(server, token)
    finally:
        server.stop()


def operations(target: Target) -> list[schemathesis.APIOperation]:
    spec = httpx.get(f"{target.server.url}/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(spec).include(
        path_regex=r"^/(api/v1/(alerts|incidents)|v2/enqueue)"
    )
    found = [result.ok() for result in schema.get_all_operations()]
    assert len(found) >= 9, [op.label for op in found]
    return found


def test_no_server_errors(fuzz_target: Target) -> None:
    headers = {"Authorization": f"Bearer {fuzz_target.token}"}
    for operation in operations(fuzz_target):

        @given(case=operation.as_strategy())
        @settings(
            max_examples=15,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        def no_5xx(case: schemathesis.Case) -> None:
            case.call_and_validate(
                base_url=fuzz_target.server.url, headers=headers, checks=[not_a_server_error], timeout=30
            )

        no_5xx()

    # The generated payloads went past validation into storage, not only into 4xx answers.
    metrics = httpx.get(f"{fuzz_target.server.url}/metrics", timeout=10).text
    stored = [
        line for line in metrics.splitlines() if line.startswith('recallops_alerts_total{outcome="stored"')
    ]
    assert any(source in line for line in stored for source in ("alertmanager", "grafana", "pagerduty"))
