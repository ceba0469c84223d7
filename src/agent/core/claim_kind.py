"""What kind of line a claim is, read once where it is stamped (``agent.core.claims.stamp``), so the
briefing head decides from values and reads no prose.

Two things the fields alone do not say:

- whether a claim is something to do (or says what was done) rather than how things were. Most fields
  settle it (a signature, a runbook, a mitigation, a risky move is one; an outcome is not); a recorded
  resolution step, a profile pattern's first check or a model's claim without a field is free text, and
  its first word or a command in it decides;
- which services of the evidence its statement names: a step of a same-service record that acts on
  another service's resource is that service's, not a first check for this alert.
"""

import re
from collections.abc import Iterable, Sequence

from agent.core.schema import Claim, ClaimField, EvidenceItem
from agent.core.similarity import stem

# Whether a claim resting on this field is an action as it stands (absent: its words must read as one).
_ACTION_BY_FIELD: dict[ClaimField, bool] = {
    "signature": True,
    "runbook_used": True,
    "runbook": True,
    "mitigation": True,
    "risky_action": True,
    "failed_attempt": True,
    "outcome": False,
}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_COMMAND = re.compile(r"`|\b(?:SELECT|SHOW|kubectl|curl|grep|psql|redis-cli|openssl|dig)\b")
# Verbs an action starts with, in the imperative or in an irregular past tense (regular ones end in -ed).
_VERBS = """
add adjust alert apply audit block bump cap change check clear compare confirm cordon count cut
decrease delete deploy diff disable drain drop enable escalate evict examine expire extend fail
failover find fix flush follow freeze grep increase inspect investigate isolate kill limit list
lower look measure migrate monitor move open pause pin ping probe profile purge query raise
rebalance reboot rebuild recreate redeploy reduce refresh reindex reload remove renew repartition
replace replay reroute reset resize restart restore resume retry revert review revoke rewrite roll rollback
rotate run scale search set shed shift shut skip snapshot split start stop suspend switch tail
throttle trace trim tune turn update upgrade validate verify watch
built kept put ran rebuilt rewrote
"""
_ACTION_VERBS = frozenset(stem(v) for v in _VERBS.split())


def reads_as_action(text: str) -> bool:
    """Whether a line tells someone to do something (or says what was done), not how things were."""
    words = _WORD.findall(text)
    if not words:
        return False
    first = words[0].lower()
    if stem(first) in _ACTION_VERBS or (first.endswith("ed") and len(first) > 4):
        return True
    return bool(_COMMAND.search(text))


def is_action(claim: Claim, items: Sequence[EvidenceItem]) -> bool:
    """Whether the claim is something to do: its field says (a runbook's first check is one), or else
    its statement's words."""
    known = _ACTION_BY_FIELD.get(claim.field) if claim.field is not None else None
    if claim.field == "first_check":
        kinds = {item.n: item.kind for item in items}
        known = True if any(kinds.get(n) == "runbook" for n in claim.citations) else None
    return known if known is not None else reads_as_action(claim.statement or claim.text)


def services_named(claim: Claim, items: Sequence[EvidenceItem]) -> list[str]:
    """The services of the evidence that the claim's statement (or the runbook it opens) names."""
    opened = claim.record if claim.field == "runbook" and claim.record else ""
    return named_in(f"{opened} {claim.statement or claim.text}", (item.service for item in items))


def named_in(text: str, services: Iterable[str | None], *, spoken: bool = False) -> list[str]:
    """The services (each once, in order) that the text names as a word: "restart the payment-gateway
    pods" names payment-gateway. ``spoken`` text (a move an engineer types) names a service without its
    "-service" suffix too, as engineers say it ("restart all checkout pods": checkout-service); a
    recorded line is read as written, where "the loyalty pool" of a checkout record is no service."""
    said = text.lower()
    return [
        s
        for s in dict.fromkeys(filter(None, services))
        if any(_said(name, said) for name in _names_of(s, spoken))
    ]


# What a service's name ends with that engineers leave out when they say it.
_SUFFIX = re.compile(r"[-_ ](?:service|svc)$")
# A name shorter than this once its suffix goes ("api", "web") is a word of every alert, not a service.
MIN_SHORT_NAME = 4


def _names_of(service: str, spoken: bool) -> list[str]:
    """A service's name as written, and, spoken, without a "-service" suffix when a word of its own
    remains."""
    full = service.lower()
    short = _SUFFIX.sub("", full)
    return [full, short] if spoken and short != full and len(short) >= MIN_SHORT_NAME else [full]


def _said(name: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None
