"""The briefing head: what an engineer reads first at 3 a.m., built from the full cited lists.

The full lists (``first_checks``, ``suggested_fix``, ``risky_actions``) keep every cited line a
briefing found; the head keeps at most three of each, merged and ranked:

- lines that say the same thing (shared stems, and close meaning when an embedder is given) become one
  item citing every source they came from, so support from several incidents shows and counts; an
  error string merges only with the same string;
- items are ranked by the confidence of their best precedent, then by how many incidents support them,
  then by how recent the newest one is;
- a check or fix must be an action, and a resolution step of another service (or naming another
  service's resource) is not a first check unless the best precedent is itself on another service;
  both are values of the claim (``Claim.action``, ``Claim.services``, read where it is stamped), so
  nothing here reads a claim's words for them;
- a fix that repeats a head check is left to the check;
- when the precedents the briefing relies on name the runbooks they used, a line of another runbook
  (one recall found by its service and words) is left out of the head: "that's the pool, open the
  pool runbook" is the advice, not the slow-query runbook that shares the word "database";
- a line only a team-profile pattern backs speaks in the head when that pattern is the one the alert
  matches best: a Kafka lag alert's head says "lower max.poll.records" from the consumer-lag pattern,
  not "cut payment retries" from a retry storm that shares the words "consumer" and "order".

The rest stays in ``more_*``, ranked the same way, so nothing is lost. The first line is one sentence:
the precedent, how sure, and when; or the two closest precedents, when they disagree. The page, the
API and every delivery channel read this one structure (``render_text`` is the plain-text form).
"""

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from agent.core.evidence import Evidence, Match
from agent.core.schema import (
    Briefing,
    BriefingHead,
    Claim,
    ClaimField,
    EvidenceItem,
    HeadItem,
    Role,
    field_words,
)
from agent.core.similarity import Similarity
from memory.items import item_key

MAX_CHECKS = 3
MAX_FIXES = 3
MAX_RISKY = 3
SUPPORT_BONUS = 0.08
RECENCY_BONUS = 0.04

# An error string is looked for as written: two that differ are two checks, however many words they
# share ("pending 0" and "pending > 200" are opposite findings), and never one item citing both.
ERROR_LEAD = "Look for this error: "
DISPUTED_LEAD = "Disputed (the closest precedents disagree): "


@dataclass
class _Candidate:
    text: str
    citations: list[int]
    order: int
    role: Role | None
    field: ClaimField | None
    score: float = 0.0
    date: str | None = None
    members: list["_Candidate"] = dataclasses.field(default_factory=list)


def head_text(claim: Claim) -> str:
    """How the head says a claim: its statement, an error string as one to look for, a runbook as one
    to open, a disputed step as disputed."""
    statement = " ".join((claim.statement or claim.text).split()).rstrip(".")
    if claim.field == "signature":
        return ERROR_LEAD + statement
    if claim.field == "runbook_used":
        return f"Open the runbook {statement}"
    if claim.field == "runbook":
        return (
            f"Follow runbook {claim.record}: {statement}" if claim.record else f"Follow runbook {statement}"
        )
    statement = statement[:1].upper() + statement[1:]
    return DISPUTED_LEAD + statement if claim.qualifier == "disputed" else statement


class _Sources:
    """What the briefing's evidence says about each citation: its record and service."""

    def __init__(self, evidence: Evidence | None, items: Sequence[EvidenceItem]) -> None:
        self.items = {item.n: item for item in items}
        ranked = evidence.ranked() if evidence is not None else []
        self.best = ranked[0] if ranked and ranked[0].confidence.reliable else None
        alert = next((i for i in items if i.kind == "alert"), None)
        self.alert_service = evidence.alert.service if evidence is not None else alert and alert.service
        self.services = {i.service for i in items if i.service} - {self.alert_service}
        used = [m.incident.record.runbook_used for m in ranked if m.confidence.reliable and m.incident.record]
        runbooks = [i.id for i in items if i.kind == "runbook" and i.id]
        self.named = {r for r in runbooks if any(_names(text, r) for text in used)}
        self.any_named = any(used)
        # Profile patterns are evidence in the order the alert matches them, best first.
        self.best_pattern = next((i.id for i in items if i.kind == "profile"), None)

    def unvouched(self, claim: Claim) -> bool:
        """A line resting only on runbooks the relied-on precedents did not use, when they name theirs,
        or only on profile patterns the alert matches less well than its best one."""
        cited = [self.items[n] for n in claim.citations if n in self.items]
        if not cited:
            return False
        if all(i.kind == "profile" and i.id != self.best_pattern for i in cited):
            return True
        return self.any_named and all(i.kind == "runbook" and i.id not in self.named for i in cited)

    def foreign(self, claim: Claim) -> bool:
        """A claim only another service's records back, or that names another service's resource."""
        if self.best is not None and not self.best.same_service:
            return False
        cited = [self.items[n] for n in claim.citations if n in self.items]
        incidents = [i for i in cited if i.kind == "incident"]
        if incidents and all(i.service != self.alert_service for i in incidents):
            return bool(self.alert_service)
        return not self.services.isdisjoint(claim.services)


def _names(text: str, runbook_id: str) -> bool:
    """Whether a record's "runbook used" names this runbook: every word of its id but an "RB" prefix is
    a word there ("RB-db-pool" is named by "runbooks/db-pool.md"; "RB-001" by "RB-001 postgres disk",
    not by "RB-0011")."""
    words = re.findall(r"[a-z0-9]+", runbook_id.lower())
    wanted = set(words[1:] if words[:1] == ["rb"] else words)
    return bool(wanted) and wanted <= set(re.findall(r"[a-z0-9]+", text.lower()))


# Fields that name one thing (an error string, a runbook's path): a line of one only ever meets the
# same string, since two runbooks' or two errors' lines read alike while naming different things.
_NAMED = frozenset({"signature", "runbook_used"})


def _same(a: _Candidate | HeadItem, b: _Candidate | HeadItem, similarity: Similarity) -> bool:
    """Whether two lines say the same thing; a named thing only ever meets the same name."""
    if a.field in _NAMED or b.field in _NAMED:
        return a.field == b.field and item_key(a.text) == item_key(b.text)
    return similarity.same(a.text, b.text)


def _merge(candidates: list[_Candidate], similarity: Similarity) -> list[_Candidate]:
    """Greedy: strongest first, each line joins the first group one of whose lines says the same."""
    groups: list[_Candidate] = []
    for c in sorted(candidates, key=lambda c: (-c.score, c.order)):
        for group in groups:
            if any(_same(c, m, similarity) for m in group.members):
                group.members.append(c)
                break
        else:
            groups.append(_Candidate(c.text, [], c.order, c.role, c.field, c.score, c.date, [c]))
    return groups


def _item(group: _Candidate, sources: _Sources) -> HeadItem:
    citations = list(dict.fromkeys(n for m in group.members for n in m.citations))
    cited = [sources.items[n] for n in citations if n in sources.items]
    incident_ids = list(dict.fromkeys(i.id for i in cited if i.kind == "incident" and i.id))
    dates = [m.date for m in group.members if m.date]
    return HeadItem(
        text=group.text,
        citations=citations,
        role=group.role,
        field=group.field,
        sources=list(dict.fromkeys(i.id for i in cited if i.id and i.kind != "alert")),
        support=len(incident_ids),
        confidence=round(group.score, 3),
        last_seen=max(dates) if dates else None,
    )


def _ordered(items: list[HeadItem], now: datetime) -> list[HeadItem]:
    """Best precedent first; support from more incidents and a recent one lift an item a little."""

    def weight(item: HeadItem) -> float:
        bonus = SUPPORT_BONUS * min(max(item.support - 1, 0), 3)
        if item.last_seen:
            age_years = max((now.date() - date.fromisoformat(item.last_seen)).days, 0) / 365
            bonus += RECENCY_BONUS / (1 + age_years)
        return item.confidence + bonus

    return sorted(items, key=weight, reverse=True)  # stable: ties keep the assembler's order


def _section(
    claims: Iterable[Claim],
    sources: _Sources,
    similarity: Similarity,
    *,
    actions_only: bool,
    local_only: bool,
    now: datetime,
) -> list[HeadItem]:
    candidates: list[_Candidate] = []
    for order, claim in enumerate(claims):
        text = head_text(claim)
        if not text or (actions_only and not claim.action) or (local_only and sources.foreign(claim)):
            continue
        if sources.unvouched(claim):
            continue
        candidates.append(
            _Candidate(text, claim.citations, order, claim.role, claim.field, claim.confidence, claim.date)
        )
    similarity.prepare(c.text for c in candidates if c.field not in _NAMED)  # see _same
    return _ordered([_item(g, sources) for g in _merge(candidates, similarity)], now)


def first_line(briefing: Briefing, evidence: Evidence | None) -> str:
    """One sentence: the precedent, how sure, when it happened and what an engineer said of it when
    this alert was resolved before; the two that disagree, when the closest do; or plainly that there is
    none."""
    if briefing.memory == "off":
        return "No precedent consulted: memory is off for this briefing."
    ranked = evidence.ranked() if evidence is not None else []
    if not ranked or not ranked[0].confidence.reliable or briefing.seen_before == "novel":
        if briefing.memory_error:
            return f"No precedent consulted: memory could not be reached ({briefing.memory_error})."
        return "No precedent: memory holds no resolved incident that closely matches this alert."
    by_id = {m.incident.id: m for m in ranked}
    disputed = [by_id[i] for i in briefing.disputed if i in by_id]
    if len(disputed) == 2:
        # The head is what chat and the page lead with: a dispute is said there, not only in the summary.
        a, b = disputed
        scope = " on this service" if a.same_service and b.same_service else ""
        return f"The closest precedents disagree{scope}: {_named(a, scope)} and {_named(b, scope)}."
    best = ranked[0]
    scope = "on this service" if best.same_service else f"on {best.item.service}"
    kind = "Happened before" if briefing.seen_before == "recurring" else "Closest precedent"
    ruled_out = evidence.ruled_out(best) if evidence is not None else None
    said = f"; {ruled_out}" if ruled_out else ""
    return f"{kind} {scope}: {best.incident.id}{_on_date(best)}, {_how_sure(best)} [{best.item.n}]{said}."


def _on_date(match: Match) -> str:
    return f" on {match.when.date().isoformat()}" if match.when else ""


def _named(match: Match, scope: str) -> str:
    """ "INC-1 on 2025-03-14 (39% likely relevant) [2]", with its service when the scope is not said."""
    where = "" if scope else f" on {match.item.service if not match.same_service else 'this service'}"
    return f"{match.incident.id}{where}{_on_date(match)} ({_likely(match)}) [{match.item.n}]"


def _how_sure(match: Match) -> str:
    """ "a strong precedent (78% likely relevant)"."""
    return f"a {match.confidence.band} precedent ({_likely(match)})"


def _likely(match: Match) -> str:
    """The calibrated number, marked when the fit was made for another ranker than this memory's."""
    sure = match.confidence
    mark = "" if sure.calibrated else ", uncalibrated for this memory"
    return f"{sure.probability:.0%} likely relevant{mark}"


def _recurrence(evidence: Evidence | None, now: datetime) -> str | None:
    """When the best matching profile pattern recurs, and only that one: "this pattern recurs" is read as
    the alert's pattern, and a weaker match (a payment retry storm sharing "consumer" and "order" with a
    Kafka lag alert) would lend it dates that are not its own."""
    if evidence is None:
        return None
    best = next((item.id for item in evidence.items if item.kind == "profile"), None)
    found = evidence.recurrences.get(best) if best is not None else None
    return found.sentence(now) if found is not None else None


def build_head(briefing: Briefing, evidence: Evidence | None, similarity: Similarity) -> BriefingHead:
    """The head of a finished briefing (its lists already citation-checked)."""
    sources = _Sources(evidence, briefing.evidence)
    now = briefing.generated_at
    checks = _section(briefing.first_checks, sources, similarity, actions_only=True, local_only=True, now=now)
    fixes = _section(
        briefing.suggested_fix, sources, similarity, actions_only=True, local_only=False, now=now
    )
    risky = _section(
        briefing.risky_actions, sources, similarity, actions_only=False, local_only=False, now=now
    )
    head_checks = checks[:MAX_CHECKS]
    fixes = [f for f in fixes if not any(_same(f, c, similarity) for c in head_checks)]
    return BriefingHead(
        first_line=first_line(briefing, evidence),
        recurrence=_recurrence(evidence, now),
        checks=head_checks,
        fixes=fixes[:MAX_FIXES],
        risky=risky[:MAX_RISKY],
        more_checks=checks[MAX_CHECKS:],
        more_fixes=fixes[MAX_FIXES:],
        more_risky=risky[MAX_RISKY:],
    )


def render_text(head: BriefingHead, *, more_link: str | None = None) -> str:
    """The head as plain text (the CLI): the same items, cited as ``[n]``, each with the field it rests
    on."""

    def lines(title: str, items: list[HeadItem]) -> list[str]:
        if not items:
            return []
        out = [title]
        for item in items:
            cites = "".join(f"[{n}]" for n in item.citations)
            said = [field_words(item.field), f"{item.support} incidents" if item.support > 1 else None]
            basis = ", ".join(w for w in said if w)
            out.append(f"- {item.text} {cites}{f' ({basis})' if basis else ''}".rstrip())
        return out

    parts = [head.first_line]
    if head.recurrence:
        parts.append(head.recurrence)
    parts += lines("Check first:", head.checks)
    parts += lines("Try:", head.fixes)
    parts += lines("Do not:", head.risky)
    hidden = len(head.more_checks) + len(head.more_fixes) + len(head.more_risky)
    if hidden and more_link:
        parts.append(f"{hidden} more: {more_link}")
    elif hidden:
        parts.append(f"{hidden} more in the full briefing.")
    return "\n".join(parts)
