"""Is every claim in a briefing backed by what it cites? Deterministic checks, no judge model.

Four checks, each reported as a rate so runs can be compared:

- **cited**: every item (likely cause, first check, suggested fix, risky action) carries a citation;
- **in range**: every citation names an entry of the briefing's evidence list;
- **supported**: every checkable token of a claim (URLs, `commands`, quoted error strings, numbers,
  identifiers such as service names, error codes and incident ids) occurs in a cited entry or in the
  alert itself; plain words are not checkable, paraphrase is allowed;
- **canary**: a string planted in exactly one record appears only in items that cite that record.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SECTIONS = ("likely_causes", "first_checks", "suggested_fix", "risky_actions")

_MARKER = re.compile(r"[\[［【]\s*\d+(?:\s*[,，、\-–]\s*\d+)*\s*[\]］】]")
_URL = re.compile(r"https?://[^\s\]\[)(<>\"'`]+")
_BACKTICK = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{3,120})[\"”]")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/\-]*[A-Za-z0-9%]|[0-9]")
_TRIM = ".,;:!?)('\""


@dataclass(frozen=True)
class Source:
    """One numbered evidence entry as the checker sees it."""

    number: int
    ref: str
    text: str


@dataclass(frozen=True)
class Claim:
    section: str
    index: int
    text: str
    citations: tuple[int, ...]


@dataclass(frozen=True)
class Finding:
    check: str
    section: str
    index: int
    detail: str


@dataclass
class Faithfulness:
    """Counts behind the rates; ``add`` merges the results of several briefings."""

    items: int = 0
    cited_items: int = 0
    citations: int = 0
    citations_in_range: int = 0
    tokens: int = 0
    tokens_supported: int = 0
    canary_uses: int = 0
    canary_uses_cited: int = 0
    findings: list[Finding] = field(default_factory=list)

    def add(self, other: "Faithfulness") -> None:
        for name in (
            "items",
            "cited_items",
            "citations",
            "citations_in_range",
            "tokens",
            "tokens_supported",
            "canary_uses",
            "canary_uses_cited",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.findings.extend(other.findings)

    @property
    def ok(self) -> bool:
        return not self.findings

    def rates(self) -> dict[str, float | None]:
        def rate(part: int, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None

        return {
            "cited": rate(self.cited_items, self.items),
            "in_range": rate(self.citations_in_range, self.citations),
            "supported": rate(self.tokens_supported, self.tokens),
            "canary": rate(self.canary_uses_cited, self.canary_uses),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "rates": self.rates(),
            "items": self.items,
            "citations": self.citations,
            "tokens": self.tokens,
            "canary_uses": self.canary_uses,
            "findings": [f.__dict__ for f in self.findings],
        }


def strip_markers(text: str) -> str:
    return _MARKER.sub(" ", text)


def marker_numbers(text: str) -> list[int]:
    """Citation numbers written inline, ranges expanded: ``[1-3]`` is 1, 2 and 3."""
    numbers: list[int] = []
    for marker in _MARKER.findall(text):
        for part in re.split(r"[,，、]", marker.strip("[]［］【】 ")):
            bounds = [int(b) for b in re.findall(r"\d+", part)]
            if len(bounds) == 2 and bounds[0] <= bounds[1] <= bounds[0] + 50:
                numbers.extend(range(bounds[0], bounds[1] + 1))
            else:
                numbers.extend(bounds)
    return numbers


def checkable_tokens(text: str) -> list[str]:
    """The parts of a claim that can be verified verbatim; lower-cased, in order, without repeats."""
    text = strip_markers(text)
    found: list[str] = []
    for pattern in (_URL, _BACKTICK, _QUOTED):
        for match in pattern.finditer(text):
            found.append(match.group(1) if pattern.groups else match.group(0))
        text = pattern.sub(" ", text)
    for match in _TOKEN.finditer(text):
        token = match.group(0).strip(_TRIM)
        if _is_specific(token):
            found.append(token)
    seen: dict[str, None] = {}
    for token in found:
        seen.setdefault(token.strip().lower(), None)
    return [t for t in seen if t]


def _is_specific(token: str) -> bool:
    """Identifiers and figures, not prose: a digit, an inner separator, CamelCase or an acronym."""
    if any(c.isdigit() for c in token):
        return True
    parts = [p for p in re.split(r"[_.:/\-]", token) if p]
    if len(parts) > 1 and sum(len(p) for p in parts) >= 4 and max(len(p) for p in parts) > 1:
        return True
    if len(token) >= 3 and token.isupper():
        return True
    return bool(re.search(r"[a-z][A-Z]", token))


def occurs(token: str, text: str) -> bool:
    """Token found in text on identifier boundaries, so ``2`` does not match inside ``502``."""
    pattern = r"(?<![A-Za-z0-9])" + re.escape(token) + r"(?![A-Za-z0-9])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def claims_of(briefing: Mapping[str, Any]) -> list[Claim]:
    claims = []
    for section in SECTIONS:
        for index, item in enumerate(briefing.get(section) or []):
            citations = tuple(int(c) for c in item.get("citations") or [])
            claims.append(Claim(section, index, str(item.get("text", "")), citations))
    return claims


def check(
    briefing: Mapping[str, Any],
    sources: Sequence[Source],
    alert_text: str,
    canaries: Mapping[str, str] | None = None,
) -> Faithfulness:
    """Check one briefing against its evidence; ``canaries`` maps a planted string to its record's ref."""
    by_number = {s.number: s for s in sources}
    result = Faithfulness()
    for claim in claims_of(briefing):
        result.items += 1
        if claim.citations:
            result.cited_items += 1
        else:
            result.findings.append(Finding("cited", claim.section, claim.index, claim.text[:120]))
        valid = [by_number[n] for n in claim.citations if n in by_number]
        result.citations += len(claim.citations)
        result.citations_in_range += len(valid)
        for number in claim.citations:
            if number not in by_number:
                result.findings.append(Finding("in_range", claim.section, claim.index, f"[{number}]"))
        backing = [s.text for s in valid] + [alert_text]
        for token in checkable_tokens(claim.text):
            result.tokens += 1
            if any(occurs(token, text) for text in backing):
                result.tokens_supported += 1
            else:
                result.findings.append(Finding("supported", claim.section, claim.index, token))
        _check_canaries(result, claim, valid, canaries or {})
    _check_free_text(result, briefing, sources, canaries or {})
    return result


def _check_canaries(
    result: Faithfulness, claim: Claim, cited: Iterable[Source], canaries: Mapping[str, str]
) -> None:
    refs = {s.ref for s in cited}
    for canary, ref in canaries.items():
        if canary in claim.text:
            result.canary_uses += 1
            if ref in refs:
                result.canary_uses_cited += 1
            else:
                result.findings.append(Finding("canary", claim.section, claim.index, canary))


def _check_free_text(
    result: Faithfulness, briefing: Mapping[str, Any], sources: Sequence[Source], canaries: Mapping[str, str]
) -> None:
    """The summary and the related incidents' reasons may carry a canary only beside its record."""
    by_number = {s.number: s for s in sources}
    summary = str(briefing.get("summary") or "")
    cited = {by_number[n].ref for n in marker_numbers(summary) if n in by_number}
    texts = [("summary", 0, summary, cited)]
    for index, related in enumerate(briefing.get("related_incidents") or []):
        texts.append(("related_incidents", index, str(related.get("why", "")), {str(related.get("id"))}))
    for section, index, text, refs in texts:
        for canary, ref in canaries.items():
            if canary in text:
                result.canary_uses += 1
                if ref in refs:
                    result.canary_uses_cited += 1
                else:
                    result.findings.append(Finding("canary", section, index, canary))
