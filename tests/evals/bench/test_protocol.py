"""The retrieval protocol's saved baseline: a run of another corpus, or a file that is not a run, is
refused by name before the benchmark starts, never read as queries it missed."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evals.bench.protocol import BaselineError, check_baseline, saved_hybrid
from web.cli import app

QRELS = {"P/1": {"P/2": 2}, "P/2": {"P/1": 2}, "P/3": {"P/1": 1}}  # P/3 has nothing of grade 2: not scored


def test_a_saved_run_gives_its_hybrid_rankings_per_scope() -> None:
    run = {"rankings": {"hybrid": {"scoped": {"P/1": ["P/2"], "P/2": []}}, "bm25": {}}}
    assert saved_hybrid(run, "run.json") == {"scoped": {"P/1": ["P/2"], "P/2": []}}
    check_baseline(saved_hybrid(run, "run.json"), QRELS, "run.json")  # every scored query ranked


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"systems": {}}, "run.json holds no hybrid rankings"),
        ([1, 2], "run.json holds no hybrid rankings"),
        ({"rankings": {"hybrid": {"scoped": {"P/1": "P/2"}}}}, "not lists of document ids"),
    ],
)
def test_a_file_that_is_not_a_retrieval_run_is_refused(data: object, said: str) -> None:
    with pytest.raises(BaselineError, match=said):
        saved_hybrid(data, "run.json")


def test_a_run_that_never_ranked_a_scored_query_is_another_corpus() -> None:
    with pytest.raises(BaselineError, match=r"did not rank 1 of the 2 scored queries \(unscoped, e.g. P/2\)"):
        check_baseline({"scoped": {"P/1": [], "P/2": []}, "unscoped": {"P/1": []}}, QRELS, "run.json")


def test_the_command_refuses_the_baseline_before_it_ranks(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"P/{n}", "date": "2020-05-01"}) + "\n" for n in (1, 2, 3)))
    qrels = tmp_path / "q.tsv"
    qrels.write_text("".join(f"{q}\t{d}\t{g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rankings": {"hybrid": {"scoped": {"Q/9": ["Q/8"]}}}}))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for path, said in (
        (other, "other.json did not rank 2 of the 2 scored queries"),
        (broken, "not readable JSON"),
    ):
        args = ["bench", "retrieval", "--corpus", str(corpus), "--qrels", str(qrels), "--baseline", str(path)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert said in " ".join(result.output.split())
        assert "Traceback" not in result.output
