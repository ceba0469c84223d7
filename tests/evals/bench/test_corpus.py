"""The corpus as every benchmark reads it: a bad line named before any benchmark runs, and fields read
as they are meant whatever their shape."""

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from evals.bench.corpus import CorpusError, import_row, load_corpus, load_qrels, timestamp, values
from evals.bench.replay import corpus_incident
from evals.bench.retrieval import alert_for
from web.cli import app

RECORD = {
    "id": "P/1",
    "date": "2020-05-01",
    "title": "Volumes stuck",
    "services": ["Block Storage"],
    "manifestation": ["stuck volumes"],
    "summary": "Volumes stuck after a change.",
    "root_cause": {"details": "a bad network change"},
    "mitigation": {"labels": ["rollback"], "details": "Rolled back."},
}


def _corpus(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _line(**changes: object) -> str:
    return json.dumps({**RECORD, **changes})


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ('{"id": "P/2", "date": ', "line 2: not JSON"),
        ('["P/2"]', "line 2: not a JSON object"),
        (_line(id=""), 'line 2: no "id"'),
        (_line(), "line 2: id 'P/1' is already on line 1"),
        (_line(id="P/2", date=None), 'line 2 (P/2): no "date"'),
        (_line(id="P/2", date="May 2020"), "line 2 (P/2): unusable date 'May 2020'"),
        (_line(id="P/2", date="2020-02-30"), "line 2 (P/2): unusable date '2020-02-30'"),
        (_line(id="P:2"), "holds ':' or '~'"),
    ],
)
def test_a_line_no_benchmark_can_read_is_named_before_any_runs(tmp_path: Path, bad: str, said: str) -> None:
    with pytest.raises(CorpusError, match=re.escape(said)):
        load_corpus(_corpus(tmp_path, _line(), bad))


def test_a_date_the_import_would_refuse_is_refused_with_the_corpus() -> None:
    ahead = (datetime.now(UTC) + timedelta(days=3)).date().isoformat()
    with pytest.raises(ValueError, match="more than a day in the future"):
        timestamp(ahead)
    with pytest.raises(ValueError, match="before 1970"):
        timestamp("1969-12-31")


def test_an_empty_corpus_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="holds no record"):
        load_corpus(_corpus(tmp_path, ""))


def test_dates_are_read_to_utc_at_the_precision_given() -> None:
    assert timestamp("2020") == "2020-01-01T00:00:00Z"
    assert timestamp("2020-5") == "2020-05-01T00:00:00Z"
    assert timestamp("2020-05-01T10:00:00+02:00") == "2020-05-01T08:00:00Z"
    assert timestamp("2020-05-01 10:00:00") == "2020-05-01T10:00:00Z"


@given(st.text(min_size=1))
def test_a_lone_string_is_one_value_never_its_letters(text: str) -> None:
    assert values(text) == [text]


def test_fields_given_as_plain_strings_are_read_as_the_curated_ones() -> None:
    plain = {
        **RECORD,
        "services": "Block Storage",
        "manifestation": "stuck volumes",
        "root_cause": "a bad network change",
        "mitigation": "Rolled back.",
    }
    row, curated = import_row(plain), import_row(RECORD)
    assert {k: row[k] for k in ("service", "error_signature", "root_cause", "resolution_steps")} == {
        k: curated[k] for k in ("service", "error_signature", "root_cause", "resolution_steps")
    }
    assert alert_for(plain).text == alert_for(RECORD).text == "stuck volumes"
    assert corpus_incident(plain, {}).truth.root_cause == "a bad network change"


def test_judgments_of_another_shape_are_named_and_none_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("query_id\tdoc_id\tgrade\nP/1\tP/2\t2\n\nP/1\tP/3\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=re.escape("q.tsv line 4: expected query, doc and grade")):
        load_qrels(path)
    path.write_text("query_id,doc_id,grade\nP/1,P/2,2\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="line 1"):
        load_qrels(path)
    path.write_text("query_id\tdoc_id\tgrade\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="holds no judgment"):
        load_qrels(path)


@pytest.mark.parametrize("command", ["retrieval", "replay", "rerank", "calibration"])
def test_the_benchmarks_refuse_a_bad_corpus_by_line_or_judgments_of_another(
    tmp_path: Path, command: str
) -> None:
    qrels = tmp_path / "q.tsv"
    qrels.write_text("P/9\tP/1\t2\n", encoding="utf-8")
    good = _corpus(tmp_path, _line())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_line() + "\n{oops\n", encoding="utf-8")
    runner = CliRunner()
    named = runner.invoke(app, ["bench", command, "--corpus", str(bad), "--qrels", str(qrels)])
    assert named.exit_code == 2
    assert "bad.jsonl line 2: not JSON" in named.output
    for order in (
        ["--corpus", str(good), "--qrels", str(qrels)],
        ["--qrels", str(qrels), "--corpus", str(good)],
    ):
        other = runner.invoke(app, ["bench", command, *order])
        assert other.exit_code == 2
        assert "no query of q.tsv is a record of corpus.jsonl" in other.output


def test_binary_judgments_read_their_relevant_as_the_same_failure(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nP/1\tP/2\t1\nP/1\tP/3\t0\n", encoding="utf-8")
    assert load_qrels(path) == {"P/1": {"P/2": 2, "P/3": 0}}
    path.write_text("P/1\tP/2\t1\nP/1\tP/3\t2\n", encoding="utf-8")
    assert load_qrels(path) == {"P/1": {"P/2": 1, "P/3": 2}}


CORPORA = Path(__file__).parents[3] / "corpora"


@pytest.mark.parametrize(
    "name", ["shop-alerts", "k8s-faults", "ride-alerts", "microservice-faults", "payments-cross-service"]
)
def test_the_projects_corpora_judge_a_pair_relevant_exactly_when_its_failure_is_the_same(name: str) -> None:
    corpus = load_corpus(CORPORA / name / "corpus.jsonl")
    qrels = load_qrels(CORPORA / name / "qrels.tsv")
    label = {r["id"]: r["root_cause"]["labels"][0]["layer3"] for r in corpus}
    same = {(q, d) for q in label for d in label if q != d and label[q] == label[d]}
    judged_pairs = {(q, d) for q, docs in qrels.items() for d, grade in docs.items() if grade >= 2}
    assert judged_pairs == same
    assert not any(label[q].startswith("healthy-lookalike") for q, _ in judged_pairs)


def test_the_cross_service_corpus_holds_every_precedent_on_another_service() -> None:
    """Its figures measure recall across services only while no relevant pair shares the alerted service."""
    corpus = load_corpus(CORPORA / "payments-cross-service" / "corpus.jsonl")
    service = {r["id"]: r["services"][0] for r in corpus}
    qrels = load_qrels(CORPORA / "payments-cross-service" / "qrels.tsv")
    pairs = [(q, d) for q, docs in qrels.items() for d, grade in docs.items() if grade >= 2]
    assert len(pairs) == 60
    assert all(service[q] != service[d] for q, d in pairs)
