"""The evidence-only planner: a deterministic model that drives the same loop as the LLM.

It is a product mode (the default without a key), not a test double. Hop 1 recalls within the
alert's service; hop 2 recalls across every service when the scoped results are few or none of them
is a settled precedent (calibrated confidence, ``agent.core.confidence``: the same error on another
service is often the answer); then it answers with the briefing assembled from the records. It reads
the structured tool outcomes of the conversation, never prose, and answers with the assembled value.

Settled, for sparing the look across services, means settled by the fit in use **and** by the shipped
one. A team's fit (``agent.core.team_fit``) learns only from the precedents its briefings showed: alone,
once it trusted its own service's records, it would stop showing, and so stop hearing about, another
service's record that was the answer; the shipped fit alone does not know the team.
"""

import json
from typing import Any

from agent.briefing.assemble import assemble
from agent.core.confidence import confidence_of
from agent.core.conversation import ConversationView, ModelTurn, ToolCall
from agent.core.evidence import Match
from agent.core.schema import Mode
from agent.core.tools import RECALL

SCOPED_LIMIT = 5
CROSS_LIMIT = 5
# Fewer scoped matches than this, or none settled, and the planner also looks across services.
ENOUGH_SCOPED = 2


def settled(match: Match) -> bool:
    """Sure enough, by the fit in use and by the shipped one, that the look across services is not
    worth its time."""
    return match.confidence.settled and confidence_of(match.item.features, ranking_model=None).settled


def next_recall(view: ConversationView) -> ToolCall | None:
    """The recall the evidence-only briefing makes next, if any: the alert within its service first,
    then across every service when that found fewer than ``ENOUGH_SCOPED`` or none settled. The loop
    asks it after a model's first hop too, so a model that answers from a thin scoped recall is briefed
    from what the evidence-only briefing would have read."""
    recalls = [o for o in view.outcomes if o.tool == RECALL]
    if any(not o.ok for o in recalls):
        return None
    alert = view.evidence.alert
    if not recalls:
        return _call(len(view.outcomes), alert.description, alert.service, SCOPED_LIMIT)
    if len(recalls) == 1 and recalls[0].scoped:
        scoped = recalls[0].matches
        if len(scoped) < ENOUGH_SCOPED or not any(map(settled, scoped)):
            return _call(len(view.outcomes), alert.description, None, CROSS_LIMIT)
    return None


def _call(seq: int, description: str, service: str | None, limit: int) -> ToolCall:
    args: dict[str, Any] = {"alert_description": description[:4000], "limit": limit}
    if service:
        args["service"] = service
    return ToolCall(id=f"plan-{seq + 1}", name=RECALL, arguments=json.dumps(args))


def _offered(tools: list[dict[str, Any]] | None) -> set[str]:
    return {tool["function"]["name"] for tool in tools or []}


class EvidenceOnlyPlanner:
    name = "evidence-only"
    mode: Mode = "evidence-only"

    def next_turn(self, view: ConversationView, tools: list[dict[str, Any]] | None) -> ModelTurn:
        call = next_recall(view) if RECALL in _offered(tools) else None
        if call is not None:
            return ModelTurn(content=None, tool_calls=[call])
        return ModelTurn(content=None, answer=assemble(view))

    async def aclose(self) -> None:
        return None
