"""The retrieval benchmark end to end on a tiny corpus: real import flow, real embedder, the agent's tool."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evals.bench.corpus import NOT_RECORDED, corpus_id, import_row, load_qrels, stored_id
from evals.bench.retrieval import query_for
from memory.history import MAX_TEXT
from web.cli import app

SECRET_CAUSE = "a misrouted traffic shift onto the low-capacity network"


def _record(rid: str, service: str, title: str, manifestation: list[str], cause: str) -> dict[str, object]:
    return {
        "id": rid,
        "provider": "Example",
        "date": "2020-05-01",
        "title": title,
        "services": [f" {service}", "Other"],
        "impact_symptom": ["availability"],
        "manifestation": manifestation,
        "summary": f"{title}. Customers saw {', '.join(manifestation)}.",
        "details": "Long narrative that must never be imported.",
        "root_cause": {"labels": [{"layer2": "x", "layer3": "config"}], "details": cause},
        "mitigation": {"labels": ["rollback", "restart"], "details": "Rolled the change back."},
        "operation": [],
        "link": [],
    }


CORPUS = [
    _record(
        "P/1",
        "Block Storage",
        "Volumes stuck after a network change",
        ["stuck volumes", "high latency"],
        SECRET_CAUSE,
    ),
    _record(
        "P/2",
        "Block Storage",
        "Volumes stuck in one zone",
        ["stuck volumes", "io errors"],
        "a bad network change",
    ),
    _record(
        "P/3", "Object Storage", "Bucket listing errors", ["http 500 error code"], "a code change in listing"
    ),
    _record("P/4", "DNS", "Resolution failures", ["dns error rate"], "an expired zone key"),
    _record(
        "P/5",
        "Object Storage",
        "Elevated 500s on uploads",
        ["http 500 error code", "upload failures"],
        "a code change",
    ),
]
QRELS = "query_id\tdoc_id\tgrade\nP/1\tP/2\t2\nP/1\tP/3\t1\nP/3\tP/5\t2\nP/4\tP/1\t1\n"


def test_protocol_mapping_keeps_causes_out_of_queries_and_labels_out_of_records() -> None:
    row = import_row(CORPUS[0])
    assert row["incident_id"] == "P:1"  # a page address holds no "/"; rankings read it back as P/1
    assert corpus_id(row["incident_id"]) == "P/1" == corpus_id(stored_id("P/1"))
    assert stored_id("Google/google-GAE-#15020") == "Google:google-GAE-~15020"
    with pytest.raises(ValueError, match="cannot tell apart"):
        stored_id("odd:id")
    assert row["service"] == "Block Storage"
    assert row["root_cause"] == SECRET_CAUSE
    assert row["outcome"] == "rollback; restart"
    assert "narrative" not in json.dumps(row) and "config" not in json.dumps(row)
    query = query_for(CORPUS[0])
    assert query.service == "Block Storage"
    assert "stuck volumes" in query.description and "availability" in query.description
    assert SECRET_CAUSE not in query.description and "Rolled" not in query.description
    gap = import_row({**CORPUS[0], "root_cause": {"labels": [], "details": ""}})
    assert gap["root_cause"] == NOT_RECORDED
    assert import_row(CORPUS[0])["timestamp"] == "2020-05-01T00:00:00Z"
    assert import_row({**CORPUS[0], "date": "2019-7"})["timestamp"] == "2019-07-01T00:00:00Z"
    assert import_row({**CORPUS[0], "services": []})["service"] == "unknown"
    assert len(import_row({**CORPUS[0], "summary": "x" * 30_000})["symptom"]) == MAX_TEXT


def test_qrels_loader_skips_the_header(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text(QRELS)
    assert load_qrels(path) == {"P/1": {"P/2": 2, "P/3": 1}, "P/3": {"P/5": 2}, "P/4": {"P/1": 1}}


def test_cli_prints_every_method_and_scope_as_json(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in CORPUS))
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(QRELS)
    result = CliRunner().invoke(
        app,
        ["bench", "retrieval", "--corpus", str(corpus), "--qrels", str(qrels), "--json"],
        env={"RECALLOPS_DATA_DIR": str(tmp_path / "unused")},
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) == {"methods", "protocol", "rankings"}
    figures = printed["methods"]
    assert set(figures) == {"hybrid", "fused", "bm25", "embedding"}
    # The recall tool re-ranks only its searches across services: within one, it is the fusion's order.
    assert printed["rankings"]["hybrid"]["scoped"] == printed["rankings"]["fused"]["scoped"]
    for method in figures.values():
        assert set(method) == {"scoped", "unscoped"}
        for scores in method.values():
            assert scores["queries"] == 2  # P/4 has no grade-2 document
            assert scores["recall@1"] <= scores["recall@3"] <= scores["recall@5"] <= scores["recall@10"]
    # Each query's grade-2 twin is the only other record of its service: scoped recall ranks it first.
    for method in figures.values():
        assert method["scoped"]["recall@1"] == 1.0
        assert method["scoped"]["mrr@10"] == 1.0
    assert figures["hybrid"]["unscoped"]["recall@3"] == 1.0
    assert not (tmp_path / "unused").exists()


def test_protocol_reports_folds_floor_misses_and_a_failed_floor_exits_1(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in CORPUS))
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(QRELS)
    args = ["bench", "retrieval", "--corpus", str(corpus), "--qrels", str(qrels)]
    env = {"RECALLOPS_DATA_DIR": str(tmp_path / "unused")}
    result = CliRunner().invoke(app, [*args, "--bootstrap", "--json"], env=env)
    assert result.exit_code == 0, result.output
    protocol = json.loads(result.stdout)["protocol"]
    assert (
        len(protocol["folds"]["hybrid"]["scoped"]) == 5 and len(protocol["halves"]["bm25"]["unscoped"]) == 2
    )
    assert {(c["scope"], c["metric"]) for c in protocol["floor"]} == {
        (s, m) for s in ("scoped", "unscoped") for m in ("recall@1", "recall@5", "mrr@10")
    }
    assert {row["against"] for row in protocol["bootstrap"]} == {"fused", "bm25", "embedding"}
    assert all(row["low"] <= row["diff"] <= row["high"] for row in protocol["bootstrap"])
    saved = tmp_path / "before.json"
    saved.write_text(result.stdout)
    again = CliRunner().invoke(app, [*args, "--baseline", str(saved), "--min-mrr", "0.5"], env=env)
    assert again.exit_code == 0, again.output
    assert "previous hybrid" in again.stdout and "Misses" in again.stdout
    floor = CliRunner().invoke(app, [*args, "--min-mrr", "1.01"], env=env)
    assert floor.exit_code == 1
    assert "MRR@10" in floor.output
