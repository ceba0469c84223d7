"""The confidence fitted to a team: the shipped fit, refitted from the bank's own relevance labels.

The shipped fit (``agent.core.confidence``) was made on public post-mortems and the project's
scenarios; a team's incidents are not those. Every resolution labels the precedents its briefings
showed, and this module turns those labels into the team's fit without throwing the shipped one away:

- **the shipped fit is the prior.** The team's model recalibrates it, ``z = offset + slope * s +
  upper * max(s, 0) + sum(w_j * x_j)`` with ``s = logit(p_shipped)``, over the shipped fit's
  standardised inputs; at ``(0, 1, 0, 0...)`` it is the shipped fit exactly. A Gaussian prior is
  centred there, so five labels move it a little and five hundred move it a lot;
- **the upper half has its own slope** (``upper``): where a team's history differs from the public
  post-mortems, the shipped fit is most wrong at its top (the precedents it calls likely), and one
  slope for the whole range would bend its low end, which was right, to mend its top;
- **the labels choose how far they reorder** (``HOLDS``): the recalibration (offset, slope, upper) is
  held at precision ``PRIOR``; the inputs' extra weights, which are what reorders precedents, are held
  at one of ``HOLDS``, the one whose refit has the lowest held-out log loss on the labels. A few dozen
  labels say how often the shipped fit's precedents are right well before they say which of its
  inputs it weighs wrongly;
- **an engineer's mark outweighs an inferred label** (``INFERRED_WEIGHT``): the inferred one is only
  the grader's reading of the post-mortem;
- **a refit is adopted only when it is no worse**: its held-out log loss (folds of the labels'
  incidents, a fit never scoring its own incident) against the current fit's on the same labels;
- **the listing bar is the team's too** (``listing_bar``): the shipped bar (``MODERATE``) was chosen
  where listing a precedent was most useful on the shipped fit's held-out pairs (the F1 of "listed"
  against "relevant"); a refit chooses it the same way on its held-out probabilities of the team's
  labels, between ``BAR_FLOOR`` and ``MODERATE``. Where few of a team's precedents are relevant, a
  calibrated fit gives few probabilities over 0.30 and would otherwise fall silent on the right ones
  with the wrong; a precedent is then listed at its lower probability, which the briefing says.

The probabilities stay calibrated by construction (a logistic recalibration fitted by maximum
likelihood); ``reliability`` says how well, on whatever labels it is given.
"""

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from agent.core.confidence import FEATURES, MODERATE, RESOLUTION, Fit, Scorer

# Prior precision on the recalibration (offset, slope, upper), and the loosest on the inputs' weights.
PRIOR = 3.0
# The precisions the inputs' extra weights may be held at, loosest first: a refit is made at each and the
# labels' held-out log loss picks one (the tighter on a tie). Any one of them for every refit did worse:
# the loosest reordered small banks on a few relevant labels (below the shipped fit on three of five
# alert-shaped replays); the tightest alone, without ``upper``, kept the shipped fit's top end
# over-confident on the dev split (ECE after the first fifth 0.057 against 0.048).
HOLDS = (PRIOR, 10.0, 30.0)
INFERRED_WEIGHT = 0.5
FOLDS = 5
BINS = 10
# Draws of outcomes for the chance floor of the ECE (``chance_ece``), and their fixed seed.
CHANCE_DRAWS = 2000
CHANCE_SEED = 7
NEWTON_STEPS = 50
# A shipped probability of exactly 0 or 1 (the isotonic map's ends) is read as this close to it.
EDGE = 0.005
# The listing bar a team's labels may choose: from the shipped one down to this, in steps of
# ``BAR_STEP`` (a precedent more likely than one in three is always listed; one under one in ten never
# is); it moves only once the labels hold ``BAR_MIN_RELEVANT`` relevant ones (by weight).
BAR_FLOOR = 0.1
BAR_STEP = 0.01
BAR_MIN_RELEVANT = 5.0


@dataclass(frozen=True)
class Label:
    """One labelled pair: the confidence inputs of a precedent for an incident, and whether it was relevant.

    ``group`` is the labelled incident, so held-out folds keep an incident's labels together."""

    features: tuple[float, ...]
    relevant: bool
    weight: float = 1.0
    group: str = ""


@dataclass(frozen=True)
class TeamFit:
    """The shipped fit recalibrated on a team's labels (see the module docstring)."""

    base: Fit
    offset: float
    slope: float
    weights: tuple[float, ...]
    labels: int
    bar: float = MODERATE
    resolution: float = RESOLUTION
    upper: float = 0.0
    hold: float = PRIOR  # the precision its inputs' weights were held at

    @property
    def ranking_model(self) -> str:
        return self.base.ranking_model

    def probability(self, values: Sequence[float]) -> float:
        return _sigmoid(float(_design(self.base, [values])[0] @ self._coefficients()))

    def _coefficients(self) -> np.ndarray:
        return np.array([self.offset, self.slope, self.upper, *self.weights])

    def as_dict(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "offset": self.offset,
            "slope": self.slope,
            "weights": list(self.weights),
            "labels": self.labels,
            "bar": self.bar,
            "resolution": self.resolution,
            "upper": self.upper,
            "hold": self.hold,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], base: Fit) -> "TeamFit":
        if tuple(data["features"]) != FEATURES:
            raise ValueError("the team fit was made for other confidence features")
        weights = tuple(float(w) for w in data["weights"])
        offset, slope, labels = float(data["offset"]), float(data["slope"]), int(data["labels"])
        bar, resolution = float(data.get("bar", MODERATE)), float(data.get("resolution", RESOLUTION))
        upper, hold = float(data.get("upper", 0.0)), float(data.get("hold", PRIOR))
        return cls(base, offset, slope, weights, labels, bar, resolution, upper, hold)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def _logit(p: float) -> float:
    p = min(max(p, EDGE), 1.0 - EDGE)
    return math.log(p / (1.0 - p))


# The design's first columns, the recalibration (1, the shipped logit, its positive part): held at
# ``PRIOR`` whatever the inputs' weights are held at.
_RECALIBRATION = 3


def _design(base: Fit, rows: Sequence[Sequence[float]]) -> np.ndarray:
    """Per row: 1, the shipped fit's logit, its positive part, then the standardised inputs."""
    x = np.array(rows, dtype=float).reshape(len(rows), len(base.mean))
    standard = (x - np.array(base.mean)) / np.array(base.scale)
    shipped = np.array([[_logit(base.probability(row))] for row in x.tolist()])
    return np.hstack([np.ones((len(x), 1)), shipped, np.maximum(shipped, 0.0), standard])


def penalised_newton(
    z: np.ndarray, y: np.ndarray, weight: np.ndarray, target: np.ndarray, penalty: np.ndarray
) -> np.ndarray:
    """Weighted logistic regression with a Gaussian prior (``penalty`` precision around ``target``):
    Newton steps, each halved until the penalised loss goes down, so it cannot overshoot."""

    def loss(w: np.ndarray) -> float:
        margin = z @ w
        nll = weight * (np.logaddexp(0.0, margin) - y * margin)
        return float(nll.sum() + 0.5 * (penalty * (w - target) ** 2).sum())

    w = target.astype(float).copy()
    current = loss(w)
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        gradient = z.T @ (weight * (p - y)) + penalty * (w - target)
        hessian = (z * (weight * p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        size = 1.0
        while size > 1e-4 and loss(w - size * step) > current:
            size /= 2
        w = w - size * step
        improved, current = current - loss(w), loss(w)
        if float(np.abs(size * step).max()) < 1e-8 or improved < 1e-10:
            break
    return w


def refit(labels: Sequence[Label], base: Fit, *, hold: float = PRIOR) -> TeamFit:
    """The maximum a-posteriori recalibration of ``base`` on ``labels``: ``PRIOR`` on the recalibration,
    ``hold`` on each input's weight."""
    if not labels:
        return TeamFit(base, 0.0, 1.0, (0.0,) * len(base.mean), 0, hold=hold)
    z = _design(base, [label.features for label in labels])
    y = np.array([label.relevant for label in labels], dtype=float)
    weight = np.array([label.weight for label in labels], dtype=float)
    target = np.zeros(z.shape[1])
    target[1] = 1.0
    penalty = np.full(z.shape[1], hold)
    penalty[:_RECALIBRATION] = PRIOR
    w = penalised_newton(z, y, weight, target, penalty)
    weights = tuple(float(v) for v in w[_RECALIBRATION:])
    return TeamFit(base, float(w[0]), float(w[1]), weights, len(labels), upper=float(w[2]), hold=hold)


def fold_of(group: str, k: int = FOLDS) -> int:
    """A fixed fold per incident, the same on every run and every replica."""
    return zlib.crc32(group.encode("utf-8")) % k


def held_out(labels: Sequence[Label], base: Fit, *, k: int = FOLDS, hold: float = PRIOR) -> list[float]:
    """Each label's probability from a refit on the other folds' incidents."""
    predicted = [0.0] * len(labels)
    for fold in range(k):
        inside = [i for i, label in enumerate(labels) if fold_of(label.group, k) == fold]
        if not inside:
            continue
        fit = refit([label for label in labels if fold_of(label.group, k) != fold], base, hold=hold)
        for i in inside:
            predicted[i] = fit.probability(labels[i].features)
    return predicted


def log_loss(predicted: Sequence[float], labels: Sequence[Label]) -> float:
    """Weighted mean negative log likelihood."""
    total = sum(label.weight for label in labels)
    if not total:
        return 0.0
    loss = 0.0
    for p, label in zip(predicted, labels, strict=True):
        q = min(max(p, 1e-6), 1 - 1e-6)
        loss -= label.weight * (math.log(q) if label.relevant else math.log(1 - q))
    return loss / total


def listed_f1(predicted: Sequence[float], labels: Sequence[Label], bar: float) -> float:
    """The weighted F1 of "listed" (a probability at or over ``bar``) against "relevant"."""
    hit = sum(label.weight for p, label in zip(predicted, labels, strict=True) if p >= bar and label.relevant)
    listed = sum(label.weight for p, label in zip(predicted, labels, strict=True) if p >= bar)
    relevant = sum(label.weight for label in labels if label.relevant)
    return 2 * hit / (listed + relevant) if hit else 0.0


def listing_bar(predicted: Sequence[float], labels: Sequence[Label]) -> float:
    """The bar from ``MODERATE`` down to ``BAR_FLOOR`` with the best F1 of "listed" on ``predicted``
    (held-out probabilities of ``labels``), the higher bar on a tie; ``MODERATE`` until the labels hold
    ``BAR_MIN_RELEVANT`` relevant ones."""
    if sum(label.weight for label in labels if label.relevant) < BAR_MIN_RELEVANT:
        return MODERATE
    steps = round((MODERATE - BAR_FLOOR) / BAR_STEP)
    bars = [round(MODERATE - i * BAR_STEP, 2) for i in range(steps + 1)]
    return max(bars, key=lambda bar: (round(listed_f1(predicted, labels, bar), 9), bar))


@dataclass(frozen=True)
class Decision:
    """A refit and whether it is adopted: its held-out loss against the fit in use's, on the labels the
    fit in use never saw; and the refit's held-out ECE over every label."""

    fit: TeamFit
    held_out_loss: float
    current_loss: float
    held_out_ece: float

    @property
    def adopted(self) -> bool:
        return self.held_out_loss <= self.current_loss + 1e-12


def decide(labels: Sequence[Label], base: Fit, current: Scorer, *, seen: int = 0) -> Decision:
    """Refit on every label and judge it against ``current`` (fitted on the first ``seen`` labels, 0 for
    the shipped fit) where both are out of sample: the labels ``current`` never saw, scored by the refit
    from held-out folds and by ``current`` as it stands. The refit holds its weights at the one of
    ``HOLDS`` whose held-out log loss on every label is lowest, carries the listing bar its held-out
    probabilities choose, and tells probabilities apart no finer than its held-out ECE: a refit on few
    labels is not sure of the order of two records its own error cannot separate."""
    hold, predicted = min(
        ((hold, held_out(labels, base, hold=hold)) for hold in HOLDS),
        key=lambda option: (round(log_loss(option[1], labels), 9), -option[0]),
    )
    start = seen if seen < len(labels) else 0
    judged = list(labels[start:])
    ece = reliability(predicted, [label.relevant for label in labels])["ece"]
    return Decision(
        fit=replace(
            refit(labels, base, hold=hold),
            bar=listing_bar(predicted, labels),
            resolution=max(RESOLUTION, ece),
        ),
        held_out_loss=round(log_loss(predicted[start:], judged), 6),
        current_loss=round(log_loss([current.probability(label.features) for label in judged], judged), 6),
        held_out_ece=ece,
    )


def reliability(predicted: Sequence[float], relevant: Sequence[bool], bins: int = BINS) -> dict[str, Any]:
    """Equal-width bins of predicted probability: count, mean prediction, observed rate; and the ECE
    (the pair-weighted mean gap between prediction and observation)."""
    rows = []
    total = len(predicted) or 1
    ece = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [i for i, p in enumerate(predicted) if low <= p < high or (b == bins - 1 and p == 1.0)]
        if not members:
            continue
        mean = sum(predicted[i] for i in members) / len(members)
        observed = sum(relevant[i] for i in members) / len(members)
        ece += len(members) / total * abs(mean - observed)
        rows.append(
            {
                "bin": f"{low:.1f}-{high:.1f}",
                "pairs": len(members),
                "predicted": round(mean, 3),
                "observed": round(observed, 3),
            }
        )
    return {"bins": rows, "ece": round(ece, 4), "pairs": len(predicted)}


def chance_ece(predicted: Sequence[float], bins: int = BINS) -> dict[str, float]:
    """The ECE that a perfectly calibrated model giving these same probabilities shows by chance alone:
    its median and 95th percentile over outcomes drawn from the probabilities themselves.

    On a hundred-odd pairs the binned ECE is far from zero even for a calibrated model, so a measured
    ECE means little without it: within the floor it is what calibration looks like on so few pairs."""
    p = np.asarray(predicted, dtype=float)
    if not len(p):
        return {"median": 0.0, "p95": 0.0}
    members = np.zeros((len(p), bins))
    members[np.arange(len(p)), np.minimum((p * bins).astype(int), bins - 1)] = 1.0
    counts = members.sum(axis=0)
    filled = counts > 0
    mean = (p @ members)[filled] / counts[filled]
    drawn = np.random.default_rng(CHANCE_SEED).random((CHANCE_DRAWS, len(p))) < p
    observed = (drawn @ members)[:, filled] / counts[filled]
    ece = (np.abs(observed - mean) * counts[filled]).sum(axis=1) / len(p)
    return {
        "median": round(float(np.median(ece)), 4),
        "p95": round(float(np.quantile(ece, 0.95)), 4),
    }
