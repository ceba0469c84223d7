"""The briefing benchmark end to end at a tiny size: real embedder, real bank, briefings really stored."""

import json
import random
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from evals.bench.synthetic import MODES, synthetic_alert, synthetic_record
from incidents.briefings.models import Briefing
from incidents.database import make_engine, make_session_factory
from web.cli import app


def test_generated_records_differ_and_cover_every_failure_mode() -> None:
    rng = random.Random(3)
    records = [synthetic_record(i, rng) for i in range(300)]
    assert len({r.incident_id for r in records}) == 300
    assert len({(r.symptom, r.error_signature, r.resolution_steps) for r in records}) > 250
    assert {r.runbook_used for r in records} == {mode[4] for mode in MODES}
    assert synthetic_alert(rng).service


def test_bench_briefing_prints_its_figures_and_stores_briefings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    bank_dir = tmp_path / "bank"
    args = ["bench", "briefing", "--incidents", "40", "--alerts", "3", "--bank-dir", str(bank_dir), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert {
        "p50_ms",
        "p95_ms",
        "recall_p50_ms",
        "recall_call_p50_ms",
        "embed_p50_ms",
        "store_p50_ms",
    } <= figures.keys()
    assert figures["incidents"] == 40 and figures["alerts"] == 3 and sum(figures["seen_before"].values()) == 3
    engine = make_engine(f"sqlite:///{bank_dir / 'recallops.db'}")
    try:
        with make_session_factory(engine)() as db:
            assert db.scalar(select(func.count(Briefing.id))) == 3 + 5  # warm-up alerts are stored too
    finally:
        engine.dispose()
