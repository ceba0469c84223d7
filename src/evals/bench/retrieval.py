"""``recallops bench retrieval``: does recall find the incident we had before, in post-mortems of others?

The protocol is the corpus README's, step by step:

1. every record is imported as resolved history through the product's own import flow, with only
   service, date, summary, manifestation, root-cause details and mitigation (details and labels);
2. each query becomes an alert built from symptoms only (title, manifestation, impact), turned into a
   recall query the way the agent turns any alert into one;
3. recall goes through ``memory.service.recall_similar_incidents`` (the agent's tool), scoped to the
   query's service and across all services, and the query's own record is dropped;
4. ranking metrics (``evals.bench.ranking``) for the hybrid recall and, in the same run over the same
   bank, its keyword-only and embedding-only channels; a Hindsight server too when given.
"""

import asyncio
import json
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.evidence import AlertInput
from evals.bench.ranking import Qrels, evaluate, scored_queries
from memory.bank import Recall
from memory.embedded.bank import EmbeddedBank
from memory.history import MAX_TEXT
from memory.service import recall_similar_incidents
from web.app.container import Container
from web.app.sandbox import import_records, sandbox_settings

DEPTH = 10
METHODS = {"hybrid": ("semantic", "keyword"), "bm25": ("keyword",), "embedding": ("semantic",)}


@dataclass(frozen=True)
class Query:
    id: str
    service: str
    description: str


def load_corpus(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not parts[2].strip().isdigit():
                continue  # the header, or a blank line
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def _first_service(record: Mapping[str, Any]) -> str:
    services = [s.strip() for s in record.get("services") or [] if s and s.strip()]
    return " ".join(services[0].split())[:255] if services else "unknown"


def _joined(values: Iterable[str]) -> str:
    return "; ".join(v.strip() for v in values if v and v.strip())


# The import refuses a post-mortem with an empty required field or a field over its size limit; a few
# public ones have gaps, and the protocol imports every record, so a gap is imported as this marker (the
# same words in every such record) and an oversized field is cut at the limit.
NOT_RECORDED = "not recorded"
REQUIRED = ("symptom", "error_signature", "root_cause", "resolution_steps", "outcome")


def _timestamp(date: str) -> str:
    """The record's date at midnight UTC; a year or a year and month alone means its first day."""
    parts = date.strip().split("-")
    if not parts[0].isdigit() or len(parts) > 3:
        raise ValueError(f"unusable date {date!r}: expected YYYY-MM-DD")
    year, month, day = [*parts, "01", "01"][:3]
    return f"{year}-{month.zfill(2)}-{day.zfill(2)}T00:00:00Z"


def import_row(record: Mapping[str, Any]) -> dict[str, str]:
    """Protocol step 1: one corpus record as a historical incident; labels and details stay out."""
    row = {
        "incident_id": record["id"],
        "service": _first_service(record),
        "timestamp": _timestamp(str(record.get("date") or "")),
        "symptom": (record.get("summary") or "").strip(),
        "error_signature": _joined(record.get("manifestation") or []),
        "root_cause": ((record.get("root_cause") or {}).get("details") or "").strip(),
        "resolution_steps": ((record.get("mitigation") or {}).get("details") or "").strip(),
        "runbook_used": "",
        "outcome": _joined((record.get("mitigation") or {}).get("labels") or []),
        "failed_attempts": "",
        "resolved_by": "",
    }
    filled = {key: (value or NOT_RECORDED) if key in REQUIRED else value for key, value in row.items()}
    return {key: value[:MAX_TEXT] for key, value in filled.items()}


def query_for(record: Mapping[str, Any]) -> Query:
    """Protocol step 2: an alert from symptoms only, phrased as the agent phrases any alert."""
    alert = AlertInput(
        text=_joined([*(record.get("manifestation") or []), *(record.get("impact_symptom") or [])]),
        service=_first_service(record),
        title=record.get("title") or "",
    )
    return Query(id=record["id"], service=_first_service(record), description=alert.description)


async def rank(bank: Recall, query: Query, *, scoped: bool) -> list[str]:
    """Protocol step 3: the agent's recall tool, one extra result asked for the query's own record."""
    found = await recall_similar_incidents(
        bank, query.description, service=query.service if scoped else None, limit=DEPTH + 1
    )
    return [incident.id for incident in found if incident.id != query.id][:DEPTH]


ScopedRankings = dict[str, dict[str, list[str]]]  # scope -> query id -> ranked document ids


async def rankings_of(bank: Recall, queries: list[Query]) -> ScopedRankings:
    return {
        scope: {q.id: await rank(bank, q, scoped=scoped) for q in queries}
        for scope, scoped in (("scoped", True), ("unscoped", False))
    }


def scores_of(
    rankings: Mapping[str, ScopedRankings], qrels: Qrels
) -> dict[str, dict[str, dict[str, float | int]]]:
    """The pooled metrics of every method and scope."""
    return {
        method: {scope: evaluate(ranked, qrels).as_dict() for scope, ranked in scopes.items()}
        for method, scopes in rankings.items()
    }


def dev_queries(corpus: list[dict[str, Any]], qrels: Qrels) -> list[Query]:
    """The scored queries (those with a grade-2 document), in corpus order."""
    wanted = set(scored_queries(qrels))
    return [query_for(r) for r in corpus if r["id"] in wanted]


@asynccontextmanager
async def corpus_bank(
    corpus: list[dict[str, Any]], workdir: Path | None = None
) -> AsyncIterator[EmbeddedBank]:
    """Protocol step 1: a throwaway embedded bank holding every corpus record, imported as history."""
    with tempfile.TemporaryDirectory(prefix="recallops-retrieval-", dir=workdir) as tmp:
        container = await asyncio.to_thread(Container.build, sandbox_settings(Path(tmp) / "embedded"))
        try:
            bank = container.bank
            if not isinstance(bank, EmbeddedBank):
                raise TypeError("the retrieval baselines need the embedded driver")
            await import_records(container, [import_row(r) for r in corpus], actor="retrieval-benchmark")
            yield bank
        finally:
            await container.aclose()


async def run_rankings(
    corpus_path: Path, qrels_path: Path, *, hindsight_url: str | None = None, workdir: Path | None = None
) -> tuple[dict[str, ScopedRankings], Qrels]:
    """Every method's ranking of every scored query, scoped and unscoped, and the judgments."""
    corpus = load_corpus(corpus_path)
    qrels = load_qrels(qrels_path)
    queries = dev_queries(corpus, qrels)
    results: dict[str, ScopedRankings] = {}
    async with corpus_bank(corpus, workdir) as bank:
        for method, channels in METHODS.items():
            results[method] = await rankings_of(bank.with_channels(*channels), queries)
    if hindsight_url:
        with tempfile.TemporaryDirectory(prefix="recallops-retrieval-", dir=workdir) as tmp:
            settings = sandbox_settings(
                Path(tmp) / "hindsight",
                memory="hindsight",
                hindsight_url=hindsight_url,
                bank_id=f"retrieval-bench-{uuid.uuid4().hex[:8]}",
            )
            container = await asyncio.to_thread(Container.build, settings)
            try:
                await import_records(container, [import_row(r) for r in corpus], actor="retrieval-benchmark")
                results["hindsight"] = await rankings_of(container.bank, queries)
            finally:
                await container.aclose()
    return results, qrels


async def run_retrieval(
    corpus_path: Path, qrels_path: Path, *, hindsight_url: str | None = None, workdir: Path | None = None
) -> dict[str, dict[str, dict[str, float | int]]]:
    """Every method's pooled metrics, scoped and unscoped."""
    rankings, qrels = await run_rankings(
        corpus_path, qrels_path, hindsight_url=hindsight_url, workdir=workdir
    )
    return scores_of(rankings, qrels)


COLUMNS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10", "empty@10", "queries")


def markdown_table(results: Mapping[str, Mapping[str, Mapping[str, float | int]]]) -> str:
    lines = [
        "| method | scope | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    for method, scopes in results.items():
        for scope, scores in scopes.items():
            cells = [f"{scores[c]:.3f}" if isinstance(scores[c], float) else str(scores[c]) for c in COLUMNS]
            lines.append(f"| {method} | {scope} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
