"""``recallops bench causes``: does the grader's "is the recorded root cause" tell the same failure apart?

The replay grades each briefing against the incident's own recorded root cause, and the grader's
agreement with the judgments (``replay.grader_agreement``) only counts stated precedents, where an
always-"not the same" grader agrees most of the time because most stated precedents are wrong. This
benchmark asks the grader's question directly of every pair of the stream: each incident against every
record before it (in the replay's time order), both with a root cause, the grader's
``cause_similarity`` between the two causes against the judgment (grade 2: the same failure; grade 1,
0 or none: not).

Reported for the grader's rule (``SAME_CAUSE`` or more is "the same"): precision and recall of "the same"
against "the same failure", the agreement, and the AUC of ``cause_similarity`` (the chance that a pair
of the same failure scores above a pair that is not, ties half), with the AUC of the cosine alone and of
the shared stems alone beside it. Each figure also over each half of the stream (by the later
incident). The counts are in the report, so runs over several corpora pool by adding them.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.similarity import Similarity, overlap, stems
from agent.resolution.grading import SAME_CAUSE, cause_similarity
from evals.bench.replay import HALVES, Incident, cell, stream_of, windows


@dataclass(frozen=True)
class CausePair:
    """An incident's root cause against an earlier record's, and whether they were judged the same
    failure; ``half`` is the half of the stream the incident falls in."""

    incident: str
    earlier: str
    cause: str
    earlier_cause: str
    same_failure: bool
    half: int


def cause_pairs(stream: Sequence[Incident]) -> list[CausePair]:
    """Every incident against every record before it, both with a recorded root cause."""
    half_of = {i: h for h, part in enumerate(windows(range(len(stream)), HALVES)) for i in part}
    return [
        CausePair(
            incident.id,
            earlier.id,
            incident.truth.root_cause,
            earlier.truth.root_cause,
            incident.judgments.get(earlier.id, 0) >= 2,
            half_of[position],
        )
        for position, incident in enumerate(stream)
        for earlier in stream[:position]
        if incident.truth.root_cause and earlier.truth.root_cause
    ]


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """The chance a positive scores above a negative (ties count half); None without both."""
    positives = [s for s, y in zip(scores, labels, strict=True) if y]
    negatives = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not positives or not negatives:
        return None
    above = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(above / (len(positives) * len(negatives)), 4)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def agreement(scores: Sequence[float], labels: Sequence[bool]) -> dict[str, Any]:
    """The grader's "the same" (``SAME_CAUSE`` or more) against the judgments, and its AUC."""
    said = [s >= SAME_CAUSE for s in scores]
    right = sum(s and y for s, y in zip(said, labels, strict=True))
    agreed = sum(s == y for s, y in zip(said, labels, strict=True))
    return {
        "pairs": len(labels),
        "same_failure": sum(labels),
        "said_same": sum(said),
        "said_same_rightly": right,
        "agreed": agreed,
        "precision": _share(right, sum(said)),
        "recall": _share(right, sum(labels)),
        "agreement": _share(agreed, len(labels)),
        "auc": auc(scores, labels),
    }


def measure(pairs: Sequence[CausePair], similarity: Similarity) -> dict[str, Any]:
    """The grader's figures over the pairs and over each half, with the AUC of its two parts."""
    similarity.prepare([t for p in pairs for t in (p.cause, p.earlier_cause)])
    scores = [cause_similarity(p.cause, p.earlier_cause, similarity) for p in pairs]
    labels = [p.same_failure for p in pairs]
    cosines = [similarity.cosine(p.cause, p.earlier_cause) for p in pairs]
    words = [overlap(stems(p.cause), stems(p.earlier_cause)) for p in pairs]
    halves = [
        agreement(
            [s for s, p in zip(scores, pairs, strict=True) if p.half == h],
            [p.same_failure for p in pairs if p.half == h],
        )
        for h in range(HALVES)
    ]
    return agreement(scores, labels) | {
        "same_cause": SAME_CAUSE,
        "auc_cosine": auc([c or 0.0 for c in cosines], labels) if similarity.embedder else None,
        "auc_stems": auc(words, labels),
        "halves": halves,
    }


def run_causes(corpus_path: Path, qrels_path: Path) -> dict[str, Any]:
    """The corpus's stream as the replay reads it, measured with the replay's embedder."""
    from memory.factory import open_embedder

    return measure(cause_pairs(stream_of(corpus_path, qrels_path)), Similarity(open_embedder()))


def markdown(report: dict[str, Any]) -> str:
    """The figures as a table: the stream and its halves."""
    columns = ("pairs", "same_failure", "said_same", "precision", "recall", "agreement", "auc")
    lines = [
        f'"The same cause" is cause_similarity {report["same_cause"]} or more, against pairs judged the '
        "same failure (grade 2).",
        "",
        "| span | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    spans = [("stream", report), *((f"half {n}", h) for n, h in enumerate(report["halves"], start=1))]
    for name, figures in spans:
        lines.append(f"| {name} | " + " | ".join(cell(figures[c]) for c in columns) + " |")
    lines += [
        "",
        f"AUC of the cosine alone {cell(report['auc_cosine'])}, of the shared stems alone "
        f"{cell(report['auc_stems'])}.",
    ]
    return "\n".join(lines)
