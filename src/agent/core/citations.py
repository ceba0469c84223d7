"""The citation check every answer passes before it is shown.

Models write citations in many shapes: ``[2]``, ``[1, 3]``, ``[1-3]``, and with fullwidth or CJK
brackets and digits (``【1】``, ``［１］``). All of them are rewritten to the canonical ``[n]`` form;
any number outside the evidence list is removed and counted, so a briefing never points at a
source that does not exist.
"""

import re
from dataclasses import dataclass

from agent.core.schema import CitationCheck, Claim

_OPEN = "[［【〔〖⟦"
_CLOSE = "]］】〕〗⟧"
_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
_SEPARATORS = str.maketrans({"，": ",", "、": ",", "；": ",", ";": ","})
_DASHES = str.maketrans({"–": "-", "—": "-", "‐": "-", "‑": "-", "−": "-", "～": "-", "〜": "-", "~": "-"})
_MARKER = re.compile(
    rf"\s?[{re.escape(_OPEN)}]\s*([0-9０-９]+(?:\s*[-–—‐‑−～〜~,，、;；]\s*[0-9０-９]+)*)\s*[{re.escape(_CLOSE)}]"
)
_CANONICAL = re.compile(r"[ \t]?\[\d+\]")
# A range wider than this is not a citation a reader could check; it counts as invalid.
MAX_RANGE = 50


@dataclass
class Tally:
    """Running counts over one answer: valid citations kept, invalid ones removed."""

    cited: int = 0
    removed: int = 0

    def as_check(self) -> CitationCheck:
        return CitationCheck(cited=self.cited, invalid_removed=self.removed)


def parse_marker(body: str) -> list[int]:
    """``"1, 3-5"`` -> ``[1, 3, 4, 5]``; a reversed or oversized range yields ``[-1]`` (never valid)."""
    body = body.translate(_DIGITS).translate(_SEPARATORS).translate(_DASHES)
    numbers: list[int] = []
    for part in body.split(","):
        part = part.strip()
        if "-" in part:
            low_text, high_text = (p.strip() for p in part.split("-", 1))
            low, high = int(low_text), int(high_text)
            if low > high or high - low >= MAX_RANGE:
                numbers.append(-1)
                continue
            numbers.extend(range(low, high + 1))
        else:
            numbers.append(int(part))
    return numbers


def _canonical(numbers: list[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def check_text(text: str, evidence_count: int, tally: Tally | None = None) -> tuple[str, list[int]]:
    """Rewrite every marker in ``text``; return the new text and the valid citations in order."""
    tally = tally if tally is not None else Tally()
    found: list[int] = []

    def replace(match: re.Match[str]) -> str:
        numbers = parse_marker(match.group(1))
        valid: list[int] = []
        for n in numbers:
            if 1 <= n <= evidence_count:
                if n not in valid:
                    valid.append(n)
            else:
                tally.removed += 1
        tally.cited += len(valid)
        found.extend(n for n in valid if n not in found)
        if not valid:
            return ""
        # The space before a marker stays as written, so a checked text checks to itself.
        lead = match.group(0)[0] if match.group(0)[0].isspace() else ""
        return lead + _canonical(valid)

    return _MARKER.sub(replace, text).strip(), found


def plain_cited(text: str, evidence_count: int, tally: Tally | None = None) -> tuple[str, list[int]]:
    """The valid citations of ``text`` and the text without markers: for prose stored beyond this
    conversation (a post-mortem), where ``[n]`` would point at nothing."""
    checked, found = check_text(text, evidence_count, tally)
    return _CANONICAL.sub("", checked).strip(), found


def check_items(items: list[Claim], evidence_count: int, tally: Tally) -> list[Claim]:
    """Check markers in the text and the explicit ``citations`` list of each claim alike; a claim
    without a statement (a model's) gets its text without markers as one."""
    checked: list[Claim] = []
    for item in items:
        text, in_text = check_text(item.text, evidence_count, tally)
        listed: list[int] = []
        for n in item.citations:
            if 1 <= n <= evidence_count:
                if n not in in_text and n not in listed:
                    listed.append(n)
                    tally.cited += 1
            else:
                tally.removed += 1
        if text:
            statement = item.statement or " ".join(_CANONICAL.sub("", text).split())
            checked.append(
                item.model_copy(update={"text": text, "citations": in_text + listed, "statement": statement})
            )
    return checked
