"""``recallops bench replay``: history lived through in time order, as a team would have lived it.

The stream is a corpus (each record an incident, its symptoms the alert, ``retrieval.alert_for``) or the
project's scenarios (``scenario_stream``: their alerts, between the records they load). For each
incident, oldest first: its alert is briefed through the product's own path (the real ``Agent``,
evidence-only, calibrated confidence, head) from a memory holding only what came before it; the briefing
is scored; then the incident is resolved: its record, when it has one, is imported as history and the
precedents its briefing showed get their relevance labels (``agent.resolution.labels``), which the
learning systems refit from (``agent.core.team_fit``, every ``REFIT_EVERY`` new labels, adopted only
when no worse on held-out folds). The judgments of an incident are read only after it has been briefed.

Systems, in one run over the same memories:

- **learning**: the product refitting from labels an engineer would give (simulated from the
  judgments: grade 2 "same failure", 1 "related", else "not related");
- **learning_inferred**: the same, from labels inferred from the post-mortems only;
- **frozen**: the shipped fit, never refitted;
- **bm25**: the keyword channel alone with the product's scope rule (the alert's service, all services
  when that finds nothing); its top result is the precedent when its score clears a threshold fitted
  on the first fifth of the stream;
- **memory_off**: the product with memory switched off.

Per incident: is the first precedent relevant (grade 2), is one in the first five (both read the
system's ranking, whether or not it states its first precedent), the product's 100/65/35/0 grade
against the incident's own post-mortem (an abstention is 0), and whether it abstained ("no reliable
precedent", or BM25 below its threshold). Recall is over incidents with an earlier relevant one;
abstention precision and recall are against "no earlier relevant incident"; ECE is over the
probabilities each system gave the precedents it showed (the pairs a resolution labels), against the
judgments.
"""

import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agent.briefing.loop import Agent
from agent.core.confidence import FEATURES, MODERATE, RESOLUTION, Scorer, precedence, shipped_fit
from agent.core.evidence import AlertInput
from agent.core.schema import Briefing, EvidenceItem
from agent.core.similarity import Similarity
from agent.core.team_fit import INFERRED_WEIGHT, Label, TeamFit, chance_ece, decide, reliability
from agent.resolution.grading import PostMortem, abstains, grade
from agent.resolution.labels import Mark, Shown, infer, relevant, shown_precedents
from evals.bench.corpus import details, import_row, load_corpus, load_qrels, stored_id
from evals.bench.protocol import paired_bootstrap
from evals.bench.ranking import Qrels, judged
from evals.bench.retrieval import alert_for
from memory.embedded.bank import EmbeddedBank
from memory.schema import service_tag
from web.app.agent import open_agent
from web.app.container import Container
from web.app.sandbox import import_records, sandbox_settings

SYSTEMS = ("learning", "learning_inferred", "frozen", "bm25", "memory_off")
LEARNING = ("learning", "learning_inferred")
WINDOWS = 5
# A change is adopted only when it holds on both halves of the stream (docs/evals.md).
HALVES = 2
REFIT_EVERY = 5
TOP = 5
METRICS = ("recall@1", "recall@5", "mean_grade")
T = TypeVar("T")


@dataclass(frozen=True)
class Scored:
    """One system's briefing of one incident."""

    incident: str
    relevant_earlier: bool
    top1: bool
    top5: bool
    grade: int
    abstained: bool
    pairs: tuple[tuple[float, bool], ...] = ()  # (probability given, relevant) of each precedent shown

    def as_row(self) -> dict[str, Any]:
        """What a later run is compared on, incident by incident (``replay_baseline``)."""
        return {
            "incident": self.incident,
            "relevant_earlier": self.relevant_earlier,
            "top1": self.top1,
            "top5": self.top5,
            "grade": self.grade,
            "abstained": self.abstained,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "Scored":
        """A row ``as_row`` wrote, read back: a missing key raises KeyError, a bad value ValueError."""
        return cls(
            str(row["incident"]),
            bool(row["relevant_earlier"]),
            bool(row["top1"]),
            bool(row["top5"]),
            int(row["grade"]),
            bool(row["abstained"]),
        )


@dataclass(frozen=True)
class Incident:
    """One incident of the stream: its alert, the judgments of the records before it (stored ids; 2 the
    same failure, 1 related), the post-mortem its briefing is graded against, and the history row it
    leaves in memory once resolved (None: it leaves nothing)."""

    id: str
    alert: AlertInput
    judgments: Mapping[str, int]
    truth: PostMortem
    row: dict[str, str] | None = None


@dataclass(frozen=True)
class Recorded:
    """History that happened between two incidents of the stream: imported, never briefed."""

    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class Segment:
    """A stretch of the stream over one memory, in time order: incidents and the history between them.
    ``setup`` gives the memory what has no date (runbooks) before the first."""

    events: Sequence[Incident | Recorded]
    setup: Callable[[Container], Awaitable[None]] | None = None

    @property
    def incidents(self) -> list[Incident]:
        return [e for e in self.events if isinstance(e, Incident)]


@dataclass
class Learner:
    """A learning system's labels and current fit."""

    inferred: bool
    labels: list[Label] = field(default_factory=list)
    fit: Scorer = field(default_factory=shipped_fit)
    since_refit: int = 0
    refits: int = 0
    adopted: int = 0

    def learn(self, new: list[Label]) -> None:
        self.labels += new
        self.since_refit += len(new)
        if self.since_refit < REFIT_EVERY:
            return
        self.since_refit = 0
        self.refits += 1
        seen = self.fit.labels if isinstance(self.fit, TeamFit) else 0
        decision = decide(self.labels, shipped_fit(), self.fit, seen=seen)
        if decision.adopted:
            self.fit = decision.fit
            self.adopted += 1


def ranked(
    briefing: Briefing, bar: float = MODERATE, resolution: float = RESOLUTION
) -> tuple[str | None, list[str]]:
    """The precedent the briefing states (None when it abstains), and its precedents in order: those it
    names as related first, then every other recalled incident as the briefing ranks them
    (``confidence.precedence``), so an abstention's first precedent is the closest record it names.
    ``bar`` and ``resolution`` are the fit's that briefed it: its listing bar, which a tie never spans,
    and how close two probabilities are a tie."""
    related = [r.id for r in briefing.related_incidents]
    others = [i for i in briefing.evidence if i.kind == "incident" and i.id and i.id not in related]
    positions = precedence(
        [i.probability or 0.0 for i in others],
        [_same_service(i) for i in others],
        [i.n for i in others],
        bar,
        resolution,
    )
    order = [*related, *(str(others[k].id) for k in positions)]
    data = briefing.model_dump(mode="json")
    stated = None if abstains(data) or not related else related[0]
    return stated, order


_SAME_SERVICE = FEATURES.index("same_service")


def _same_service(item: EvidenceItem) -> bool:
    return len(item.features) == len(FEATURES) and item.features[_SAME_SERVICE] == 1.0


def score_briefing(
    briefing: Briefing, incident: Incident, earlier: set[str], sim: Similarity, fit: Scorer | None = None
) -> Scored:
    """One briefing scored against the incident's judgments, its precedents in the order ``fit`` (the
    one that briefed it, the shipped one when None) gives them."""
    fit = fit or shipped_fit()
    stated, order = ranked(briefing, fit.bar, fit.resolution)
    data = briefing.model_dump(mode="json")
    relevant_ids = _relevant(incident.judgments)
    pairs = tuple(
        (c.probability, c.id in relevant_ids) for c in shown_precedents(data) if c.probability is not None
    )
    return Scored(
        incident=incident.id,
        relevant_earlier=bool(relevant_ids & earlier),
        top1=bool(order) and order[0] in relevant_ids,
        top5=bool(set(order[:TOP]) & relevant_ids),
        grade=grade(data, incident.truth, sim).score,
        abstained=stated is None,
        pairs=pairs,
    )


@dataclass(frozen=True)
class KeywordPick:
    """The BM25 baseline's look at one incident, before its threshold is known."""

    order: list[str]
    score: float
    cause: str
    text: str


async def keyword_pick(bank: EmbeddedBank, alert: AlertInput) -> KeywordPick:
    """BM25 over the alert's service, over all services when that finds nothing or it names none."""
    found = []
    if alert.service:
        found = await bank.keyword_scored(alert.description, tags=[service_tag(alert.service)], limit=TOP)
    found = found or await bank.keyword_scored(alert.description, tags=None, limit=TOP)
    if not found:
        return KeywordPick([], 0.0, "", "")
    top, score = found[0]
    cause = top.record.root_cause if top.record else ""
    return KeywordPick([i.id for i, _ in found], score, cause, top.text)


def keyword_briefing(pick: KeywordPick, stated: bool) -> dict[str, Any]:
    """The BM25 pick as the grader reads a briefing: its top record's cause as the likely cause."""
    if not stated:
        return {"likely_causes": [], "evidence": []}
    return {
        "likely_causes": [{"text": pick.cause, "citations": [2]}],
        "evidence": [{"n": 2, "kind": "incident", "id": pick.order[0], "text": pick.text}],
    }


def fit_threshold(picks: Sequence[tuple[KeywordPick, set[str], bool]]) -> float:
    """The score above which the top result is stated: the most right decisions on ``picks`` (the first
    fifth), a right decision being a relevant top result stated or an abstention with nothing relevant."""
    candidates = sorted({0.0, *(p.score for p, _, _ in picks)})
    return max(
        candidates,
        key=lambda t: sum(
            (p.score >= t and bool(p.order) and p.order[0] in rel) or (p.score < t and not has_relevant)
            for p, rel, has_relevant in picks
        ),
    )


def labels_for(shown: list[Shown], incident: Incident, *, inferred: bool, sim: Similarity) -> list[Label]:
    """The resolution's labels: simulated engineer marks from the judgments, or inferred ones."""
    out = []
    for c in shown:
        if not c.features:
            continue
        if inferred:
            found = infer(incident.truth.root_cause, c, sim)
            if found is None:
                continue
            mark: Mark = found
        else:
            g = incident.judgments.get(c.id, 0)
            mark = "same_failure" if g >= 2 else "related" if g == 1 else "not_related"
        weight = INFERRED_WEIGHT if inferred else 1.0
        out.append(Label(c.features, relevant(mark), weight, incident.id))
    return out


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def figures(rows: Sequence[Scored]) -> dict[str, Any]:
    """Recall over incidents with an earlier relevant one, grades, abstention, ECE of the pairs shown."""
    found = [r for r in rows if r.relevant_earlier]
    abstained = [r for r in rows if r.abstained]
    none = [r for r in rows if not r.relevant_earlier]
    pairs = [p for r in rows for p in r.pairs]
    predicted = [p for p, _ in pairs]
    # A figure over no incident is undefined (None, printed "-"), not 0, which would read as "always
    # wrong": recall where no incident had an earlier relevant one (a fifth of a short stream), the
    # abstention's precision where nothing abstained.
    return {
        "incidents": len(rows),
        "with_relevant_earlier": len(found),
        "recall@1": _mean([float(r.top1) for r in found]) if found else None,
        "recall@5": _mean([float(r.top5) for r in found]) if found else None,
        "mean_grade": _mean([float(r.grade) for r in rows]) if rows else None,
        "mean_grade_relevant_in_memory": _mean([float(r.grade) for r in found]) if found else None,
        "mean_grade_none_in_memory": _mean([float(r.grade) for r in none]) if none else None,
        "abstained": len(abstained),
        "abstain_precision": _mean([float(not r.relevant_earlier) for r in abstained]) if abstained else None,
        "abstain_recall": _mean([float(r.abstained) for r in none]) if none else None,
        "ece": reliability(predicted, [y for _, y in pairs])["ece"] if pairs else None,
        "ece_by_chance": chance_ece(predicted) if pairs else None,
        "shown_pairs": len(pairs),
    }


def missed(rows: Sequence[Scored]) -> list[str]:
    """The incidents whose first precedent was not relevant though an earlier relevant one existed."""
    return [r.incident for r in rows if r.relevant_earlier and not r.top1]


def windows(rows: Sequence[T], k: int = WINDOWS) -> list[list[T]]:
    """The stream cut into ``k`` consecutive parts of (nearly) equal size."""
    size, extra = divmod(len(rows), k)
    out: list[list[T]] = []
    start = 0
    for i in range(k):
        end = start + size + (1 if i < extra else 0)
        out.append(list(rows[start:end]))
        start = end
    return out


def per_incident(rows: Sequence[Scored], metric: str) -> dict[str, float]:
    if metric == "mean_grade":
        return {r.incident: float(r.grade) for r in rows}
    attr = "top1" if metric == "recall@1" else "top5"
    return {r.incident: float(getattr(r, attr)) for r in rows if r.relevant_earlier}


NO_INTERVAL: dict[str, float | None] = {"diff": None, "low": None, "high": None}
COMPARISONS = (
    ("learning", "frozen"),
    ("learning", "bm25"),
    ("learning_inferred", "frozen"),
    ("learning_inferred", "bm25"),
    ("frozen", "bm25"),
    ("learning", "memory_off"),
)


def bootstrap(results: Mapping[str, Sequence[Scored]]) -> list[dict[str, Any]]:
    """Paired bootstrap intervals (incidents resampled) over the whole stream and its last fifth."""
    rows: list[dict[str, Any]] = []
    for span in ("stream", "last fifth"):
        for a, b in COMPARISONS:
            left = results[a] if span == "stream" else windows(results[a])[-1]
            right = results[b] if span == "stream" else windows(results[b])[-1]
            for metric in METRICS:
                paired = per_incident(left, metric), per_incident(right, metric)
                # No incident to compare on is no interval, not a measured difference of 0 [0, 0].
                diff = paired_bootstrap(*paired) if set(paired[0]) & set(paired[1]) else NO_INTERVAL
                rows.append({"span": span, "a": a, "b": b, "metric": metric} | diff)
    return rows


def grader_agreement(results: Mapping[str, Sequence[Scored]]) -> dict[str, Any]:
    """How often the grade (above 0 or not) agrees with the judgments (the stated precedent relevant),
    over the product's briefings that stated a precedent."""
    rows = [
        r for name in ("learning", "learning_inferred", "frozen") for r in results[name] if not r.abstained
    ]
    right, wrong = [r for r in rows if r.top1], [r for r in rows if not r.top1]
    return {
        "briefings": len(rows),
        "agreement": _mean([float((r.grade > 0) == r.top1) for r in rows]) if rows else None,
        "graded_right_when_relevant": _mean([float(r.grade > 0) for r in right]) if right else None,
        "graded_right_when_not": _mean([float(r.grade > 0) for r in wrong]) if wrong else None,
    }


def corpus_incident(record: Mapping[str, Any], qrels: Qrels) -> Incident:
    """A corpus record as an incident of the stream: its symptoms as the alert, its judgments, its own
    root cause to grade against, and itself as the history it leaves."""
    cause = details(record.get("root_cause"))
    ident = stored_id(str(record["id"]))
    return Incident(
        id=ident,
        alert=alert_for(record),
        judgments=judged(qrels, ident),
        truth=PostMortem(root_cause=cause, precedents=frozenset()),
        row=import_row(record),
    )


def corpus_stream(corpus: list[dict[str, Any]], qrels: Qrels) -> list[Incident]:
    """The corpus in time order (stable: corpus order within a day)."""
    ordered = sorted(corpus, key=lambda r: import_row(r)["timestamp"])
    return [corpus_incident(record, qrels) for record in ordered]


@dataclass
class _Run:
    """What the stream has produced so far, carried from one segment to the next."""

    learners: dict[str, Learner]
    results: dict[str, list[Scored]] = field(default_factory=lambda: {name: [] for name in SYSTEMS})
    picks: list["Picked"] = field(default_factory=list)
    done: int = 0


async def _replay_segment(
    container: Container, segment: Segment, run: _Run, total: int, progress: Callable[[str], None]
) -> None:
    bank = container.bank
    if not isinstance(bank, EmbeddedBank):
        raise TypeError("the replay runs on the embedded driver")
    sim = Similarity(container.embedder)
    if segment.setup is not None:
        await segment.setup(container)
    seen: set[str] = set()
    async with AsyncExitStack() as stack:
        agents: dict[str, Agent] = {
            name: await stack.enter_async_context(open_agent(container, fit=shipped_fit()))
            for name in (*LEARNING, "frozen")
        }
        for event in segment.events:
            if isinstance(event, Recorded):
                await import_records(container, event.rows, actor="replay-benchmark")
                seen |= {str(row["incident_id"]) for row in event.rows}
                continue
            await _replay_incident(event, agents, bank, seen, run, sim)
            if event.row is not None:
                await import_records(container, [event.row], actor="replay-benchmark")
                seen.add(event.id)
            run.done += 1
            if run.done % 25 == 0:
                progress(f"{run.done}/{total} incidents replayed")


async def _replay_incident(
    incident: Incident,
    agents: Mapping[str, Agent],
    bank: EmbeddedBank,
    seen: set[str],
    run: _Run,
    sim: Similarity,
) -> None:
    """Every system's briefing of one incident, scored against the records in memory before it; the
    learning systems then learn its labels."""
    for name, agent in agents.items():
        learner = run.learners.get(name)
        if learner is not None:
            agent.fit = learner.fit
        briefing = await agent.brief(incident.alert)
        run.results[name].append(score_briefing(briefing, incident, seen, sim, agent.fit))
        if learner is not None:
            shown = shown_precedents(briefing.model_dump(mode="json"))
            learner.learn(labels_for(shown, incident, inferred=learner.inferred, sim=sim))
    off = await agents["frozen"].brief(incident.alert, memory_on=False)
    run.results["memory_off"].append(score_briefing(off, incident, seen, sim))
    pick = await keyword_pick(bank, incident.alert)
    run.picks.append((pick, incident, set(seen), grade_pick(pick, incident, sim)))


def _relevant(grades: Mapping[str, int]) -> set[str]:
    return {d for d, g in grades.items() if g >= 2}


def grade_pick(pick: KeywordPick, incident: Incident, sim: Similarity) -> tuple[int, int]:
    """The BM25 pick's grade when stated and when not, before its threshold is known (an empty pick is
    never stated)."""
    unstated = grade(keyword_briefing(pick, False), incident.truth, sim).score
    stated = grade(keyword_briefing(pick, True), incident.truth, sim).score if pick.order else unstated
    return stated, unstated


# pick, incident, the records in memory before it, the pick's grade when stated and when not
Picked = tuple[KeywordPick, Incident, set[str], tuple[int, int]]


def keyword_results(picks: Sequence[Picked]) -> list[Scored]:
    """The BM25 baseline scored, its threshold fitted on the first fifth of the stream."""
    threshold = fit_threshold(
        [
            (pick, _relevant(i.judgments), bool(_relevant(i.judgments) & earlier))
            for pick, i, earlier, _ in windows(picks)[0]
        ]
    )
    out = []
    for pick, incident, earlier, (if_stated, if_not) in picks:
        stated = bool(pick.order) and pick.score >= threshold
        relevant_ids = _relevant(incident.judgments)
        out.append(
            Scored(
                incident=incident.id,
                relevant_earlier=bool(relevant_ids & earlier),
                top1=bool(pick.order) and pick.order[0] in relevant_ids,
                top5=bool(set(pick.order[:TOP]) & relevant_ids),
                grade=if_stated if stated else if_not,
                abstained=not stated,
            )
        )
    return out


async def replay(
    segments: Sequence[Segment],
    *,
    workdir: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The stream's figures for every system, their windows, the intervals and the grader's agreement.
    Each segment gets its own memory; the learning systems carry their labels and fit across them."""
    run = _Run(learners={name: Learner(inferred=name == "learning_inferred") for name in LEARNING})
    total = sum(len(s.incidents) for s in segments)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="recallops-replay-", dir=workdir) as tmp:
        for n, segment in enumerate(segments):
            settings = sandbox_settings(Path(tmp) / f"memory-{n}", llm="evidence-only")
            container = await asyncio.to_thread(Container.build, settings)
            try:
                await _replay_segment(container, segment, run, total, progress)
            finally:
                await container.aclose()
    results = run.results | {"bm25": keyword_results(run.picks)}
    systems = {
        name: figures(rows)
        | {
            "windows": [figures(w) for w in windows(rows)],
            "halves": [figures(h) for h in windows(rows, HALVES)],
            "missed_first": missed(rows),
        }
        for name, rows in results.items()
    }
    for name, learner in run.learners.items():
        later = figures([r for w in windows(results[name])[1:] for r in w])
        systems[name] |= {
            "labels": len(learner.labels),
            "refits": learner.refits,
            "adopted": learner.adopted,
            "listing_bar": learner.fit.bar,
            "tie_resolution": learner.fit.resolution,
            "ece_after_first_fifth": later["ece"],
            "ece_after_first_fifth_by_chance": later["ece_by_chance"],
            "shown_pairs_after_first_fifth": later["shown_pairs"],
        }
    return {
        "systems": systems,
        "bootstrap": bootstrap(results),
        "grader": grader_agreement(results),
        "seconds": round(time.perf_counter() - started, 1),
        "rows": {name: [r.as_row() for r in rows] for name, rows in results.items()},
    }


async def run_replay(
    corpus_path: Path,
    qrels_path: Path,
    *,
    workdir: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The corpus replayed: one memory, empty at first, each incident's record kept once it is briefed."""
    stream = stream_of(corpus_path, qrels_path)
    return await replay([Segment(stream)], workdir=workdir, progress=progress)


def stream_of(corpus_path: Path, qrels_path: Path) -> list[Incident]:
    """A corpus file and its judgments as the replay's stream."""
    # Judgments name records as the import stores them (a page address holds no "/" or "#").
    qrels = {
        stored_id(q): {stored_id(d): g for d, g in docs.items()} for q, docs in load_qrels(qrels_path).items()
    }
    return corpus_stream(load_corpus(corpus_path), qrels)


def cell(value: object, digits: int = 3, sign: str = "") -> str:
    """A figure as the tables print it: "-" where there was nothing to count."""
    return f"{value:{sign}.{digits}f}" if isinstance(value, float) else "-" if value is None else str(value)


def difference(row: Mapping[str, Any], between: str = " | ") -> str:
    """A bootstrap row's mean difference and 95% interval (two table cells unless told otherwise)."""
    low, high, diff = (cell(row[k], sign="+") for k in ("low", "high", "diff"))
    return diff + between + ("-" if row["low"] is None else f"[{low}, {high}]")


COLUMNS = ("recall@1", "recall@5", "mean_grade", "abstain_precision", "abstain_recall", "ece")


def markdown(report: Mapping[str, Any]) -> str:
    """The headline table, per-fifth and per-half figures, the intervals and the grader's agreement."""
    systems = report["systems"]
    lines = ["| system | incidents | " + " | ".join(COLUMNS) + " |", "|---|---|" + "---|" * len(COLUMNS)]
    for name, figs in systems.items():
        lines.append(f"| {name} | {figs['incidents']} | " + " | ".join(cell(figs[c]) for c in COLUMNS) + " |")
    for title, key, digits in (("fifth", "windows", 2), ("half", "halves", 3)):
        lines += ["", f"Per {title} (recall@1 / recall@5 / mean grade):"]
        for name, figs in systems.items():
            cells = "  ".join(
                f"{cell(p['recall@1'], digits)}/{cell(p['recall@5'], digits)}/{cell(p['mean_grade'], 1)}"
                for p in figs[key]
            )
            lines.append(f"- {name}: {cells}")
    lines += ["", "Mean grade with a relevant precedent in memory / without:"]
    for name, figs in systems.items():
        lines.append(
            f"- {name}: {cell(figs['mean_grade_relevant_in_memory'], 1)} "
            f"({figs['with_relevant_earlier']}) / {cell(figs['mean_grade_none_in_memory'], 1)} "
            f"({figs['incidents'] - figs['with_relevant_earlier']})"
        )
    for name in LEARNING:
        figs = systems[name]
        chance = figs["ece_after_first_fifth_by_chance"]
        floor = (
            f" (by chance alone, median {chance['median']:.3f}, 95th percentile {chance['p95']:.3f})"
            if chance
            else ""
        )
        lines.append(
            f"{name}: {figs['labels']} labels, {figs['refits']} refits ({figs['adopted']} adopted), "
            f"listing bar {figs['listing_bar']:.2f}, ties within {figs['tie_resolution']:.3f}, "
            f"ECE after the first fifth {cell(figs['ece_after_first_fifth'])} over "
            f"{figs['shown_pairs_after_first_fifth']} pairs shown" + floor
        )
    lines += ["", "| span | a - b | metric | mean diff | 95% interval |", "|---|---|---|---|---|"]
    for r in report["bootstrap"]:
        lines.append(f"| {r['span']} | {r['a']} - {r['b']} | {r['metric']} | {difference(r)} |")
    g = report["grader"]
    lines += [
        "",
        f"Grader against the judgments: agrees on {cell(g['agreement'])} of {g['briefings']} stated "
        f"precedents (graded right {cell(g['graded_right_when_relevant'])} when relevant, "
        f"{cell(g['graded_right_when_not'])} when not).",
        f"Replayed in {report['seconds']} s.",
    ]
    return "\n".join(lines)
