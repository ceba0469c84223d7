"""The benchmarks' Markdown as a terminal shows it: every prose line wrapped to the terminal's width
under its own indent, every table row whole, and ``--json`` left as it is."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.evals.bench.test_retrieval import _record
from tests.support.wrapped import assert_wrapped
from web.cli import app

WORDS = [
    "disk",
    "dns",
    "queue",
    "cache",
    "tls",
    "quota",
    "index",
    "lease",
    "shard",
    "token",
    "route",
    "clock",
]


def _twins() -> tuple[list[dict[str, object]], str]:
    """Two records of each of twelve services, each the other's precedent: enough queries for the folds
    the re-ranking and the calibration hold out."""
    corpus, qrels = [], ["query_id\tdoc_id\tgrade"]
    for n, word in enumerate(WORDS):
        first, second = f"P/{2 * n + 1}", f"P/{2 * n + 2}"
        for rid, when in ((first, "after a deploy"), (second, "in one zone")):
            corpus.append(
                _record(rid, f"{word} service", f"{word} errors {when}", [f"{word} errors"], f"a {word} bug")
            )
        qrels += [f"{first}\t{second}\t2", f"{second}\t{first}\t2"]
    return corpus, "\n".join(qrels) + "\n"


@pytest.mark.parametrize("command", ["retrieval", "rerank", "calibration"])
def test_a_benchmarks_prose_wraps_to_the_terminal_and_its_tables_stay_whole(
    tmp_path: Path, command: str
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    records, judgments = _twins()
    corpus.write_text("\n".join(json.dumps(r) for r in records))
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(judgments)
    args = ["bench", command, "--corpus", str(corpus), "--qrels", str(qrels)]
    if command == "calibration":  # the corpus's pairs alone, not the shipped scenarios' too
        (tmp_path / "no-scenarios").mkdir()
        args += ["--scenarios", str(tmp_path / "no-scenarios")]
    printed = {}
    for columns in (1000, 60):
        env = {"RECALLOPS_DATA_DIR": str(tmp_path / "unused"), "COLUMNS": str(columns)}
        result = CliRunner().invoke(app, args, env=env)
        assert result.exit_code == 0, result.output
        printed[columns] = result.stdout
    assert any(len(line) > 60 and not line.startswith("|") for line in printed[1000].splitlines())
    assert assert_wrapped(printed[1000], printed[60], 60) >= 1
    env = {"RECALLOPS_DATA_DIR": str(tmp_path / "unused"), "COLUMNS": "20"}
    assert json.loads(CliRunner().invoke(app, [*args, "--json"], env=env).stdout)  # one object, unwrapped
