"""Grading a stored briefing against what really fixed the incident: 100, 65, 35 or 0.

- **100**: the top likely cause is the recorded root cause, or cites the precedent the post-mortem
  names (its id in the post-mortem, or the incident this one recurs) or an engineer marked the same
  failure;
- **65**: a later likely cause is;
- **35**: no likely cause is, but a related incident the briefing recalled is that precedent, or its
  recorded root cause is the one found this time;
- **0**: wrong, or nothing.

A briefing that says "no reliable precedent" is graded as that abstention, never on the uncertain
candidates it lists: 0, marked ``abstained``, and said to be wrong when the post-mortem names a
precedent (or an engineer marked one the same failure) or one of the recalled records had the recorded
root cause (memory held the answer), right otherwise. So a grade above 0 always means the briefing stated
something that turned out true.

"Is the recorded root cause" is field similarity (``cause_similarity``): the two root causes' meaning
(the embedder's cosine) weighed ``COSINE_WEIGHT`` and the share of stems they share the rest, over
``SAME_CAUSE`` (the stems alone without an embedder). Teams tell the same failure in other words on
other services, which the cosine meets and shared stems miss: with the two weighed half each over 0.5,
the test found 16 % of the pairs judged the same failure on the project's corpora. Measured with
``recallops bench causes`` (docs/evals.md, "The grader's cause test"). The grader is deterministic (the
same briefing, resolution and embedder give the same grade), so grades can be compared over time.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agent.briefing.precedents import NO_RELIABLE
from agent.core.similarity import Similarity, overlap, stems
from memory.schema import parse_record
from memory.text import INCIDENT_ID

Score = Literal[100, 65, 35, 0]
SCORES: tuple[Score, ...] = (100, 65, 35, 0)
# Two root causes are the same at this ``cause_similarity``: the cosine's share of it, and the bar, chosen
# together on every incident and earlier record of the dev split and the project's corpora.
COSINE_WEIGHT = 0.625
SAME_CAUSE = 0.52
_PREFIX = re.compile(
    r"^(?:Uncertain \([a-z]+ match\):\s*)?"
    r"(?:Corrected root cause of|Root cause recorded for)\s+\S+?(?:\s*\([^)]*\))?:\s*"
)
_MARKER = re.compile(r"\s*\[\d+\]")


@dataclass(frozen=True)
class PostMortem:
    """What the grader needs of a resolution: its root cause, the precedents it names, and those an
    engineer marked the same failure. A mark names a precedent as plainly as the post-mortem's text does,
    and meets what the cause test cannot: the same failure told in another service's words."""

    root_cause: str
    precedents: frozenset[str]
    marked: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        *,
        fields: Iterable[str],
        root_cause: str,
        recurrence_of: str | None,
        marked: Iterable[str] = (),
    ) -> "PostMortem":
        named = {m.group(0) for text in fields for m in INCIDENT_ID.finditer(text)}
        if recurrence_of:
            named.add(recurrence_of)
        return cls(root_cause=root_cause, precedents=frozenset(named), marked=frozenset(marked) - named)

    @property
    def named(self) -> frozenset[str]:
        """Every precedent the resolution names, in its text or by an engineer's mark."""
        return self.precedents | self.marked

    def how_named(self, precedent: str) -> str:
        if precedent in self.precedents:
            return "the precedent the post-mortem names"
        return "the precedent an engineer marked the same failure"


@dataclass(frozen=True)
class Grade:
    score: Score
    reason: str
    matched: str | None = None
    abstained: bool = False


def cause_similarity(a: str, b: str, similarity: Similarity) -> float:
    """How alike two root causes are: their meaning (``COSINE_WEIGHT``) and the share of stems they share
    (the rest; the stems alone without an embedder)."""
    words = overlap(stems(a), stems(b))
    cosine = similarity.cosine(a, b)
    return words if cosine is None else COSINE_WEIGHT * cosine + (1 - COSINE_WEIGHT) * words


def same_cause(a: str, b: str, similarity: Similarity) -> bool:
    return cause_similarity(a, b, similarity) >= SAME_CAUSE


def _cause_text(cause: Mapping[str, Any]) -> str:
    """What a likely cause says: its statement. A claim stored before claims were typed has only its
    shown line, read without its lead and citation markers."""
    statement = str(cause.get("statement") or "")
    return statement or _MARKER.sub("", _PREFIX.sub("", str(cause.get("text", "")))).strip()


def record_causes(briefing: dict[str, Any]) -> dict[str, str]:
    """Each recalled incident's recorded root cause, read back from the evidence the briefing kept."""
    causes: dict[str, str] = {}
    for item in briefing.get("evidence", []):
        if item.get("kind") != "incident" or not item.get("id"):
            continue
        text = str(item.get("text", ""))
        text = text.split("--- original record ---\n", 1)[-1]
        try:
            causes[str(item["id"])] = parse_record(text).root_cause
        except ValueError:
            continue
    return causes


def abstains(briefing: dict[str, Any]) -> bool:
    """Whether the briefing says it has no reliable precedent (the sentence it leads with)."""
    return NO_RELIABLE.lower() in str(briefing.get("summary", "")).lower()


def _abstention(briefing: dict[str, Any], post_mortem: PostMortem, similarity: Similarity) -> Grade:
    recalled = record_causes(briefing)
    named = sorted(post_mortem.named & set(recalled)) or sorted(post_mortem.named)
    if named:
        why = post_mortem.how_named(named[0])
        return Grade(0, f"said no reliable precedent, wrongly: {named[0]} is {why}", named[0], True)
    truth = post_mortem.root_cause
    for ident, cause in recalled.items():
        if truth and same_cause(cause, truth, similarity):
            return Grade(0, f"said no reliable precedent, wrongly: {ident} had this root cause", ident, True)
    return Grade(0, "said no reliable precedent, rightly: no recalled record had this root cause", None, True)


def grade(briefing: dict[str, Any], post_mortem: PostMortem, similarity: Similarity) -> Grade:
    """The grade of one stored briefing (its JSON) against the post-mortem."""
    if abstains(briefing):
        return _abstention(briefing, post_mortem, similarity)
    evidence_ids = {int(i["n"]): i.get("id") for i in briefing.get("evidence", []) if "n" in i}
    truth = post_mortem.root_cause
    for position, cause in enumerate(briefing.get("likely_causes", [])):
        cited = [evidence_ids.get(n) for n in cause.get("citations", [])]
        precedent = next((c for c in cited if c and c in post_mortem.named), None)
        score: Score = 100 if position == 0 else 65
        where = "the top likely cause" if position == 0 else f"likely cause #{position + 1}"
        if precedent is not None:
            return Grade(score, f"{where} cites {precedent}, {post_mortem.how_named(precedent)}", precedent)
        if truth and same_cause(_cause_text(cause), truth, similarity):
            return Grade(score, f"{where} is the recorded root cause", next((c for c in cited if c), None))
    related = [str(r.get("id")) for r in briefing.get("related_incidents", []) if r.get("id")]
    causes = record_causes(briefing)
    for ident in related:
        if ident in post_mortem.named:
            why = post_mortem.how_named(ident)
            return Grade(35, f"only a related incident was right: {ident}, {why}", ident)
        if truth and ident in causes and same_cause(causes[ident], truth, similarity):
            return Grade(35, f"only a related incident was right: {ident} had this root cause", ident)
    if not briefing.get("likely_causes"):
        return Grade(0, "the briefing named no likely cause")
    return Grade(0, "no likely cause or related incident matches the recorded root cause")
