"""RecallOps in LLM mode against a real small model on loopback (llama.cpp, Qwen2.5-Coder-1.5B).

These tests assert the guards, never the model's prose: the small model writes history it has not
read and offers failed attempts as fixes, so it is an adversarial test of what RecallOps lets through.
One model server and one RecallOps server (the demo history) for the module; the model is slow
(a hop takes up to minutes on a CPU), so each test waits on its answer with a generous deadline.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from agent.briefing.loop import MAX_HOPS
from agent.briefing.planner import EvidenceOnlyPlanner
from agent.briefing.recall_first import names_the_alert
from agent.core.claims import SECTIONS
from agent.core.confidence import MODERATE, SETTLED
from agent.core.evidence import AlertInput
from agent.core.guard import ROLE_FIELDS
from agent.core.tools import RECALL
from agent.resolution.log_tool import LOG
from evals.scenarios.roles import check_roles
from tests.e2e.test_replicas import sign_in
from tests.support.local_llm import LocalLLM, local_llm
from tests.support.net import wait_for
from tests.support.server import LiveServer
from web.cli.demo import DEMO_ALERT

pytestmark = [pytest.mark.e2e, pytest.mark.llm]

HOP_TIMEOUT_S = 3600.0  # one model call on a loaded CPU (docs/llm.md); a briefing is at most three
PASSWORD = "local-model-test-password"


@dataclass
class Site:
    server: LiveServer
    token: str

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.server.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalLLM]:
    """The model server, still loading: ``site`` waits for it once RecallOps is up."""
    with local_llm(tmp_path_factory.mktemp("local-llm")) as server:
        yield server


@pytest.fixture(scope="module")
def site(model: LocalLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    data_dir = tmp_path_factory.mktemp("llm-mode") / "data"
    LiveServer(data_dir).cli("seed")  # seeded in evidence-only mode: the model is for the briefing
    # The workers poll at the product's default, not the test servers' 0.1 s: idle at 0.1 s a server
    # takes about a fifth of a core, which the one-thread model needs while it answers for minutes.
    env = {"RECALLOPS_PROFILE_REFRESH_DEBOUNCE_S": "86400", "RECALLOPS_WORKER_POLL_S": "0.5"}
    server = LiveServer(data_dir, env={**model.env(HOP_TIMEOUT_S), **env}).launch()
    try:
        server.wait_up(timeout=300)
        done = server.cli("user", "add", "oncall", "--role", "engineer", "--password", PASSWORD, check=False)
        assert done.returncode == 0, done.stderr
        token = (
            server.cli(
                *("token", "create", "--name", "oncall", "--scope", "alerts:write"),
                *("--scope", "incidents:write", "--scope", "read"),
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        model.wait_ready()
        yield Site(server, token)
    finally:
        server.stop()


def assert_llm_or_repair_fallback(answer: dict[str, Any]) -> None:
    """The model answered, or what it answered failed the loop's checks and the evidence took over,
    saying why. Either is the product working; a model that could not be reached is not."""
    warnings = answer["warnings"]
    assert not any(w.startswith("The LLM was unavailable") for w in warnings), warnings
    if answer["mode"] != "llm":
        assert any(w.endswith("assembled from the evidence only.") for w in warnings), warnings


def assert_seen_before_is_calibrated(briefing: dict[str, Any], service: str) -> None:
    """``seen_before`` is read from the recalled incidents' calibrated probabilities, whatever the
    model said: novel when none is a reliable match, recurring only for a settled, undisputed one
    on the alert's own service."""
    recalled = [e for e in briefing["evidence"] if e["kind"] == "incident" and e["probability"] is not None]
    best = max(recalled, key=lambda e: e["probability"], default=None)
    seen = briefing["seen_before"]
    if best is None or best["probability"] < MODERATE:
        assert seen == "novel", (seen, best)
    elif seen == "recurring":
        assert best["probability"] >= SETTLED and best["service"] == service, best
        assert not briefing["disputed"], briefing["disputed"]
    else:
        assert seen == "similar", (seen, best)


FAILED_JOBS = re.compile(r'^recallops_briefing_jobs\{state="failed"\} ([0-9.]+)$', re.MULTILINE)


def briefed(site: Site, http: httpx.Client, incident: str) -> dict[str, Any]:
    """The stored briefing, waited for as long as a slow model may take, but not past a job that gave up."""

    def stored_or_given_up() -> dict[str, Any] | None:
        answer = http.get(f"/api/v1/incidents/{incident}/briefing")
        if answer.status_code == 200:
            return dict(answer.json())
        failed = FAILED_JOBS.search(http.get("/metrics").text)
        return {"gave_up": True} if failed and float(failed.group(1)) > 0 else None

    got = wait_for(
        stored_or_given_up,
        timeout=HOP_TIMEOUT_S * MAX_HOPS + 60,
        interval=2.0,
        what="the briefing from the local model",
    )
    assert "gave_up" not in got, f"the briefing job gave up:\n{site.server.log()[-4000:]}"
    return dict(got["briefing"])


@pytest.fixture(scope="module")
def demo(site: Site) -> tuple[str, dict[str, Any]]:
    """The demo alert posted once, and its briefing: the incident both tests work on."""
    with site.api() as http:
        posted = http.post("/api/v1/alerts", json=DEMO_ALERT)
        assert posted.status_code in (200, 202), posted.text
        [incident] = posted.json()["incidents"]
        return incident, briefed(site, http, incident)


def test_the_demo_alert_briefed_by_the_local_model_passes_the_guards(
    site: Site, demo: tuple[str, dict[str, Any]]
) -> None:
    alert = AlertInput(
        text=DEMO_ALERT["description"], service=DEMO_ALERT["service"], title=DEMO_ALERT["title"]
    )
    incident, briefing = demo
    assert_llm_or_repair_fallback(briefing)
    hops = briefing["hops"]
    # The model has at most MAX_HOPS; when its answer fails the loop's checks the evidence-only
    # planner briefs in hops of its own, numbered on from the model's, within the same budget.
    by_model = [h for h in hops if h["model"] != EvidenceOnlyPlanner.name]
    fallback = [h for h in hops if h["model"] == EvidenceOnlyPlanner.name]
    assert 1 <= len(by_model) <= MAX_HOPS and hops[: len(by_model)] == by_model
    assert len(fallback) <= MAX_HOPS and bool(fallback) == (briefing["mode"] != "llm")
    assert [h["n"] for h in hops] == list(range(1, len(hops) + 1))
    first = hops[0]["calls"][0]
    assert first["tool"] == RECALL and first["status"] == "ok"
    assert names_the_alert(first["args"]["alert_description"], alert), first

    # What the model names and cites is held to the evidence: no invented incident, no citation
    # outside the numbered list, and the related incidents' scores are recall's, not the model's.
    evidence = {e["n"]: e for e in briefing["evidence"]}
    recalled = {e["id"]: e for e in evidence.values() if e["kind"] == "incident"}
    related = briefing["related_incidents"]
    assert all(r["id"] in recalled for r in related), (related, sorted(recalled))
    claims = [(role, c) for section, role in SECTIONS.items() for c in briefing[section]]
    assert all(n in evidence for _, c in claims for n in c["citations"]), claims
    # Every claim left stands on a field its role may rest on, as the guard found it; the eval's own
    # reading finds no recorded failed attempt among the fixes.
    assert all(c["field"] in ROLE_FIELDS[c["role"] or role] for role, c in claims), claims
    assert check_roles(briefing).failed_attempt_fixes == [], briefing["suggested_fix"]
    assert_seen_before_is_calibrated(briefing, DEMO_ALERT["service"])

    with httpx.Client(base_url=site.server.url, timeout=60) as browser:
        assert sign_in(browser, "oncall", PASSWORD).status_code == 303
        page = browser.get(f"/incidents/{incident}")
    assert page.status_code == 200
    assert all(r["id"] in page.text for r in related)


def test_the_resolution_conversation_cannot_log_without_support(
    site: Site, demo: tuple[str, dict[str, Any]]
) -> None:
    incident, _ = demo
    notes = "Still looking. Paged the database team; nothing confirmed yet."
    with site.api() as http:
        response = http.post(
            f"/api/v1/incidents/{incident}/resolution-conversation",
            json={"notes": notes, "commit": True},
            timeout=HOP_TIMEOUT_S * MAX_HOPS + 60,
        )
        assert response.status_code == 200, response.text
        draft = response.json()
        assert_llm_or_repair_fallback(draft)
        assert not draft["logged"] and draft["resolution_version"] is None
        # A log_incident the model sent was turned down, and the draft says nothing was written.
        logs = [c for hop in draft["hops"] for c in hop["calls"] if c["tool"] == LOG]
        assert all(c["status"] != "ok" for c in logs), logs
        assert any(w.startswith("Nothing was written:") for w in draft["warnings"]), draft["warnings"]
        assert http.get(f"/api/v1/incidents/{incident}/memory").json()["state"] is None
        assert http.get(f"/api/v1/incidents/{incident}/resolution").status_code == 404
