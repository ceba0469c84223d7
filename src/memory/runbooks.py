"""Reading a recalled runbook by its own labels: ``First checks:``, ``Mitigations that worked:``,
``Risky actions:``.

Runbooks are free text retained as ``RUNBOOK <id> — <service>`` with labeled sections, each a
numbered or bulleted list. The briefing takes the runbook's own first checks, mitigations and risky
actions from those sections; a runbook without them is still cited by its title.
"""

import re

HEADER = "RUNBOOK"  # a runbook's text starts "RUNBOOK <id> — <service>"
_SECTION = re.compile(r"^([A-Z][A-Za-z /-]{2,40}):\s*(.*)$")
_ITEM = re.compile(r"^\s*(?:\d{1,2}[.)]|[-•*])\s+(.*)$")


def is_runbook(text: str) -> bool:
    return text.startswith(HEADER + " ")


def sections(text: str) -> dict[str, list[str]]:
    """Labeled sections, keyed by the lower-cased label, each a list of its items (or its one line)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines()[1:]:
        item = _ITEM.match(line)
        if item and current is not None:
            current.append(item.group(1).strip())
            continue
        label = _SECTION.match(line)
        if label:
            current = found.setdefault(label.group(1).strip().lower(), [])
            if label.group(2).strip():
                current.append(label.group(2).strip())
            continue
        if current and line.strip() and line.startswith((" ", "\t")):
            current[-1] += " " + line.strip()
    return found


def title(text: str) -> str:
    return next(iter(sections(text).get("title", [])), text.splitlines()[0] if text else "")


# A runbook lists what to do under either heading; older runbooks (and other teams') say "Safe mitigations".
MITIGATION_LABELS = ("mitigations that worked", "mitigations", "safe mitigations")


def mitigations(text: str) -> list[str]:
    """The runbook's mitigations, under whichever of the usual headings it uses."""
    found = sections(text)
    return next((found[label] for label in MITIGATION_LABELS if label in found), [])
