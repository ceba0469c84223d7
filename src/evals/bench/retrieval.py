"""``recallops bench retrieval``: does recall find the incident we had before, in post-mortems of others?

The protocol is the corpus README's, step by step:

1. every record is imported as resolved history through the product's own import flow, with only
   service, date, summary, manifestation, root-cause details and mitigation (details and labels);
2. each query becomes an alert built from symptoms only (title, manifestation, impact), turned into a
   recall query the way the agent turns any alert into one;
3. recall goes through the agent's recall tool (``agent.core.tools.recall_ranked``), scoped to the
   query's service and across all services, from the bank without the query's own record (its
   ranks renumbered as a briefing would find them, ``evals.bench.without_own``);
4. ranking metrics (``evals.bench.ranking``) for the hybrid recall and, in the same run over the same
   bank, the fusion of its channels before the tool re-ranks a search across services (``fused``),
   its keyword-only and embedding-only channels; a Hindsight server too when given.
"""

import asyncio
import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.evidence import AlertInput, Evidence
from agent.core.tools import recall_ranked
from evals.bench.corpus import (
    corpus_id,
    first_service,
    import_row,
    joined,
    load_corpus,
    load_qrels,
    stored_id,
    values,
)
from evals.bench.enough import enough_queries, judged_by
from evals.bench.extraction import FreeFormBank, free_form_bank
from evals.bench.protocol import HYBRID, by_fold, fold_groups, per_query
from evals.bench.ranking import Qrels, evaluate, scored_queries
from evals.bench.without_own import WithoutOwn
from memory.bank import Recall
from memory.embedded.bank import EmbeddedBank
from memory.service import recall_similar_incidents
from web.app.container import Container
from web.app.sandbox import import_records, sandbox_settings

DEPTH = 10


@dataclass(frozen=True)
class Method:
    """A ranking the benchmark reports: the bank's channels, and whether the recall tool's re-ranking of
    a search across services applies (it does to the product's recall, not to its parts alone)."""

    channels: tuple[str, ...]
    reranked: bool


METHODS = {
    "hybrid": Method(("semantic", "keyword"), reranked=True),
    "fused": Method(("semantic", "keyword"), reranked=False),
    "bm25": Method(("keyword",), reranked=False),
    "embedding": Method(("semantic",), reranked=False),
}


@dataclass(frozen=True)
class Query:
    id: str
    service: str
    alert: AlertInput

    @property
    def description(self) -> str:
        return self.alert.description


def alert_for(record: Mapping[str, Any]) -> AlertInput:
    """Protocol step 2: an alert from symptoms only (title, manifestation, impact)."""
    return AlertInput(
        text=joined([*values(record.get("manifestation")), *values(record.get("impact_symptom"))]),
        service=first_service(record),
        title=str(record.get("title") or ""),
        incident_id=stored_id(record["id"]),
    )


def query_for(record: Mapping[str, Any]) -> Query:
    """Protocol step 2: the alert phrased as the agent phrases any alert for recall."""
    return Query(id=record["id"], service=first_service(record), alert=alert_for(record))


async def rank(bank: Recall, query: Query, *, scoped: bool, reranked: bool) -> list[str]:
    """Protocol step 3: the agent's recall tool (or, not ``reranked``, memory's order alone), from the
    bank as a briefing would find it, without the query's own record (``WithoutOwn``)."""
    service = query.service if scoped else None
    others = WithoutOwn(bank, stored_id(query.id))
    if reranked:
        evidence = Evidence(alert=query.alert, ranking_model=bank.ranking_model)
        found = await recall_ranked(others, evidence, query.description, service, DEPTH)
    else:
        found = await recall_similar_incidents(others, query.description, service=service, limit=DEPTH)
    return [corpus_id(incident.id) for incident in found]


ScopedRankings = dict[str, dict[str, list[str]]]  # scope -> query id -> ranked document ids


async def rankings_of(bank: Recall, queries: list[Query], *, reranked: bool) -> ScopedRankings:
    return {
        scope: {q.id: await rank(bank, q, scoped=scoped, reranked=reranked) for q in queries}
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
async def rows_bank(rows: list[dict[str, str]], workdir: Path | None = None) -> AsyncIterator[EmbeddedBank]:
    """Protocol step 1: a throwaway embedded bank holding ``rows``, imported as history."""
    with tempfile.TemporaryDirectory(prefix="recallops-retrieval-", dir=workdir) as tmp:
        container = await asyncio.to_thread(Container.build, sandbox_settings(Path(tmp) / "embedded"))
        try:
            bank = container.bank
            if not isinstance(bank, EmbeddedBank):
                raise TypeError("the retrieval baselines need the embedded driver")
            await import_records(container, rows, actor="retrieval-benchmark")
            yield bank
        finally:
            await container.aclose()


def corpus_bank(
    corpus: list[dict[str, Any]], workdir: Path | None = None
) -> AbstractAsyncContextManager[EmbeddedBank]:
    """The bank of every corpus record's curated fields."""
    return rows_bank([import_row(r) for r in corpus], workdir)


async def method_rankings(bank: EmbeddedBank, queries: list[Query]) -> dict[str, ScopedRankings]:
    """Hybrid recall, its fusion before re-ranking and each of its channels alone, over the same bank."""
    return {
        name: await rankings_of(bank.with_channels(*method.channels), queries, reranked=method.reranked)
        for name, method in METHODS.items()
    }


async def run_rankings(
    corpus_path: Path, qrels_path: Path, *, hindsight_url: str | None = None, workdir: Path | None = None
) -> tuple[dict[str, ScopedRankings], Qrels]:
    """Every method's ranking of every scored query, scoped and unscoped, and the judgments;
    ``TooLittle`` when there is no scored query (every figure would be 0 over none)."""
    corpus = load_corpus(corpus_path)
    qrels = load_qrels(qrels_path)
    queries = dev_queries(corpus, qrels)
    judged = judged_by(corpus_path, qrels_path)
    enough_queries(len(queries), 1, judged=judged, needs="a figure needs")
    async with corpus_bank(corpus, workdir) as bank:
        results = await method_rankings(bank, queries)
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
                results["hindsight"] = await rankings_of(container.bank, queries, reranked=True)
            finally:
                await container.aclose()
    return results, qrels


async def free_form_rankings(
    corpus_path: Path, qrels_path: Path, documents: Path, *, workdir: Path | None = None
) -> tuple[dict[str, ScopedRankings], FreeFormBank]:
    """The same queries against a bank built from the free-form texts in ``documents`` through the
    extractor (every draft accepted as it is), instead of the curated fields."""
    corpus = load_corpus(corpus_path)
    queries = dev_queries(corpus, load_qrels(qrels_path))
    built = free_form_bank(corpus, documents)
    async with rows_bank(built.rows, workdir) as bank:
        return await method_rankings(bank, queries), built


async def run_retrieval(
    corpus_path: Path, qrels_path: Path, *, hindsight_url: str | None = None, workdir: Path | None = None
) -> dict[str, dict[str, dict[str, float | int]]]:
    """Every method's pooled metrics, scoped and unscoped."""
    rankings, qrels = await run_rankings(
        corpus_path, qrels_path, hindsight_url=hindsight_url, workdir=workdir
    )
    return scores_of(rankings, qrels)


def beside(
    curated: Mapping[str, ScopedRankings], free_form: Mapping[str, ScopedRankings], qrels: Qrels
) -> list[dict[str, Any]]:
    """Hybrid R@5 and MRR@10 of the free-form bank beside the curated bank's, per scope, pooled and
    in each of the protocol's two halves of the queries."""
    halves = fold_groups(qrels)["halves"]
    rows = []
    for scope in curated[HYBRID]:
        both = {
            name: per_query(r[HYBRID][scope], qrels)
            for name, r in (("curated", curated), ("free-form", free_form))
        }
        for metric in ("recall@5", "mrr@10"):
            pooled = {name: by_fold(v, [list(v)])[0][metric] for name, v in both.items()}
            parts = {name: [h[metric] for h in by_fold(v, halves)] for name, v in both.items()}
            rows.append(
                {
                    "scope": scope,
                    "metric": metric,
                    **pooled,
                    "difference": round(pooled["free-form"] - pooled["curated"], 4),
                }
                | {"halves": parts}
            )
    return rows


def beside_markdown(rows: list[dict[str, Any]], built: FreeFormBank) -> str:
    lines = [
        "",
        f"Free-form bank: {built.from_text} records drafted from their text by the extractor and accepted as "
        f"drafted, {built.curated} with no text kept their curated fields; {built.dated_from_record} drafts "
        "took the record's date (their text gave none).",
        "",
        "| hybrid | scope | curated | free-form | difference | curated halves | free-form halves |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        halves = {
            name: " / ".join(f"{v:.3f}" for v in r["halves"][name]) for name in ("curated", "free-form")
        }
        lines.append(
            f"| {r['metric']} | {r['scope']} | {r['curated']:.3f} | {r['free-form']:.3f} "
            f"| {r['difference']:+.3f} | {halves['curated']} | {halves['free-form']} |"
        )
    return "\n".join(lines)


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
