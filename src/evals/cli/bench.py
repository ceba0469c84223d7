"""``recallops bench ...``: benchmarks anyone can rerun, one module each under ``evals/bench``.

With ``--json`` a benchmark prints one JSON object on stdout and nothing else.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import typer

from evals.bench.sizes import Sizes
from evals.scenarios import DEFAULT_SCENARIOS, SHIPPED_SCENARIOS
from web.cli.common import refuse, run
from web.cli.text import hanging


class BenchResult(Protocol):
    def as_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=BenchResult)


def readable_corpus(ctx: typer.Context, path: Path | None) -> Path | None:
    """The corpus, once every line reads as a record: a bad line is named as the option's fault before
    a benchmark starts, not as a traceback from inside it."""
    return _readable(ctx, "corpus", path)


def readable_qrels(ctx: typer.Context, path: Path | None) -> Path | None:
    """The judgments, once every line reads as one and some judge a record of the corpus."""
    return _readable(ctx, "qrels", path)


def _readable(ctx: typer.Context, name: str, path: Path | None) -> Path | None:
    """Read ``path`` as the corpus or the judgments; whichever of the two is read second (they come in
    command-line order) checks, on what the first kept in ``ctx.meta``, that they are about each other."""
    from evals.bench.corpus import CorpusError, load_corpus, load_qrels

    if path is None:
        return path
    try:
        ctx.meta[name] = load_corpus(path) if name == "corpus" else load_qrels(path)
        corpus, qrels = ctx.meta.get("corpus"), ctx.meta.get("qrels")
        if corpus is not None and qrels is not None and not {r["id"] for r in corpus} & set(qrels):
            paths = {name: path, **{k: ctx.params[k] for k in ("corpus", "qrels") if k != name}}
            raise CorpusError(
                f"no query of {paths['qrels'].name} is a record of {paths['corpus'].name}: "
                "are they the same corpus?"
            )
    except CorpusError as exc:
        raise typer.BadParameter(str(exc)) from None
    return path


# Options several benchmarks take, said once.
CORPUS = typer.Option(
    ..., exists=True, dir_okay=False, callback=readable_corpus, help="Post-mortem corpus (JSONL)."
)
QRELS = typer.Option(
    ..., exists=True, dir_okay=False, callback=readable_qrels, help="Judgments: query, doc, grade (TSV)."
)
AS_JSON = typer.Option(False, "--json", help="Print one JSON object and nothing else.")


def bank_sizes(value: str, option: str) -> list[int]:
    """Bank sizes written ``1000,10000``: a size that is not a whole number of records names its option
    before a benchmark starts, not as a traceback (or a table of empty banks) from inside it."""
    try:
        sizes = [int(size) for size in value.split(",") if size.strip()]
    except ValueError:
        sizes = [0]
    if min(sizes, default=1) < 1:
        raise typer.BadParameter(f"{value!r} is not sizes like 1000,10000", param_hint=option)
    return sizes


def _print(result: R, *, as_json: bool, summary: Callable[[R], str]) -> None:
    """One JSON object with ``--json``, else the benchmark's own summary."""
    typer.echo(json.dumps(result.as_dict()) if as_json else summary(result))


app = typer.Typer(help="Benchmarks: figures anyone can rerun on their own machine.", no_args_is_help=True)


def readable_rankings(ctx: typer.Context, path: Path | None) -> Path | None:
    """An earlier retrieval run's hybrid rankings, read before this run starts."""
    from evals.bench.protocol import BaselineError, read_saved, saved_hybrid

    if path is not None:
        try:
            ctx.meta["baseline"] = saved_hybrid(read_saved(path), path.name)
        except BaselineError as exc:
            raise typer.BadParameter(str(exc)) from None
    return path


@app.command("retrieval")
def retrieval(
    ctx: typer.Context,
    corpus: Path = CORPUS,
    qrels: Path = QRELS,
    as_json: bool = AS_JSON,
    hindsight_url: str | None = typer.Option(
        None, "--hindsight-url", help="Also measure a running Hindsight server at this URL."
    ),
    bootstrap: bool = typer.Option(
        False, "--bootstrap", help="Paired bootstrap 95% intervals of hybrid against each channel."
    ),
    baseline: Path | None = typer.Option(
        None,
        exists=True,
        dir_okay=False,
        callback=readable_rankings,
        help="An earlier run's --json of the same corpus: also bootstrap against its hybrid.",
    ),
    min_mrr: float | None = typer.Option(
        None, "--min-mrr", help="Exit 1 if hybrid MRR@10 in either scope is below this, or the floor fails."
    ),
    documents: Path | None = typer.Option(
        None,
        "--documents",
        exists=True,
        file_okay=False,
        help="Free-form texts, one per corpus id: also rank a bank extracted from them.",
    ),
) -> None:
    """Recall@k, MRR@10, nDCG@10, empty@10 for hybrid (the recall tool), its fusion before re-ranking
    (fused), BM25 and embeddings; folds, floor, misses.
    With --documents, the same for a bank extracted from the free-form texts, beside the curated one."""
    from evals.bench import protocol
    from evals.bench import retrieval as retrieval_bench
    from evals.bench.enough import TooLittle

    previous = ctx.meta.get("baseline")
    if baseline is not None and previous is not None:
        try:
            protocol.check_baseline(previous, ctx.meta["qrels"], baseline.name)
        except protocol.BaselineError as exc:
            raise typer.BadParameter(str(exc), param_hint="--baseline") from None
    try:
        rankings, judgments = run(retrieval_bench.run_rankings(corpus, qrels, hindsight_url=hindsight_url))
    except TooLittle as exc:  # no scored query: every figure would be 0 over none
        refuse(str(exc))
    scores = retrieval_bench.scores_of(rankings, judgments)
    checks = protocol.report(
        rankings, judgments, bootstrap=bootstrap or previous is not None, baseline=previous
    )
    free_form: dict[str, Any] = {}
    if documents is not None:
        free_rankings, built = run(retrieval_bench.free_form_rankings(corpus, qrels, documents))
        free_form = {
            "methods": retrieval_bench.scores_of(free_rankings, judgments),
            "beside": retrieval_bench.beside(rankings, free_rankings, judgments),
            "bank": built.counts(),
            "rankings": free_rankings,
        }
    if as_json:
        out = {"methods": scores, "protocol": checks, "rankings": rankings}
        typer.echo(json.dumps(out | ({"free_form": free_form} if free_form else {}), indent=2))
    else:
        parts = [retrieval_bench.markdown_table(scores), protocol.markdown(checks)]
        if free_form:
            parts += [
                "\nFree-form bank (extracted from --documents):\n",
                retrieval_bench.markdown_table(free_form["methods"]),
                retrieval_bench.beside_markdown(free_form["beside"], built),
            ]
        typer.echo(hanging("\n".join(parts)))
    if min_mrr is not None:
        failed = [
            f"hybrid {scope} MRR@10 {s['mrr@10']:.3f} < {min_mrr}"
            for scope, s in scores["hybrid"].items()
            if float(s["mrr@10"]) < min_mrr
        ]
        failed += [f"channel floor fails: {c}" for c in checks["floor"] if not c["holds"]]  # type: ignore[attr-defined]
        for line in failed:
            typer.echo(line, err=True)
        if failed:
            raise typer.Exit(1)


@app.command("import")
def import_fields(
    corpus: Path | None = typer.Option(
        None, exists=True, dir_okay=False, callback=readable_corpus, help="Post-mortem corpus (JSONL)."
    ),
    documents: Path | None = typer.Option(
        None, exists=True, file_okay=False, help="Free-form texts, one per corpus id ('/' as '__', .txt)."
    ),
    notes: Path | None = typer.Option(
        None,
        "--notes",
        exists=True,
        file_okay=False,
        help="Score a team's own notes instead: a folder with notes/ and expected.jsonl, the fields a "
        "careful reader fills from each (corpora/casual-postmortems).",
    ),
    as_json: bool = AS_JSON,
) -> None:
    """Extraction against the curated fields: token precision, recall, F1 and fill rate per field."""
    from evals.bench import extraction as extraction_bench
    from evals.bench import notes as notes_bench

    if notes is not None and (corpus or documents):
        raise typer.BadParameter("scores the notes' own answers: leave out --corpus and --documents")
    if notes is None and not (corpus and documents):
        raise typer.BadParameter("give --corpus and --documents, or --notes")
    try:
        if notes is not None:
            result = notes_bench.run_notes_bench(notes)
            summary = notes_bench.markdown(result)
        else:
            assert corpus and documents
            result = extraction_bench.run_import_bench(corpus, documents)
            summary = extraction_bench.markdown(result)
    except ValueError as exc:  # no document of the folder is one of the corpus, or a notes folder unusable
        refuse(str(exc))
    typer.echo(json.dumps(result, indent=2) if as_json else summary)


def replay_source(
    corpus: Path | None, qrels: Path | None, scenarios: bool, scenario_dir: Path | None = None
) -> tuple[Path, Path] | Path:
    """The corpus and judgments to replay, or the directory of scenarios (the shipped ones unless
    ``scenario_dir``); refuses no stream, two, or half a corpus."""
    if (scenarios or scenario_dir) and (corpus or qrels):
        raise typer.BadParameter(
            "replays scenarios: leave out --corpus and --qrels", param_hint="--scenarios / --scenario-dir"
        )
    if scenario_dir:
        return scenario_dir
    if scenarios:
        return DEFAULT_SCENARIOS
    if not (corpus and qrels):
        given = "--corpus" if corpus else "--qrels" if qrels else None
        what = f"{given} alone is half a corpus" if given else "nothing to replay"
        raise typer.BadParameter(f"{what}: give --corpus and --qrels, or --scenarios")
    return corpus, qrels


def readable_baseline(ctx: typer.Context, path: Path | None) -> Path | None:
    """An earlier replay's rows, read before this one starts: a file that cannot be compared is the
    option's fault now, not after minutes of replay."""
    from evals.bench.protocol import BaselineError
    from evals.bench.replay_baseline import load_rows

    if path is not None:
        try:
            ctx.meta["baseline"] = load_rows(path)
        except BaselineError as exc:
            raise typer.BadParameter(str(exc)) from None
    return path


@app.command("replay")
def replay(
    ctx: typer.Context,
    corpus: Path | None = typer.Option(
        None, exists=True, dir_okay=False, callback=readable_corpus, help="Post-mortem corpus (JSONL)."
    ),
    qrels: Path | None = typer.Option(
        None, exists=True, dir_okay=False, callback=readable_qrels, help="Judgments: query, doc, grade (TSV)."
    ),
    scenarios: bool = typer.Option(
        False, "--scenarios", help="Replay the project's scenarios and their records instead of a corpus."
    ),
    scenario_dir: Path | None = typer.Option(
        None,
        "--scenario-dir",
        exists=True,
        file_okay=False,
        help="Replay the scenario YAML of this directory (record sets under its records/, else the "
        "shipped ones) instead: held-out scenarios, a team's own.",
    ),
    baseline: Path | None = typer.Option(
        None,
        exists=True,
        dir_okay=False,
        callback=readable_baseline,
        help="An earlier replay's --json of the same stream: also each system's change against it, "
        "incident by incident, over the stream and each half.",
    ),
    as_json: bool = AS_JSON,
) -> None:
    """History lived through in time order: each incident briefed from the incidents before it, scored,
    then resolved with its labels; learning, frozen, bm25 and memory off, whole stream, per fifth and
    per half. Replays a corpus (--corpus and --qrels) or scenarios (--scenarios, --scenario-dir)."""
    from evals.bench import replay as replay_bench
    from evals.bench import replay_baseline
    from evals.bench.protocol import BaselineError
    from evals.bench.scenario_stream import scenario_replay

    source = replay_source(corpus, qrels, scenarios, scenario_dir)

    def progress(line: str) -> None:
        typer.echo(line, err=True)

    try:
        if isinstance(source, Path):
            report = run(scenario_replay(source, progress=progress))
        else:
            report = run(replay_bench.run_replay(*source, progress=progress))
    except ValueError as exc:  # no history to replay, a record set the scenarios name and nobody has
        refuse(str(exc))
    text = "" if as_json else replay_bench.markdown(report)
    if baseline is not None:
        try:
            against = replay_baseline.compare(replay_baseline.rows_of(report), ctx.meta["baseline"])
        except BaselineError as exc:
            typer.echo(json.dumps(report, indent=2) if as_json else hanging(text))
            typer.echo(f"error: --baseline {baseline.name}: {exc}", err=True)
            raise typer.Exit(1) from None
        report["against_baseline"] = {"file": baseline.name} | against
        text += "\n" + replay_baseline.markdown(against, baseline.name)
    typer.echo(json.dumps(report, indent=2) if as_json else hanging(text))


@app.command("causes")
def causes(corpus: Path = CORPUS, qrels: Path = QRELS, as_json: bool = AS_JSON) -> None:
    """The grader's "is the recorded root cause" on every incident and earlier record of the replay's
    stream: precision, recall, agreement and AUC against the pairs judged the same failure, and per half."""
    from evals.bench import causes as causes_bench

    report = causes_bench.run_causes(corpus, qrels)
    typer.echo(json.dumps(report, indent=2) if as_json else causes_bench.markdown(report))


@app.command("rerank")
def rerank(
    corpus: Path = CORPUS,
    qrels: Path = QRELS,
    depth: int = typer.Option(30, min=1, max=150, help="Candidates recalled per query and re-ranked."),
    as_json: bool = AS_JSON,
) -> None:
    """The relevance model re-ranking recall's first candidates, on held-out folds: R@1, R@5, MRR@10
    against recall's order and BM25, scoped and unscoped, with intervals and halves."""
    from evals.bench import rerank as rerank_bench
    from evals.bench.enough import TooLittle

    try:
        report = run(rerank_bench.run_rerank(corpus, qrels, depth=depth))
    except TooLittle as exc:  # fewer scored queries than folds, or pairs all relevant or none
        refuse(str(exc))
    typer.echo(json.dumps(report, indent=2) if as_json else hanging(rerank_bench.markdown(report)))


@app.command("calibration")
def calibration(
    corpus: Path = CORPUS,
    qrels: Path = QRELS,
    scenarios: Path = typer.Option(
        DEFAULT_SCENARIOS,
        "--scenarios",
        exists=True,
        file_okay=False,
        show_default=SHIPPED_SCENARIOS,
        help="Scenario YAML whose pairs join.",
    ),
    fit: bool = typer.Option(False, "--fit", help="Also fit on every pair and write the shipped fit."),
    out: Path | None = typer.Option(
        None, dir_okay=False, help="Where --fit writes (default: the package's)."
    ),
    as_json: bool = AS_JSON,
) -> None:
    """Reliability table and ECE of the precedent confidence on held-out folds (dev split and the
    scenarios' labelled pairs); --fit refits it."""
    from evals.bench import calibration as calibration_bench
    from evals.bench.enough import TooLittle
    from evals.bench.scenario_pairs import scenario_pairs

    fit_out = (out or calibration_bench.default_fit_path()) if fit else None
    try:
        pairs, ranking_model = run(calibration_bench.dev_pairs(corpus, qrels))
        pairs += run(scenario_pairs(scenarios))
        report = calibration_bench.calibrate(pairs, ranking_model, fit_out=fit_out)
    except TooLittle as exc:  # no scored query, pairs all relevant or none, fewer groups than folds
        refuse(str(exc))
    typer.echo(json.dumps(report, indent=2) if as_json else hanging(calibration_bench.markdown_table(report)))


@app.command("recall")
def recall(
    sizes: str = typer.Option("1000,10000,100000", help="Bank sizes, comma-separated."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per size, one a line."),
    hindsight_url: str | None = typer.Option(
        None, "--hindsight-url", help="Also run a small workload against a running Hindsight server."
    ),
) -> None:
    """Embedded recall p50/p95 (scoped and unscoped), retain/s and reopen time per size, against the floor."""
    from evals.bench import recall as recall_bench

    counts = bank_sizes(sizes, "--sizes")
    results = run(recall_bench.run_recall(counts)) if counts else []
    if hindsight_url:
        results.append(run(recall_bench.run_hindsight(hindsight_url)))
    if as_json:
        for result in results:
            typer.echo(json.dumps(result))
        return
    typer.echo(recall_bench.markdown_table([r for r in results if "driver" not in r]))
    for result in results:
        if "driver" in result:
            typer.echo(f"hindsight ({result['size']} records): {json.dumps(result)}")


@app.command("briefing")
def briefing(
    incidents: int = typer.Option(10_000, min=1, help="Generated incidents in the embedded bank."),
    alerts: int = typer.Option(200, min=1, help="Alerts briefed and stored (after 5 warm-up alerts)."),
    bank_dir: Path | None = typer.Option(None, help="Keep (or reuse) the generated bank in this directory."),
    exact: bool = typer.Option(False, help="Embed every generated record (slow) instead of one per family."),
    as_json: bool = AS_JSON,
) -> None:
    """Alert to stored briefing in evidence-only mode: p50/p95, and the recall share of it."""
    from evals.bench import briefing as briefing_bench

    result = run(
        briefing_bench.run_briefing_bench(incidents=incidents, alerts=alerts, bank_dir=bank_dir, exact=exact)
    )
    _print(result, as_json=as_json, summary=briefing_bench.summary)


@app.command("startup")
def startup(
    runs: int = typer.Option(5, min=1, help="Timed runs of each command (after one untimed run)."),
    as_json: bool = AS_JSON,
) -> None:
    """Wall and CPU seconds from the shell to exit for --help, ask and check-action, vs `python -c pass`."""
    from evals.bench import startup as startup_bench

    _print(startup_bench.run_startup_bench(runs=runs), as_json=as_json, summary=startup_bench.summary)


@app.command("history")
def history(
    records: int = typer.Option(1000, min=1, help="Generated post-mortems imported into a fresh bank."),
    as_json: bool = AS_JSON,
) -> None:
    """Post-mortem import records/s (store + memory, real embeddings), against the embedder alone."""
    from evals.bench import history as history_bench

    result = run(history_bench.run_history_bench(records=records))
    _print(result, as_json=as_json, summary=history_bench.summary)


@app.command("ingest")
def ingest(
    url: str = typer.Option("http://127.0.0.1:8000", help="A running RecallOps server."),
    token: str = typer.Option(..., envvar="RECALLOPS_BENCH_TOKEN", help="A token with alerts:write."),
    alerts: int = typer.Option(2000, min=1, help="Alerts to post, one Alertmanager payload each."),
    concurrency: int = typer.Option(16, min=1, help="Senders posting back to back (closed loop)."),
    rate: float | None = typer.Option(None, min=0.1, help="Instead, pace at this many alerts/s (open loop)."),
    per_payload: int = typer.Option(
        1, min=1, max=1000, help="Alerts per webhook payload (grouped delivery)."
    ),
    as_json: bool = AS_JSON,
) -> None:
    """Intake alerts/s and p50/p95/p99 acknowledgement latency, with the server's /healthz rate as floor."""
    from evals.bench import ingest as ingest_bench

    result = run(
        ingest_bench.run_ingest(
            url, token, alerts=alerts, concurrency=concurrency, rate=rate, per_payload=per_payload
        )
    )
    _print(result, as_json=as_json, summary=ingest_bench.summary)


@app.command("import-health")
def import_health(
    url: str = typer.Option("http://127.0.0.1:8000", help="A running RecallOps server."),
    token: str = typer.Option(..., envvar="RECALLOPS_BENCH_TOKEN", help="A token with incidents:write."),
    body: str = typer.Option("junk", help="junk (one-character lines, all rejected) or records."),
    mib: float = typer.Option(2.0, min=0.01, max=20, help="Size of each import's body."),
    runs: int = typer.Option(3, min=1, help="Imports, one after another (figures are medians)."),
    as_json: bool = AS_JSON,
) -> None:
    """/healthz p50/p99 while a large import runs, against /healthz alone in the same run."""
    from evals.bench import import_health as import_health_bench

    if body not in ("junk", "records"):
        raise typer.BadParameter("junk or records", param_hint="--body")
    kind: import_health_bench.Body = "junk" if body == "junk" else "records"
    result = run(import_health_bench.run_import_health(url, token, body=kind, mib=mib, runs=runs))
    _print(result, as_json=as_json, summary=import_health_bench.summary)


@app.command("soak")
def soak(
    urls: list[str] = typer.Option(..., "--url", help="A replica; repeat for each (alerts go round-robin)."),
    token: str = typer.Option(
        ..., envvar="RECALLOPS_BENCH_TOKEN", help="A token with alerts:write, incidents:write and read."
    ),
    minutes: float = typer.Option(2.0, min=0.05, max=240, help="How long the storm lasts."),
    concurrency: int = typer.Option(8, min=1, max=256, help="Senders posting back to back (closed loop)."),
    groups: int = typer.Option(20, min=1, max=1000, help="Services the alerts spread over."),
    resolve_every: int = typer.Option(
        50, min=2, help="Every n-th request resolves the oldest open incident."
    ),
    drain_timeout: float = typer.Option(600.0, min=1, help="Seconds to wait for briefings and memory after."),
    as_json: bool = AS_JSON,
) -> None:
    """Alert storm across replicas with resolves mixed in: alerts/s, p99, errors, lost and duplicated rows.

    Exits 1 unless every request succeeded and nothing was lost or duplicated.
    """
    from evals.bench import soak as soak_bench

    result = run(
        soak_bench.run_soak(
            urls,
            token,
            minutes=minutes,
            concurrency=concurrency,
            groups=groups,
            resolve_every=resolve_every,
            drain_timeout_s=drain_timeout,
        )
    )
    _print(result, as_json=as_json, summary=soak_bench.summary)
    if not result.clean:
        raise typer.Exit(1)


@app.command("pages")
def pages(
    incidents: int = typer.Option(1000, min=10, help="Incidents stored (three in four resolved)."),
    runs: int = typer.Option(30, min=1, help="Timed requests per page (after 3 warm-up requests)."),
    as_json: bool = AS_JSON,
) -> None:
    """Server-side render time of each page (p50/p95), with /healthz in the same run as the floor."""
    from evals.bench import pages as pages_bench

    result = pages_bench.run_pages_bench(incidents=incidents, runs=runs)
    _print(result, as_json=as_json, summary=pages_bench.summary)


@app.command("all")
def all_benchmarks(
    out: Path = typer.Option(..., "--out", file_okay=False, help="Directory for report.json and report.md."),
    ingest_alerts: int = typer.Option(Sizes.ingest_alerts, min=1, help="Alerts posted."),
    ingest_concurrency: int = typer.Option(Sizes.ingest_concurrency, min=1, help="Senders posting at once."),
    ingest_database_url: str | None = typer.Option(
        None, "--ingest-database-url", help="Also measure intake with the server on this PostgreSQL database."
    ),
    recall_sizes: str = typer.Option("1000", help="Recall bank sizes, e.g. 1000,10000,100000."),
    briefing_incidents: int = typer.Option(
        Sizes.briefing_incidents, min=1, help="Generated incidents in the briefing benchmark's bank."
    ),
    briefing_alerts: int = typer.Option(Sizes.briefing_alerts, min=1, help="Alerts briefed and stored."),
    pages_incidents: int = typer.Option(Sizes.pages_incidents, min=1, help="Incidents stored for the pages."),
    corpus: Path = typer.Option(Sizes.corpus, help="Retrieval corpus (JSONL)."),
    qrels: Path = typer.Option(Sizes.qrels, help="Retrieval judgments (TSV)."),
    hindsight_url: str | None = typer.Option(
        None, "--hindsight-url", help="Also measure recall and retrieval on a running Hindsight server."
    ),
) -> None:
    """Every benchmark at small default sizes (minutes), the machine described; larger with the flags."""
    from evals.bench import report as report_bench

    sizes = Sizes(
        ingest_alerts=ingest_alerts,
        ingest_concurrency=ingest_concurrency,
        ingest_database_url=ingest_database_url,
        recall_sizes=tuple(bank_sizes(recall_sizes, "--recall-sizes")),
        briefing_incidents=briefing_incidents,
        briefing_alerts=briefing_alerts,
        pages_incidents=pages_incidents,
        corpus=corpus,
        qrels=qrels,
        hindsight_url=hindsight_url,
    )
    report = report_bench.run_and_write(sizes, out, lambda step: typer.echo(f"running {step} ...", err=True))
    typer.echo(f"wrote {out / 'report.json'} and {out / 'report.md'}", err=True)
    for step, error in report["errors"].items():
        typer.echo(f"{step} failed: {error}", err=True)
    if report["errors"]:
        raise typer.Exit(1)
