"""How sure a recalled precedent is: a calibrated probability that it is relevant to the alert.

One number per recalled incident, and the only one: the bands, the order of the evidence,
``seen_before``, the planner's cross-service hop, "no reliable precedent", disagreement and the ranking
of briefing items all read ``Confidence.probability`` against the thresholds below. It is a logistic
regression over what recall and the record say (the channel ranks, how much of the record's signature,
symptom and root cause the alert repeats, status codes, the named components both mention, whether the
alert contradicts what the record says was absent, and whether it is the alert's service), passed
through an isotonic map that corrects its over- and under-confidence. ``recallops bench calibration
--fit`` fits it on labelled pairs (the public dev split and the project's scenarios) and writes
``confidence_fit.json`` beside this module.

Channel ranks mean something only for the ranker they were fitted on, so the fit names the embedding
model and channels it was made with. A bank ranking with another model still gets a number from the
same fit, but ``calibrated`` is False so callers and reports can say the figure is not calibrated.
"""

import bisect
import json
import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal, Protocol

from agent.core import overlap
from memory import RecalledIncident

Band = Literal["strong", "moderate", "weak"]
# Probability thresholds, chosen on the held-out reliability table (README, docs/evals.md):
# strong: more likely relevant than not, so stated as the precedent, not labeled uncertain;
# moderate: about one in three or better (the held-out F1 of "listed" is flat from 0.25 to 0.30; the
# higher end keeps more of what is listed relevant), so listed and briefed from, labeled uncertain;
# below it a record is no reliable precedent (a team's labels may move this listing bar down:
# ``team_fit.listing_bar``);
# settled: more than nine in ten of the held-out pairs above it were relevant, so on the alert's service
# it is a recurrence ("has happened before"), and a scoped precedent this sure by the fit in use and by
# the shipped one spares the planner its look across services (``agent.briefing.planner``).
STRONG = 0.5
MODERATE = 0.3
SETTLED = 0.8
# Probabilities closer than this are not told apart when ordering precedents: the shipped fit's
# held-out calibration error is of this size, so such ties keep the order retrieval gave
# (``tie_groups``). A team's fit tells apart no finer than its own held-out error
# (``team_fit.decide``), and never finer than this.
RESOLUTION = 0.05
FIT_RESOURCE = "confidence_fit.json"
# The signature's shared words are counted up to this, as well as taken as a share: a long error
# string repeated word for word says more than a two-word signature repeated whole.
SIGNATURE_WORDS = 8

_EVIDENCE: tuple[str, ...] = (
    "keyword_rr",
    "semantic_rr",
    "best_rr",
    "both_top5",
    "signature_repeated",
    "signature_words",
    "alert_covered",
    "symptom_overlap",
    "root_cause_overlap",
    "code_agrees",
    "code_conflicts",
    "contradicted",
    "components_shared",
)
# The evidence says whether the record is the same failure, whatever the service: the same words, error,
# codes and components weigh the same on another service's record. Whether it is the alert's service
# is one more input, and how much it is worth is for a team's own labels to say (the public dev split
# cannot: its judgments need an overlapping service by construction).
FEATURES: tuple[str, ...] = (*_EVIDENCE, "same_service")
CONTRADICTED = FEATURES.index("contradicted")


@dataclass(frozen=True)
class Confidence:
    """The calibrated probability that a precedent is relevant, its band, and whether the fit applies."""

    probability: float
    band: Band
    calibrated: bool
    bar: float = MODERATE  # the fit's listing bar: ``MODERATE``, or the one a team's labels chose
    resolution: float = RESOLUTION  # the fit's: probabilities closer than this are a tie

    @property
    def reliable(self) -> bool:
        """Worth briefing from: at or over the fit's listing bar."""
        return self.probability >= self.bar

    @property
    def settled(self) -> bool:
        """Nine in ten such were relevant: on the alert's own service and undisputed, a recurrence."""
        return self.probability >= SETTLED

    @property
    def strong(self) -> bool:
        """More likely relevant than not: stated as the precedent, not as a maybe."""
        return self.probability >= STRONG


@dataclass(frozen=True)
class Fit:
    """A logistic regression over ``FEATURES`` (standardised inputs, one weight each, an intercept),
    then an isotonic map of its output (knots ``iso_x`` -> ``iso_y``, linear between them) that
    corrects where the straight logistic is over- or under-confident. Without knots, the logistic alone.

    A record the alert contradicts is never more likely than ``contradicted_ceiling``, the share of the
    labelled pairs so contradicted that were relevant: the weights add evidence up, so a lookalike that
    repeats an alert's every word would otherwise outscore the contradiction that tells it apart, where
    no labelled pair says such a record is relevant.
    """

    ranking_model: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    intercept: float
    iso_x: tuple[float, ...] = ()
    iso_y: tuple[float, ...] = ()
    contradicted_ceiling: float = 1.0

    def logistic(self, values: Sequence[float]) -> float:
        z = self.intercept + sum(
            w * (v - m) / s for w, v, m, s in zip(self.weights, values, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))

    def probability(self, values: Sequence[float]) -> float:
        p = interpolate(self.logistic(values), self.iso_x, self.iso_y)
        return min(p, self.contradicted_ceiling) if values[CONTRADICTED] else p

    @property
    def bar(self) -> float:
        return MODERATE

    @property
    def resolution(self) -> float:
        return RESOLUTION

    def as_dict(self) -> dict[str, object]:
        return {
            "ranking_model": self.ranking_model,
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "weights": list(self.weights),
            "intercept": self.intercept,
            "isotonic": {"x": list(self.iso_x), "y": list(self.iso_y)},
            "contradicted_ceiling": self.contradicted_ceiling,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> "Fit":
        features = tuple(str(f) for f in data["features"])  # type: ignore[attr-defined]
        if features != FEATURES:
            raise ValueError(f"the confidence fit has features {features}, this code computes {FEATURES}")
        return cls(
            ranking_model=str(data["ranking_model"]),
            features=features,
            mean=tuple(float(v) for v in data["mean"]),  # type: ignore[attr-defined]
            scale=tuple(float(v) for v in data["scale"]),  # type: ignore[attr-defined]
            weights=tuple(float(v) for v in data["weights"]),  # type: ignore[attr-defined]
            intercept=float(data["intercept"]),  # type: ignore[arg-type]
            iso_x=tuple(float(v) for v in data.get("isotonic", {}).get("x", [])),  # type: ignore[attr-defined]
            iso_y=tuple(float(v) for v in data.get("isotonic", {}).get("y", [])),  # type: ignore[attr-defined]
            contradicted_ceiling=float(data.get("contradicted_ceiling", 1.0)),  # type: ignore[arg-type]
        )


def tie_groups(
    probabilities: Sequence[float], bar: float = MODERATE, resolution: float = RESOLUTION
) -> list[int]:
    """Each probability's tie group, 0 for the most likely: going down from the highest, a group takes
    every probability less than ``resolution`` (the fit's) below its first one. Two precedents 0.003
    apart are a tie wherever they fall, which steps of a fixed width (0.749 and 0.751) would tell
    apart. A group never spans the listing ``bar``: a tie ordered by service put a 0.27 record of the
    alert's service ahead of another service's 0.31, and the briefing said nothing cleared the bar while
    listing the 0.31."""
    order = sorted(range(len(probabilities)), key=lambda i: -probabilities[i])
    groups = [0] * len(probabilities)
    group, leader = -1, math.inf
    for i in order:
        if leader - probabilities[i] >= resolution or probabilities[i] < bar <= leader:
            group, leader = group + 1, probabilities[i]
        groups[i] = group
    return groups


def precedence(
    probabilities: Sequence[float],
    same_service: Sequence[bool],
    retrieved: Sequence[int],
    bar: float = MODERATE,
    resolution: float = RESOLUTION,
) -> list[int]:
    """The order a briefing gives its precedents, as indices: most likely relevant first; within a tie
    (``tie_groups``), the alert's service first, then the order retrieval gave (``retrieved``)."""
    groups = tie_groups(probabilities, bar, resolution)
    return sorted(range(len(probabilities)), key=lambda i: (groups[i], not same_service[i], retrieved[i]))


def interpolate(x: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    """Piecewise-linear through the knots, flat beyond the ends; ``x`` itself when there are none."""
    if not xs:
        return x
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, x)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


@lru_cache(maxsize=1)
def shipped_fit() -> Fit:
    """The fit shipped with the package (``recallops bench calibration --fit`` writes it)."""
    text = resources.files("agent.core").joinpath(FIT_RESOURCE).read_text(encoding="utf-8")
    return Fit.from_dict(json.loads(text)["fit"])


def _rr(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def _share(part: AbstractSet[str], whole: AbstractSet[str]) -> float:
    return len(part & whole) / len(whole) if whole else 0.0


def contradicted(incident: RecalledIncident, alert_text: str) -> bool:
    """Whether the alert contradicts what the recalled record says (``overlap.contradicts``): a lookalike
    ("pending 0" against a pool timeout), never more likely than the fit's ``contradicted_ceiling``."""
    record = incident.record
    return record is not None and overlap.contradicts(
        record.error_signature, record.symptom, alert_text, record.root_cause
    )


def features(
    incident: RecalledIncident, alert_text: str, *, same_service: bool, alertname: str | None = None
) -> list[float]:
    """The fit's inputs for one recalled incident, in ``FEATURES`` order.

    Word overlaps are over ``agent.core.overlap.terms`` (light stems, the alert's own name left out, status
    codes counted in the signature only when the alert names one); the two code features say whether a
    code the alert names is one the record names, or the record names only other codes (429 is not 502);
    ``contradicted`` is evidence against (``overlap.contradicts``: "pending 0" against a pool timeout);
    ``components_shared`` is the share of the alert's named components (database, pool, DNS, ...) the
    record names too, which meets a failure told in another service's words.
    """
    ranks = incident.why
    keyword, semantic = ranks.get("keyword"), ranks.get("semantic")
    best = min(ranks.values(), default=None)
    record = incident.record
    masked = frozenset({alertname.lower()}) if alertname else frozenset()
    alert = overlap.terms(alert_text, masked=masked)
    alert_codes = overlap.codes(alert_text)
    signature_text = record.error_signature if record else incident.text[:400]
    signature = overlap.terms(signature_text, with_codes=bool(alert_codes), masked=masked)
    symptom = overlap.terms(record.symptom, masked=masked) if record else frozenset()
    root_cause = overlap.terms(record.root_cause, masked=masked) if record else frozenset()
    core = signature | symptom | root_cause if record else overlap.terms(incident.text, masked=masked)
    core_text = f"{signature_text} {record.symptom} {record.root_cause}" if record else incident.text
    record_codes = overlap.codes(core_text)
    evidence = [
        _rr(keyword),
        _rr(semantic),
        _rr(best),
        1.0 if keyword is not None and semantic is not None and max(keyword, semantic) <= 5 else 0.0,
        _share(alert, signature),
        min(len(alert & signature), SIGNATURE_WORDS) / SIGNATURE_WORDS,
        len(alert & core) / max(len(alert), overlap.MIN_WORDS),
        _share(alert, symptom),
        _share(alert, root_cause),
        1.0 if alert_codes & record_codes else 0.0,
        1.0 if alert_codes and record_codes and not alert_codes & record_codes else 0.0,
        1.0 if contradicted(incident, alert_text) else 0.0,
        _share(overlap.components(core_text), overlap.components(alert_text)),
    ]
    return [*evidence, 1.0 if same_service else 0.0]


def same_scope(alert_service: str | None, record_service: str) -> bool:
    """Whether a record is on the alert's own ground: its service, or any service when the alert names
    none. A service-less alert (an MCP question, a bare webhook) has no "other" service to distrust;
    no labelled pair of that kind exists yet, so for it the fit is used outside the data it saw."""
    return alert_service is None or record_service == alert_service


def band(probability: float) -> Band:
    return "strong" if probability >= STRONG else "moderate" if probability >= MODERATE else "weak"


class Scorer(Protocol):
    """A fitted confidence model: the shipped ``Fit``, or a team's refit of it (``agent.core.team_fit``),
    the probability from which it lists a precedent, and how close two probabilities are a tie."""

    @property
    def ranking_model(self) -> str: ...

    @property
    def bar(self) -> float: ...

    @property
    def resolution(self) -> float: ...

    def probability(self, values: Sequence[float]) -> float: ...


def confidence_of(
    values: Sequence[float], *, ranking_model: str | None, fit: Scorer | None = None
) -> Confidence:
    """The calibrated probability for the inputs ``features`` computed, by ``fit`` (the shipped one
    when None). ``ranking_model`` is the bank's (``MemoryBank.ranking_model``); when it is unknown or not
    the one the fit was made with, the number is still given but marked ``calibrated=False``."""
    fit = fit or shipped_fit()
    p = round(fit.probability(values), 3)
    return Confidence(
        probability=p,
        band=band(p),
        calibrated=ranking_model == fit.ranking_model,
        bar=fit.bar,
        resolution=fit.resolution,
    )


def precedent_confidence(
    incident: RecalledIncident,
    alert_text: str,
    *,
    same_service: bool,
    alertname: str | None = None,
    ranking_model: str | None = None,
    fit: Scorer | None = None,
) -> Confidence:
    """The calibrated probability that ``incident`` is a relevant precedent for the alert."""
    values = features(incident, alert_text, same_service=same_service, alertname=alertname)
    return confidence_of(values, ranking_model=ranking_model, fit=fit)
