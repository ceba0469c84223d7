"""Is every claim a briefing keeps supported in its role? The eval's own check, not the guard's report.

A claim's role is the list it is in. By its words it rests on one part of what it cites: the field
of a cited record (root cause, resolution steps, failed attempts, ...), a labelled section of a cited
runbook (first checks, mitigations, risky actions, the rest), or the cited profile pattern or
synthesis, whichever holds the largest share of the claim's content words (of parts that tie, one
its role may rest on). It is supported in its role when that part is one the role may rest on and
holds at least half its words:

- a likely cause on a root cause, a correction, a profile pattern or a synthesis;
- a first check on an error signature, a symptom, a resolution step, a runbook's first checks or the
  rest of it, a pattern or the alert;
- a fix on a resolution step, an outcome, a runbook's mitigations or the rest of it;
- a risky action on a failed attempt, a runbook's risky actions or a profile pattern (the profile's
  risky actions).

A claim that states a number (a pool size, a pod count) is supported only when that part holds every
number it states: such numbers are not paraphrase. A fix or first check that joins moves ("raise the
pool and add replicas") is asked again move by move, and a move resting on a failed attempt or a
runbook's risky action puts the claim out of role, however much of it the step that worked holds.

A fix that rests on a recorded failed attempt, whole or by one of its moves, is also counted on its
own: it is the one claim that sends an engineer to repeat what made things worse.

Claims are also counted by who wrote them (the claim's ``origin``): the model, or the evidence-only
assembler, which in LLM mode stands in for a list the product's guard left empty, so a model's in-role
support is read apart from that of the claims filled in for it. Every claim not supported in its role
is listed with its origin and the part it was placed on.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.core.guard import numbers
from agent.core.guard import parts as moves
from agent.core.overlap import terms
from evals.scenarios.faithfulness import SECTIONS, marker_numbers, strip_markers
from memory import runbooks
from memory.schema import RecordFormatError, parse_record

SUPPORTED = 0.5
RECORD_FIELDS = (
    "symptom",
    "error_signature",
    "root_cause",
    "resolution_steps",
    "runbook_used",
    "outcome",
    "failed_attempts",
)
ROLE_SOURCES: dict[str, frozenset[str]] = {
    "likely_causes": frozenset({"root_cause", "correction", "profile", "synthesis"}),
    "first_checks": frozenset(
        {
            "error_signature",
            "symptom",
            "resolution_steps",
            "runbook_used",
            "runbook",
            "runbook_first_checks",
            "profile",
            "alert",
        }
    ),
    "suggested_fix": frozenset(
        {"resolution_steps", "outcome", "runbook_used", "runbook", "runbook_mitigations"}
    ),
    "risky_actions": frozenset({"failed_attempts", "runbook_risky_actions", "profile"}),
}


# Who wrote a claim (``agent.core.schema.Origin``); a briefing stored before that was recorded has none.
ORIGINS = ("model", "evidence")
UNRECORDED = "unrecorded"


@dataclass
class RoleSupport:
    """Claims kept, and how many of them are supported in their role, per section and per origin."""

    kept: Counter[str] = field(default_factory=Counter)
    in_role: Counter[str] = field(default_factory=Counter)
    kept_by_origin: Counter[str] = field(default_factory=Counter)
    in_role_by_origin: Counter[str] = field(default_factory=Counter)
    failed_attempt_fixes: list[str] = field(default_factory=list)
    out_of_role: list[dict[str, Any]] = field(default_factory=list)

    def add(self, other: "RoleSupport") -> None:
        self.kept.update(other.kept)
        self.in_role.update(other.in_role)
        self.kept_by_origin.update(other.kept_by_origin)
        self.in_role_by_origin.update(other.in_role_by_origin)
        self.failed_attempt_fixes += other.failed_attempt_fixes
        self.out_of_role += other.out_of_role

    def rate(self) -> float | None:
        total = sum(self.kept.values())
        return sum(self.in_role.values()) / total if total else None

    def origin_rate(self, origin: str) -> float | None:
        kept = self.kept_by_origin[origin]
        return self.in_role_by_origin[origin] / kept if kept else None

    def as_dict(self) -> dict[str, Any]:
        origins = [*ORIGINS, *([UNRECORDED] if self.kept_by_origin[UNRECORDED] else [])]
        return {
            "in_role_rate": self.rate(),
            "by_role": {s: {"kept": self.kept[s], "in_role": self.in_role[s]} for s in SECTIONS},
            "by_origin": {
                o: {
                    "kept": self.kept_by_origin[o],
                    "in_role": self.in_role_by_origin[o],
                    "in_role_rate": self.origin_rate(o),
                }
                for o in origins
            },
            "failed_attempt_fixes": self.failed_attempt_fixes,
            "out_of_role": self.out_of_role,
        }


def runbook_parts(text: str) -> dict[str, str]:
    """A runbook by its own labels: its first checks, mitigations and risky actions, each a part of its
    own (a risky action sits in the same text as the mitigations, so the whole text cannot place it),
    and the rest (its title and any other section) as ``runbook``."""
    found = runbooks.sections(text)
    mitigations = runbooks.mitigations(text)
    named = {
        "runbook_first_checks": found.get("first checks", []),
        "runbook_mitigations": mitigations,
        "runbook_risky_actions": found.get("risky actions", []),
    }
    taken = {"first checks", "risky actions", *runbooks.MITIGATION_LABELS}
    rest = [text.splitlines()[0] if text else "", *(i for k, v in found.items() if k not in taken for i in v)]
    return {"runbook": "\n".join(rest)} | {name: "\n".join(items) for name, items in named.items() if items}


def parts_of(item: Mapping[str, Any]) -> dict[str, str]:
    """What a cited evidence entry offers a claim to rest on, by name."""
    text = str(item.get("text") or "")
    if item.get("kind") == "runbook":
        return runbook_parts(text)
    if item.get("kind") != "incident":
        return {str(item.get("kind")): text}
    try:
        record = parse_record(text)
    except RecordFormatError:
        return {"record": text}
    return {name: str(getattr(record, name) or "") for name in RECORD_FIELDS}


def resting_place(
    claim: str, parts: Mapping[str, str], fits: frozenset[str] = frozenset()
) -> tuple[str | None, float]:
    """The part holding the largest share of the claim's content words, and that share. Of parts that
    hold the same share, one whose name ``fits`` the claim's role is taken: a field of its role holds
    the claim as fully as any other does, so it is not placed on the other by the parts' order."""
    words = terms(claim)
    if not words:
        return None, 0.0
    best, share = None, 0.0
    for name, text in parts.items():
        found = len(words & terms(text)) / len(words)
        fitting = name.split(":", 1)[-1] in fits
        best_fits = best is not None and best.split(":", 1)[-1] in fits
        if found > share or (found == share > 0 and fitting and not best_fits):
            best, share = name, found
    return best, share


# What a fix or a first check never carries, move by move: what failed or made it worse.
CARRIES_NOTHING_FROM = frozenset({"failed_attempts", "runbook_risky_actions"})
JOINED_ROLES = frozenset({"suggested_fix", "first_checks"})


def carried(claim: str, parts: Mapping[str, str], section: str) -> str | None:
    """The failed attempt or risky action one move of a joined fix or check rests on (its part's name),
    if any: taken whole, such a claim can rest on the step that worked and carry the failed one in."""
    joined = moves(claim)
    if section not in JOINED_ROLES or len(joined) < 2:
        return None
    for move in joined:
        place, share = resting_place(move, parts, ROLE_SOURCES[section])
        name = place.split(":", 1)[1] if place else None
        if share >= SUPPORTED and name in CARRIES_NOTHING_FROM:
            return name
    return None


def check_roles(briefing: Mapping[str, Any]) -> RoleSupport:
    evidence = {int(e["n"]): e for e in briefing.get("evidence") or []}
    support = RoleSupport()
    for section in SECTIONS:
        for item in briefing.get(section) or []:
            text = str(item.get("statement") or item.get("text") or "")
            cited = list(item.get("citations") or []) or marker_numbers(str(item.get("text") or ""))
            parts = {
                f"{n}:{name}": value
                for n in cited
                if n in evidence
                for name, value in parts_of(evidence[n]).items()
            }
            claim = strip_markers(text)
            place, share = resting_place(claim, parts, ROLE_SOURCES[section])
            name = place.split(":", 1)[1] if place else None
            joined = carried(claim, parts, section)
            origin = str(item.get("origin") or UNRECORDED)
            support.kept[section] += 1
            support.kept_by_origin[origin] += 1
            if (
                share >= SUPPORTED
                and name is not None
                and (name == "record" or name in ROLE_SOURCES[section])
                and numbers(claim) <= numbers(parts[str(place)])
                and joined is None
            ):
                support.in_role[section] += 1
                support.in_role_by_origin[origin] += 1
            else:
                support.out_of_role.append(
                    {"role": section, "origin": origin, "text": text, "part": place, "share": round(share, 2)}
                )
            on_failed = name == "failed_attempts" and share >= SUPPORTED
            if section == "suggested_fix" and (on_failed or joined == "failed_attempts"):
                support.failed_attempt_fixes.append(text)
    return support
