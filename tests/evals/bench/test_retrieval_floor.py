"""The retrieval floor on the dev split of the public post-mortem corpus: ranking can only get better.

The corpus is never part of the repository; it is read from ``../shared/data`` beside the checkout,
where CI keeps it. Missing there in CI is a failure, never a skip.
"""

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from web.cli import app

CORPUS_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "postmortems-issre22"
# Hybrid MRR@10 on the dev split is 0.59 scoped and 0.48 unscoped; the floor sits a little below the
# lower one. Raise it when ranking improves; never lower it to make a change pass.
MIN_MRR = "0.46"


def test_the_dev_split_clears_the_retrieval_floor_and_the_channel_floor(tmp_path: Path) -> None:
    corpus, qrels = CORPUS_DIR / "dev.jsonl", CORPUS_DIR / "dev-qrels.tsv"
    if not (corpus.exists() and qrels.exists()):
        message = f"the dev split is missing from {CORPUS_DIR}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    result = CliRunner().invoke(
        app,
        ["bench", "retrieval", "--corpus", str(corpus), "--qrels", str(qrels), "--min-mrr", MIN_MRR],
        env={"RECALLOPS_DATA_DIR": str(tmp_path / "unused")},
    )
    assert result.exit_code == 0, result.output
