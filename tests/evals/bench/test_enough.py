"""The benchmarks on corpora too small to measure: one line naming what is short, never a traceback
from inside a fit nor figures over no query, and a figure at the least they can honestly work with."""

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.evals.bench.test_retrieval import CORPUS, QRELS
from web.cli import app

# Every record of the tiny corpus shares the service "Other", so a grade 2 across them is honest.
FIVE_SCORED = "".join(
    f"{q}\t{d}\t2\n"
    for q, d in (("P/1", "P/2"), ("P/2", "P/1"), ("P/3", "P/5"), ("P/5", "P/3"), ("P/4", "P/1"))
)
ALL_ZERO = "P/1\tP/2\t0\nP/3\tP/5\t0\n"
# Five scored queries, each relevant record judged absent from the corpus: nothing recalled is relevant.
ELSEWHERE = "".join(f"P/{n}\tQ/{n}\t2\nP/{n}\tP/{n % 5 + 1}\t1\n" for n in range(1, 6))


def _bench(tmp_path: Path, command: str, qrels: str, *extra: str, records: int = 5) -> tuple[int, str]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in CORPUS[:records]))
    judgments = tmp_path / "qrels.tsv"
    judgments.write_text(qrels)
    args = ["bench", command, "--corpus", str(corpus), "--qrels", str(judgments), *extra]
    result = CliRunner().invoke(app, args, env={"RECALLOPS_DATA_DIR": str(tmp_path / "unused")})
    assert "Traceback" not in result.output
    return result.exit_code, " ".join(result.output.split())


def test_rerank_refuses_fewer_scored_queries_than_folds(tmp_path: Path) -> None:
    cases = {
        (QRELS, 5): "qrels.tsv holds 2 scored queries",
        (ALL_ZERO, 5): "qrels.tsv holds 0 scored queries",
        ("P/1\tP/2\t2\n", 1): "qrels.tsv holds 1 scored query ",
    }
    for (qrels, records), found in cases.items():
        code, output = _bench(tmp_path, "rerank", qrels, records=records)
        assert code == 2, output
        assert f"corpus.jsonl with {found}" in output
        assert "re-ranking on 5 held-out folds needs at least 5" in output


def test_rerank_works_from_one_scored_query_per_fold(tmp_path: Path) -> None:
    code, output = _bench(tmp_path, "rerank", FIVE_SCORED, "--json")
    assert code == 0, output
    assert json.loads(output)["queries"] == 5


def test_rerank_refuses_pairs_of_which_none_is_relevant(tmp_path: Path) -> None:
    code, output = _bench(tmp_path, "rerank", ELSEWHERE)
    assert code == 2, output
    assert "0 of the" in output and "pairs recalled for corpus.jsonl with qrels.tsv are relevant" in output
    assert "a fit needs at least one relevant pair and one not" in output


def test_calibration_refuses_a_dev_split_with_nothing_to_score_and_writes_no_fit(tmp_path: Path) -> None:
    fit = tmp_path / "fit.json"
    for qrels, said in (
        (ALL_ZERO, "corpus.jsonl with qrels.tsv holds 0 scored queries"),
        (ELSEWHERE, "a fit needs at least one relevant pair and one not"),
    ):
        code, output = _bench(tmp_path, "calibration", qrels, "--fit", "--out", str(fit))
        assert code == 2, output
        assert said in output
    assert "the dev split needs at least 1" in _bench(tmp_path, "calibration", ALL_ZERO)[1]
    assert not fit.exists()


def test_calibration_refuses_fewer_fold_groups_than_folds(tmp_path: Path) -> None:
    scenarios = tmp_path / "no-scenarios"
    scenarios.mkdir()
    fit = tmp_path / "fit.json"
    code, output = _bench(
        tmp_path, "calibration", QRELS, "--scenarios", str(scenarios), "--fit", "--out", str(fit)
    )
    assert code == 2, output
    assert "2 fold groups of the dev split and the scenarios recalled a record" in output
    assert "5 held-out folds need at least 5" in output
    assert not fit.exists()


def test_retrieval_refuses_judgments_that_score_no_query(tmp_path: Path) -> None:
    for qrels, records in ((ALL_ZERO, 5), ("P/1\tP/1\t2\n", 1)):
        code, output = _bench(tmp_path, "retrieval", qrels, records=records)
        assert code == 2, output
        assert "corpus.jsonl with qrels.tsv holds 0 scored queries" in output
        assert "a figure needs at least 1" in output
    code, output = _bench(tmp_path, "retrieval", "P/1\tP/2\t2\n", "--json", records=1)
    assert code == 0, output  # one scored query, its precedent not in the corpus: a measured miss
    assert json.loads(output)["methods"]["hybrid"]["unscoped"]["queries"] == 1
