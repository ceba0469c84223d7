"""No 5xx from bad input, on SQLite and on PostgreSQL (whose column limits and NUL refusal SQLite lacks).

Three passes against a running server:
1. schemathesis over every operation of its own OpenAPI schema, valid and invalid inputs (NUL in
   strings included), with a token holding every scope;
2. every operation again with hostile values on purpose: NUL and an unpaired surrogate's bytes in
   each path and query parameter, integers past 64 bits, bodies nested 100,000 deep, lone surrogates
   and huge numbers inside JSON;
3. the pages (not in the schema): every page route walked signed in, with the same hostile ids,
   filters, page numbers and form fields.
Each pass is bounded (examples per operation, requests per route), so both databases fit in minutes.
"""

import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e

PASSWORD = "fuzzing password 1"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
HOSTILE_PARAMS = ["A\x00B", "9" * 25, "-1", "\udcff", "\ud800x", "%ED%A0%80", "²"]
HOSTILE_BODIES: list[tuple[bytes, str]] = [
    (b"[" * 100_000, "application/json"),
    (b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "application/json"),
    (b'{"text": "\\ud800", "notes": "\\u0000", "title": "\\udfff"}', "application/json"),
    (b'{"text": 1e999999, "limit": 99999999999999999999999999, "commit": true}', "application/json"),
    (b'{"incident_id": "INC-\\u0000", "service": "a"}\n' + b"[" * 50_000, "application/x-ndjson"),
]
PAGE_GETS = [
    "/incidents",
    "/incidents/{id}",
    "/incidents/{id}/resolve",
    "/incidents/{id}/replay",
    "/records/{id}",
    "/memory",
    "/profile",
    "/review",
    "/review/{id}",
    "/signin",
]
PAGE_POSTS = [
    "/incidents/{id}/acknowledge",
    "/incidents/{id}/briefing",
    "/incidents/{id}/resolve",
    "/incidents/{id}/resolve/draft",
    "/records/{id}/corrections",
    "/profile/refresh",
    "/review/{id}",
    "/signin",  # last: a sign-in with hostile values starts over from signed out
]
PAGE_QUERY = (
    "state",
    "status",
    "service",
    "severity",
    "age",
    "page",
    "q",
    "limit",
    "next",
    "version",
    "memory",
)
FORM_FIELDS = (
    "symptom",
    "root_cause",
    "resolution_steps",
    "outcome",
    "notes",
    "text",
    "name",
    "password",
    "action",
    "reason",
    "service",
)


@dataclass
class Target:
    server: LiveServer
    token: str
    incident: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


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
        scopes = ["--scope", "alerts:write", "--scope", "incidents:write", "--scope", "read"]
        token = server.cli("token", "create", "--name", "fuzz", *scopes).stdout.strip()
        server.cli("user", "add", "fuzzer", "--role", "engineer", "--password", PASSWORD)
        # A few real incidents, so some generated ids and filters hit rows.
        opened = []
        for n in range(3):
            response = httpx.post(
                f"{server.url}/api/v1/alerts",
                json={"title": f"seed {n}", "service": "checkout", "fingerprint": f"seed-{n}"},
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            )
            response.raise_for_status()
            opened += response.json()["incidents"]
        yield Target(server, token, opened[0])
    finally:
        server.stop()


def operations(target: Target) -> list[schemathesis.APIOperation]:
    spec = httpx.get(f"{target.server.url}/openapi.json", timeout=10).json()
    found = [result.ok() for result in schemathesis.openapi.from_dict(spec).get_all_operations()]
    assert len(found) >= 25, [op.label for op in found]
    return found


def _fail_on_5xx(response: httpx.Response, what: str) -> None:
    assert response.status_code < 500, f"{what}: {response.status_code} {response.text[:300]}"


def test_schemathesis_finds_no_server_error(fuzz_target: Target) -> None:
    for operation in operations(fuzz_target):
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=6,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def no_5xx(case: schemathesis.Case) -> None:
                case.call_and_validate(
                    base_url=fuzz_target.server.url,
                    headers=fuzz_target.headers,
                    checks=[not_a_server_error],
                    timeout=60,
                )

            try:
                no_5xx()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, operation.label  # nothing there to make invalid

    # The generated payloads went past validation into storage, not only into 4xx answers.
    metrics = httpx.get(f"{fuzz_target.server.url}/metrics", timeout=10).text
    stored = [
        line for line in metrics.splitlines() if line.startswith('recallops_alerts_total{outcome="stored"')
    ]
    assert any(source in line for line in stored for source in ("alertmanager", "grafana", "pagerduty"))


def _param(value: str) -> str:
    """A hostile value as it travels in a URL: percent-encoded UTF-8, or raw bytes already encoded."""
    if value.startswith("%"):
        return value
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def _path(template: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", _param(value), template)


def test_hostile_values_on_every_operation(fuzz_target: Target) -> None:
    url = fuzz_target.server.url
    with httpx.Client(base_url=url, headers=fuzz_target.headers, timeout=60) as http:
        for operation in operations(fuzz_target):
            method, template = operation.method.upper(), operation.path
            names = [p.name for p in operation.query]
            for value in HOSTILE_PARAMS:
                path = _path(template, value)
                query = "&".join(f"{name}={_param(value)}" for name in names)
                target = path + (f"?{query}" if query else "")
                _fail_on_5xx(http.request(method, target), f"{method} {target}")
            if method in ("POST", "PUT", "PATCH"):
                path = _path(template, fuzz_target.incident)
                for body, media in HOSTILE_BODIES:
                    response = http.request(method, path, content=body, headers={"Content-Type": media})
                    _fail_on_5xx(response, f"{method} {path} with {body[:40]!r}")


def _signed_in(server: LiveServer) -> tuple[httpx.Client, str]:
    browser = httpx.Client(base_url=server.url, timeout=60, follow_redirects=False)
    token = _csrf(browser, "/signin")
    response = browser.post("/signin", data={"name": "fuzzer", "password": PASSWORD, "csrf_token": token})
    assert response.status_code == 303, response.text
    return browser, _csrf(browser, "/incidents")


def _csrf(browser: httpx.Client, path: str) -> str:
    match = CSRF.search(browser.get(path).text)
    assert match, path
    return match.group(1)


def test_every_page_takes_hostile_ids_filters_and_forms(fuzz_target: Target) -> None:
    browser, csrf = _signed_in(fuzz_target.server)
    try:
        for template in PAGE_GETS:
            for value in [fuzz_target.incident, *HOSTILE_PARAMS]:
                query = "&".join(f"{name}={_param(value)}" for name in PAGE_QUERY)
                target = f"{_path(template, value)}?{query}"
                _fail_on_5xx(browser.get(target), f"GET {target}")
        for template in PAGE_POSTS:
            for value in [fuzz_target.incident, *HOSTILE_PARAMS]:
                form: dict[str, Any] = {name: value for name in FORM_FIELDS} | {"csrf_token": csrf}
                encoded = "&".join(f"{k}={_param(str(v))}" for k, v in form.items())
                target = _path(template, value)
                response = browser.post(
                    target, content=encoded, headers={"Content-Type": "application/x-www-form-urlencoded"}
                )
                _fail_on_5xx(response, f"POST {target}")
    finally:
        browser.close()
