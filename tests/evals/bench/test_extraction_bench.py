"""``bench import`` and ``bench retrieval --documents`` on a tiny corpus with free-form texts."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evals.bench.extraction import f1, file_name, overlap
from tests.evals.bench.test_retrieval import CORPUS, QRELS
from web.cli import app

# Free-form texts of three of the five records: Markdown with headings, status-page prose, and one
# whose cause is never stated.
TEXTS = {
    "P/1": (
        "# Block Storage incident\n\n## Impact\n\nVolumes stuck after a network change. Customers saw "
        "stuck volumes, high latency.\n\n## Root cause\n\na misrouted traffic shift onto the low-capacity "
        "network\n\n## Mitigation\n\nRolled the change back.\n"
    ),
    "P/2": (
        "Volumes stuck in one zone\n\nCustomers experienced stuck volumes and io errors in one zone.\n\n"
        "The root cause was a bad network change. Engineers mitigated the issue by rolling the change back.\n"
    ),
    "P/3": "Bucket listing errors\n\nListing buckets returned HTTP 500 errors for an hour.\n",
}


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in CORPUS))
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(QRELS)
    documents = tmp_path / "raw"
    documents.mkdir()
    for rid, text in TEXTS.items():
        (documents / file_name(rid)).write_text(text)
    return corpus, qrels, documents


def test_token_overlap_counts_words_with_multiplicity() -> None:
    assert overlap("Rolled the change back.", "rolled the change back") == (1.0, 1.0)
    assert overlap("the the cause", "the cause was") == (2 / 3, 2 / 3)
    assert overlap("", "anything") == (0.0, 0.0)
    assert f1(0.5, 1.0) == pytest.approx(2 / 3)


def test_bench_import_compares_each_field_with_the_curated_one(inputs: tuple[Path, Path, Path]) -> None:
    corpus, _, documents = inputs
    result = CliRunner().invoke(
        app, ["bench", "import", "--corpus", str(corpus), "--documents", str(documents), "--json"]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["documents"] == 3 and figures["corpus"] == 5
    root = figures["fields"]["root_cause"]
    # P/1 states its cause word for word, P/2 in a sentence of twice its words ("The root cause was
    # ..."); P/3 never does, and counts as 0 in recall but not in precision.
    assert root["documents"] == 3 and root["fill_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert root["precision"] == 0.75 and root["recall"] == pytest.approx(2 / 3, abs=1e-3)
    assert figures["fields"]["resolution_steps"]["recall"] == pytest.approx((1 + 3 / 4 + 0) / 3, abs=1e-3)
    assert len(figures["halves"]) == 2
    assert set(figures["fill_rate"]) >= {"symptom", "root_cause", "resolved_by"}


def test_bench_import_says_when_no_document_matches(tmp_path: Path, inputs: tuple[Path, Path, Path]) -> None:
    corpus, _, _ = inputs
    result = CliRunner().invoke(
        app, ["bench", "import", "--corpus", str(corpus), "--documents", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "no document" in result.output and "P__1.txt" in result.output
    assert "Traceback" not in result.output


def test_bench_retrieval_builds_a_free_form_bank_beside_the_curated_one(
    tmp_path: Path, inputs: tuple[Path, Path, Path]
) -> None:
    corpus, qrels, documents = inputs
    args = [
        "bench",
        "retrieval",
        "--corpus",
        str(corpus),
        "--qrels",
        str(qrels),
        "--documents",
        str(documents),
    ]
    result = CliRunner().invoke(app, [*args, "--json"], env={"RECALLOPS_DATA_DIR": str(tmp_path / "unused")})
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    free_form = printed["free_form"]
    assert free_form["bank"] == {"from_text": 3, "curated": 2, "dated_from_record": 3}
    assert set(free_form["methods"]) == {"hybrid", "fused", "bm25", "embedding"}
    beside = {(r["scope"], r["metric"]): r for r in free_form["beside"]}
    unscoped = beside[("unscoped", "recall@5")]
    assert unscoped["curated"] == printed["methods"]["hybrid"]["unscoped"]["recall@5"]
    assert unscoped["difference"] == pytest.approx(unscoped["free-form"] - unscoped["curated"], abs=1e-3)
    assert len(unscoped["halves"]["free-form"]) == 2


def test_bench_import_refuses_records_with_no_curated_field_to_compare(tmp_path: Path) -> None:
    corpus = tmp_path / "bare.jsonl"
    corpus.write_text('{"id": "P/1", "date": "2020-05-01"}\n{"id": "P/2", "date": "2020-05-02"}\n')
    documents = tmp_path / "raw"
    documents.mkdir()
    (documents / file_name("P/1")).write_text(TEXTS["P/1"])
    result = CliRunner().invoke(
        app, ["bench", "import", "--corpus", str(corpus), "--documents", str(documents)]
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "none of the 1 records with a document in" in said
    assert "has a curated field to compare with (symptom, error_signature, root_cause," in said
    assert "at least one is needed" in said and "Traceback" not in result.output
