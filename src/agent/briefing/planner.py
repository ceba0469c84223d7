"""The evidence-only planner: a deterministic model that drives the same loop as the LLM.

It is a product mode (the default without a key), not a test double. Hop 1 recalls within the
alert's service; hop 2 recalls across every service, always: the same failure on another service is
often the answer (a shared database, a gateway), and an alert that names other services ("inserts
failing on order, cart and checkout") says so itself. Then it answers with the briefing assembled from
the records. It reads the structured tool outcomes of the conversation, never prose, and answers with
the assembled value.

The look across services was once spared when a scoped match was settled (0.8 or more). A search
within one service ranks its records among that service's alone, so the first of three looked settled
beside another service's record that the whole bank ranks higher (the disk-full database behind
writes failing everywhere, stated as order-service's slow-order record); and a team's labels hear only
of the precedents its briefings show. The search costs milliseconds; the precedent it finds, when it
is there, is the briefing.
"""

import json
from typing import Any

from agent.briefing.assemble import assemble
from agent.core.conversation import ConversationView, ModelTurn, ToolCall
from agent.core.schema import Mode
from agent.core.tools import RECALL

SCOPED_LIMIT = 5
CROSS_LIMIT = 5


def next_recall(view: ConversationView) -> ToolCall | None:
    """The recall the evidence-only briefing makes next, if any: the alert within its service first,
    then across every service. The loop asks it after a model's first hop too, so a model that answers
    from a scoped recall alone is briefed from what the evidence-only briefing would have read."""
    recalls = [o for o in view.outcomes if o.tool == RECALL]
    if any(not o.ok for o in recalls):
        return None
    alert = view.evidence.alert
    if not recalls:
        return _call(len(view.outcomes), alert.description, alert.service, SCOPED_LIMIT)
    if len(recalls) == 1 and recalls[0].scoped:
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
