"""The sizes ``recallops bench all`` runs at by default, apart from the benchmarks so the command line
can show them without importing any benchmark."""

import os
from dataclasses import dataclass
from pathlib import Path

# The public post-mortem corpus is never shipped: it is read from where the operator keeps it.
CORPUS_DIR = Path(os.environ.get("RECALLOPS_CORPUS_DIR", "../shared/data/postmortems-issre22"))


@dataclass(frozen=True)
class Sizes:
    ingest_alerts: int = 2000
    ingest_concurrency: int = 16
    ingest_database_url: str | None = None  # also measure intake with the server on this database
    recall_sizes: tuple[int, ...] = (1000,)
    briefing_incidents: int = 2000
    briefing_alerts: int = 100
    pages_incidents: int = 1000
    pages_runs: int = 20
    startup_runs: int = 3
    history_records: int = 500
    corpus: Path = CORPUS_DIR / "dev.jsonl"
    qrels: Path = CORPUS_DIR / "dev-qrels.tsv"
    hindsight_url: str | None = None  # also measure recall and retrieval on this Hindsight server
