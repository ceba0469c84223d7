"""What the best precedents say together: noise, disagreement, or nothing reliable.

A briefing that lists its matches one by one can mislead in three ways this module catches:

- **Noise.** The best precedents for this alert self-recovered or were false alarms: the past says
  "it cleared on its own", and that is said first, with the count and the dates. When a precedent
  that needed a fix is about as close as the best noise one, that is a dispute instead: a real fault
  may hide behind a lookalike. A noise precedent an engineer ruled out when this alert was resolved
  before (``Evidence.refuted``) says nothing of noise: the last time it looked like this, it was not.
- **Disagreement.** The top two precedents are both strong (or about as strong as each other) and give
  different root causes (few shared content words): the briefing says they disagree and lowers its
  confidence instead of listing both as likely.
- **No reliable precedent.** Nothing clears the match threshold: said as plainly as a match.

It reads the matches' calibrated confidence (``Match.confidence``, against the same thresholds the
bands and ``seen_before`` read) and the records' resolution kinds, nothing else, so the LLM and
evidence-only modes say the same thing about the same evidence.
"""

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from agent.core.evidence import Match
from memory.schema import RESOLUTION_KIND_LABELS
from memory.text import tokens

TOP = 3
# Two precedents count as rivals when both are strong matches, or the second's probability of being
# relevant is within this of the first's...
RIVAL_MARGIN = 0.1
# ...and their root causes share less than this share of the shorter one's content words.
AGREEMENT = 0.25
NO_RELIABLE = "No reliable precedent"
LIKELY_NOISE = "Likely noise"


@dataclass(frozen=True)
class Reading:
    """The verdict over the top precedents. ``noise`` and ``disputed`` are never both set."""

    top: list[Match]
    noise: list[Match]
    disputed: list[Match]

    @property
    def reliable(self) -> bool:
        return bool(self.top)


def _cause(match: Match) -> str:
    record = match.incident.record
    if match.corrections:
        return match.corrections[0]
    return record.root_cause if record is not None else match.incident.text


def is_noise(match: Match) -> bool:
    record = match.incident.record
    return record is not None and record.noise


def _agree(a: Match, b: Match) -> bool:
    left, right = tokens(_cause(a)), tokens(_cause(b))
    if not left or not right:
        return True
    return len(left & right) / min(len(left), len(right)) >= AGREEMENT


def _close(first: Match, second: Match) -> bool:
    return first.confidence.probability - second.confidence.probability <= RIVAL_MARGIN


def _rivals(first: Match, second: Match) -> bool:
    return second.confidence.strong or _close(first, second)


def read(ranked: list[Match], ruled_out: AbstractSet[str] = frozenset()) -> Reading:
    """The top precedents (those clearing the threshold), which of them are noise, and any dispute. A
    noise precedent in ``ruled_out`` (engineers marked it not related for this alert before) is left out:
    it is no sign of noise, nor of a fault."""
    top = [m for m in ranked if m.confidence.reliable and not (is_noise(m) and m.incident.id in ruled_out)][
        :TOP
    ]
    real = [m for m in top if not is_noise(m)]
    if top and is_noise(top[0]):
        if real and _close(top[0], real[0]):
            # A lookalike that cleared on its own and a real fault about as close: neither wins.
            return Reading(top=top, noise=[], disputed=[top[0], real[0]])
        return Reading(top=top, noise=[m for m in top if is_noise(m)], disputed=[])
    if len(real) >= 2 and _rivals(*real[:2]) and not _agree(*real[:2]):
        return Reading(top=top, noise=[], disputed=real[:2])
    return Reading(top=top, noise=[], disputed=[])


def _when(match: Match) -> str:
    record = match.incident.record
    return record.timestamp.date().isoformat() if record is not None else "date unknown"


def _kind(match: Match) -> str:
    record = match.incident.record
    return RESOLUTION_KIND_LABELS.get(record.resolution_kind, "") if record is not None else ""


def noise_sentence(reading: Reading) -> str:
    """The first thing a noise briefing says: how many of the best precedents needed nothing, and when."""
    cases = ", ".join(f"{m.incident.id} {_kind(m)} on {_when(m)} [{m.item.n}]" for m in reading.noise)
    real = [m for m in reading.top if not is_noise(m)]
    which = (
        "the closest past incident"
        if len(reading.top) == 1
        else f"{len(reading.noise)} of the {len(reading.top)} closest past incidents"
    )
    text = f"{LIKELY_NOISE}: {which} with this alert needed no fix ({cases})."
    if real:
        best = real[0]
        text += (
            f" One did need a fix: {best.incident.id} on {_when(best)} [{best.item.n}]; rule it out first."
        )
    return text


def dispute_sentence(reading: Reading) -> str:
    """The first thing a disputed briefing says: which precedents disagree, each cited."""
    a, b = reading.disputed
    if is_noise(a):
        return (
            f"The closest precedents disagree: {a.incident.id} {_kind(a)} on {_when(a)} [{a.item.n}], "
            f"but {b.incident.id} on {_when(b)} [{b.item.n}] is about as close and needed a fix; "
            "rule that fault out before treating this as noise."
        )
    return (
        f"The closest precedents disagree on the root cause: {a.incident.id} [{a.item.n}] and "
        f"{b.incident.id} [{b.item.n}] are about as close to this alert and give different causes, "
        "so neither is likely on its own; check which one applies before acting."
    )


def no_reliable_sentence() -> str:
    return f"{NO_RELIABLE}: nothing in memory clears the match threshold for this alert."
