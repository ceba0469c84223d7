"""The offline profile synthesizer: failure patterns from incident records, with no LLM.

It implements ``memory.synthesis.Synthesizer`` so the embedded driver can refresh the team profile (and
answer reflect) on a laptop with no model configured.

Grouping is by what failed and why, never by where: each incident is represented by its error signature
and root cause (plus any correction of it), with every service name masked out. Two incidents are
similar by a blend of the cosine of their sentence embeddings and the overlap of their content words
(Jaccard); an incident joins the most similar existing pattern (average similarity to its members) when
that similarity clears ``threshold``, else it starts a new pattern. Incidents are taken oldest first, so
the grouping is deterministic.

A pattern is named for what failed (``memory.naming``: the root-cause words its incidents share), not
for its first incident's error string. Each pattern's fields are taken from its incidents' own fields,
every item citing the incidents it came from: symptoms become early warning signals, root causes
(corrections first) recorded root causes, resolution steps mitigations that worked, failed attempts
risky actions, the first resolution step a first check, runbooks the runbook. Incidents that
self-recovered or were false alarms are counted apart as the pattern's noise (their steps are not
mitigations that worked), and a pattern of noise alone comes after every real failure. Other known
services named in a pattern's text are its dependencies. A pattern seen in one incident is labeled
uncertain.
"""

import asyncio
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from incidents.severity import rank
from memory.bank import RecalledIncident, ReflectAnswer
from memory.corrections import parse_correction
from memory.embedder import Embedder
from memory.items import failed_steps, worked_steps
from memory.naming import failure_name
from memory.profile import (
    PROFILE_SCHEMA,
    SOURCE_QUERY,
    Pattern,
    PatternItem,
    profile_structured,
    render_profile,
)
from memory.schema import IncidentRecord, tag_value
from memory.synthesis import Synthesizer
from memory.text import tokens

EMBEDDING_WEIGHT = 0.6
# Calibrated on hand-written incident pairs: blended similarity of the same failure told differently
# lands at 0.39-0.54, of different failures at 0.13-0.23 (MiniLM); word overlap alone 0.18-0.33 vs 0.
THRESHOLD_BLENDED = 0.33
THRESHOLD_WORDS = 0.15
# Grouping compares every pair: the profile is built from the most recent incidents, this many at most.
MAX_INCIDENTS = 1000
MAX_PASSES = 5
# Embedding cost grows with length: the signature and the start of the root cause say what failed and
# why; the word overlap still reads all of it.
EMBED_CHARS = 400
VECTOR_CACHE = 4 * MAX_INCIDENTS
NEAR_DUPLICATE = 0.8


@dataclass
class _Member:
    record: IncidentRecord
    severity: str
    corrections: list[tuple[str, str]]  # (correction document id, text), newest first
    words: set[str] = field(default_factory=set)


class OfflineSynthesizer:
    """Patterns by error signature and root cause similarity; ``embedder=None`` uses word overlap alone."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        threshold: float | None = None,
        max_incidents: int = MAX_INCIDENTS,
    ) -> None:
        self._embedder = embedder
        self._max_incidents = max_incidents
        # Refreshes see mostly the same incidents again: their vectors are kept (bounded, by text).
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._vectors_lock = threading.Lock()
        default = THRESHOLD_WORDS if embedder is None else THRESHOLD_BLENDED
        self._threshold = default if threshold is None else threshold

    async def synthesize(
        self,
        *,
        query: str,
        incidents: list[RecalledIncident],
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        # Embedding and grouping are CPU work: off the event loop, which may be the web server's.
        patterns = await asyncio.to_thread(self.patterns, incidents)
        cited = sorted({i for p in patterns for i in p.incidents})
        return ReflectAnswer(
            text=render_profile(patterns), structured=profile_structured(patterns), based_on=cited
        )

    def patterns(self, incidents: Sequence[RecalledIncident]) -> list[Pattern]:
        members = _members(incidents)[-self._max_incidents :]
        if not members:
            return []
        services = {m.record.service for m in members} | {
            s for i in incidents if (s := tag_value(i.tags, "service"))
        }
        texts = [_masked(_cause_text(m), services) for m in members]
        masked_words = set().union(*(tokens(s) for s in services))
        for member, text in zip(members, texts, strict=True):
            member.words = tokens(text) - masked_words
        similarity = self._similarity(members, texts)
        groups = _group(similarity, self._threshold)
        patterns = [_pattern(members, group, similarity, services) for group in groups]
        patterns.sort(key=_priority)
        return patterns

    def _similarity(self, members: list[_Member], texts: list[str]) -> np.ndarray:
        words = [m.words for m in members]
        n = len(members)
        jaccard = np.zeros((n, n), dtype=np.float32)
        for i in range(n):
            for j in range(i, n):
                union = len(words[i] | words[j])
                value = len(words[i] & words[j]) / union if union else 0.0
                jaccard[i, j] = jaccard[j, i] = value
        if self._embedder is None:
            return jaccard
        vectors = self._embed([text[:EMBED_CHARS] for text in texts])
        cosine = np.clip(vectors @ vectors.T, 0.0, 1.0)
        combined: np.ndarray = EMBEDDING_WEIGHT * cosine + (1 - EMBEDDING_WEIGHT) * jaccard
        return combined

    def _embed(self, texts: list[str]) -> np.ndarray:
        assert self._embedder is not None
        with self._vectors_lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
        missing = sorted(set(texts) - set(known))
        if missing:
            known.update(zip(missing, self._embedder.embed(missing), strict=True))
        with self._vectors_lock:
            for text in texts:
                self._vectors[text] = known[text]
                self._vectors.move_to_end(text)
            while len(self._vectors) > VECTOR_CACHE:
                self._vectors.popitem(last=False)
        return np.stack([known[t] for t in texts])


def _members(incidents: Sequence[RecalledIncident]) -> list[_Member]:
    corrections: dict[str, list[tuple[datetime | None, str, str]]] = {}
    for item in incidents:
        if tag_value(item.tags, "kind") == "correction" and item.metadata.get("corrects"):
            try:
                text = parse_correction(item.text).text
            except ValueError:
                text = item.text
            corrections.setdefault(item.metadata["corrects"], []).append((item.timestamp, item.id, text))
    members = []
    seen: set[str] = set()
    for item in incidents:
        record = item.record
        if record is None or record.incident_id in seen:
            continue
        seen.add(record.incident_id)
        found = sorted(
            corrections.get(record.incident_id, []), key=lambda c: (c[0] is None, c[0]), reverse=True
        )
        members.append(
            _Member(
                record=record,
                severity=tag_value(item.tags, "severity") or "",
                corrections=[(doc, text) for _, doc, text in found],
            )
        )
    members.sort(key=lambda m: (m.record.timestamp, m.record.incident_id))
    return members


def _cause_text(member: _Member) -> str:
    record = member.record
    return "\n".join([record.error_signature, record.root_cause, *(text for _, text in member.corrections)])


def _masked(text: str, services: set[str]) -> str:
    for service in sorted(services, key=len, reverse=True):
        text = re.sub(re.escape(service), " ", text, flags=re.IGNORECASE)
    return text


def _group(similarity: np.ndarray, threshold: float) -> list[list[int]]:
    """Oldest first, each incident joins the pattern it is most similar to on average, or starts one;
    then incidents move to the pattern they now fit best, until nothing moves (the first pass only saw
    the patterns that existed when each incident arrived)."""
    count = similarity.shape[0]
    labels = np.full(count, -1, dtype=np.int64)
    for index in range(count):
        labels[index] = _best_group(similarity, labels, index, threshold)
    for _ in range(MAX_PASSES):
        moved = False
        for index in range(count):
            best = _best_group(similarity, labels, index, threshold)
            alone = int((labels == labels[index]).sum()) == 1
            if best != labels[index] and not (alone and best > labels.max()):
                labels[index], moved = best, True
        if not moved:
            break
    groups: dict[int, list[int]] = {}
    for index, label in enumerate(labels.tolist()):
        groups.setdefault(label, []).append(index)
    return list(groups.values())


def _best_group(similarity: np.ndarray, labels: np.ndarray, index: int, threshold: float) -> int:
    """The label whose other members ``index`` is most similar to on average (at least ``threshold``),
    else a new label."""
    others = labels >= 0
    others[index] = False
    new_label = int(labels.max()) + 1
    if not others.any():
        return new_label
    sums = np.bincount(labels[others], weights=similarity[index, others])
    sizes = np.bincount(labels[others])
    means = np.full(sums.shape, -np.inf)
    np.divide(sums, sizes, out=means, where=sizes > 0)
    best = int(np.argmax(means))
    return best if means[best] >= threshold else new_label


def _pattern(members: list[_Member], group: list[int], similarity: np.ndarray, services: set[str]) -> Pattern:
    chosen = [members[i] for i in group]
    ids = [m.record.incident_id for m in chosen]
    medoid = chosen[int(np.argmax(similarity[np.ix_(group, group)].mean(axis=1)))]
    severity = max((m.severity for m in chosen), key=rank, default="")
    return Pattern(
        id=f"pattern-{ids[0]}",
        title=failure_name(
            [
                (m.record.incident_id, m.corrections[0][1] if m.corrections else m.record.root_cause)
                for m in chosen
            ],
            services=services,
            fallback=_first_line(medoid.record.error_signature) or _first_line(medoid.record.root_cause),
        ),
        incidents=ids,
        uncertain=len(chosen) == 1,
        severity=severity,
        noise_incidents=[m.record.incident_id for m in chosen if m.record.noise],
        last_seen=max(m.record.timestamp for m in chosen),
        seen=sorted(m.record.timestamp for m in chosen),
        error_signatures=list(dict.fromkeys(_first_line(m.record.error_signature) for m in chosen)),
        services=_collect((m.record.service, m) for m in chosen),
        dependencies=_dependencies(chosen, services),
        early_warning_signals=_collect((m.record.symptom, m) for m in chosen),
        recorded_root_causes=_collect(
            [(f"Corrected: {text}", m, doc) for m in chosen for doc, text in m.corrections]
            + [(m.record.root_cause, m, None) for m in chosen]
        ),
        mitigations_that_worked=_collect(
            ("; ".join(worked_steps(m.record)), m) for m in chosen if not m.record.noise
        ),
        risky_actions=_collect(("; ".join(failed_steps(m.record)), m) for m in chosen),
        first_checks=_collect((next(iter(worked_steps(m.record)), ""), m) for m in chosen),
        runbooks=_collect((m.record.runbook_used, m) for m in chosen),
    )


def _collect(entries: Any) -> list[PatternItem]:
    """Items in order, near-duplicates merged into one item citing every incident that said it."""
    items: list[tuple[str, set[str], list[str]]] = []
    for entry in entries:
        text, member, *extra = entry
        text = text.strip()
        if not text:
            continue
        cite = [c for c in (*extra, member.record.incident_id) if c]
        words = tokens(text)
        for existing_text, existing_words, citations in items:
            union = existing_words | words
            if existing_text == text or (
                union and len(existing_words & words) / len(union) >= NEAR_DUPLICATE
            ):
                citations.extend(c for c in cite if c not in citations)
                break
        else:
            items.append((text, words, list(cite)))
    return [PatternItem(text=text, citations=citations) for text, _, citations in items]


def _dependencies(chosen: list[_Member], services: set[str]) -> list[PatternItem]:
    """Other known services an incident's own text names: what its service depended on when it failed."""
    found: list[tuple[str, _Member]] = []
    for member in chosen:
        record = member.record
        text = "\n".join([record.symptom, record.root_cause, record.error_signature]).lower()
        found.extend((s, member) for s in sorted(services - {record.service}) if s.lower() in text)
    return _collect(found)


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 120 else line[:117].rstrip() + "..."


def _priority(pattern: Pattern) -> tuple[Any, ...]:
    """Real failures before noise, then repeated first, then the most severe, then the widest spread,
    then the most recent."""
    last = pattern.last_seen.timestamp() if pattern.last_seen else 0.0
    return (
        pattern.failures == 0,
        pattern.uncertain,
        -rank(pattern.severity),
        -len(pattern.services),
        -pattern.occurrences,
        -last,
        pattern.id,
    )


class ProfileAwareSynthesizer:
    """Routes a bank's synthesis: profile refreshes to the pattern synthesizer, other questions elsewhere.

    The embedded bank has one synthesizer for reflect and for mental models. Profile models carry
    ``SOURCE_QUERY`` as their source query (and callers asking for profile-shaped answers pass
    ``PROFILE_SCHEMA``), so that is what selects the pattern synthesizer; everything else, such as an
    agent's reflect question, goes to ``fallback``.
    """

    def __init__(self, *, profile: Synthesizer, fallback: Synthesizer) -> None:
        self.profile = profile
        self.fallback = fallback

    async def synthesize(
        self,
        *,
        query: str,
        incidents: list[RecalledIncident],
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        target = self.profile if query == SOURCE_QUERY or response_schema == PROFILE_SCHEMA else self.fallback
        return await target.synthesize(query=query, incidents=incidents, response_schema=response_schema)
