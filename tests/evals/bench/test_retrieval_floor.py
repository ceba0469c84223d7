"""The retrieval floors: on the dev split of the public post-mortem corpus, and on the project's own
corpus of alerts with healthy lookalikes. Ranking can only get better.

The public corpus is never part of the repository; it is read from ``../shared/data`` beside the
checkout, where CI keeps it. Missing there in CI is a failure, never a skip.
"""

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from web.cli import app

CORPUS_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "postmortems-issre22"
# Hybrid MRR@10 on the dev split is 0.574 scoped and 0.450 unscoped; the floor sits a little below the
# lower one. Raise it when ranking improves; never lower it to make a change pass. (It was 0.46 while
# the benchmark searched a bank holding the query's own record, which ranked every record after it one
# place worse than a briefing does: the unscoped figure read 0.469 for the same ranking.)
MIN_MRR = "0.44"
LOOKALIKES = Path(__file__).resolve().parents[3] / "corpora" / "shop-alerts"
# Across services the hybrid puts the real fault first for 14 of the 27 alerts of that corpus (BM25 for
# 5): a lookalike the alert contradicts is held under the record of the same failure. The floor is one
# alert below (it was two below 15, read with the query's own record in the bank).
MIN_FIRST_AHEAD_OF_LOOKALIKES = 13 / 27


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


def test_lookalikes_the_alert_contradicts_stay_behind_the_real_faults(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "retrieval",
            "--corpus",
            str(LOOKALIKES / "corpus.jsonl"),
            "--qrels",
            str(LOOKALIKES / "qrels.tsv"),
            "--json",
        ],
        env={"RECALLOPS_DATA_DIR": str(tmp_path / "unused")},
    )
    assert result.exit_code == 0, result.output
    across = {name: method["unscoped"] for name, method in json.loads(result.output)["methods"].items()}
    assert across["hybrid"]["recall@1"] >= MIN_FIRST_AHEAD_OF_LOOKALIKES - 1e-9, across
    assert across["hybrid"]["mrr@10"] > across["bm25"]["mrr@10"], across
