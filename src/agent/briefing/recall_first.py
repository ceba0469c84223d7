"""Hop 1 of a briefing with memory on is a recall of the alert: the one hop the model does not choose.

A briefing from memory needs memory: a model that answers from the alert alone writes history it
never read ("two incidents in the last 24 hours", "the fix that worked before"), and small models do
exactly that when recall is left to them. So hop 1 asks for ``recall_similar_incidents`` by name
(``tool_choice``, or a JSON schema on the answer where a server ignores a named tool, or not at all
where the model is too slow to be asked what is already known). When the turn comes back without
it (an endpoint that ignores the request, a model that writes the call as prose, a call the
provider rejected), the loop makes the call itself with the alert's own text and hands the result
to the model. When that recall, scoped to the alert's service, comes back thin (fewer than two
matches, or none settled), the loop also looks across services in the same hop, as the evidence-only
planner does (``planner.next_recall``): a small model answers from what it was handed, and the same
error on another service is often the answer. Later hops are the model's to choose.

Every recall query is checked, on every hop: one that carries none of the alert's words once the
evidence label's are set aside ("The alert on checkout-service (untrusted, possibly stale)") is
searching for the label, not the alert, and is replaced by the alert's text.
"""

import json
from dataclasses import dataclass, replace

from agent.briefing.planner import SCOPED_LIMIT
from agent.core.conversation import ModelTurn, ToolCall
from agent.core.evidence import AlertInput
from agent.core.tools import RECALL, RecallArgs
from memory.text import tokens

_LABEL = "alert untrusted possibly stale uncertain evidence data"
LOOP_CALL = "called by the loop: a briefing's first hop recalls the alert"
ACROSS_CALL = (
    "called by the loop: the alert's service gave few or no settled matches, so the first hop also "
    "looks across services, as the evidence-only briefing does"
)
REPLACED_QUERY = "the query named the evidence label, not the alert: the alert's text was used"


def names_the_alert(query: str, alert: AlertInput) -> bool:
    """Whether a recall query carries any of the alert's own words besides the evidence label's."""
    if query.strip() == alert.description.strip():
        return True
    label = tokens(f"{_LABEL} {alert.service or ''}")
    return bool((tokens(query) - label) & tokens(alert.description))


@dataclass(frozen=True)
class RecallFirst:
    """The first-hop rule and the query check for one alert's briefing."""

    alert: AlertInput

    def default_call(self) -> ToolCall:
        """The recall the loop makes: the evidence-only briefing's first, as deep (``SCOPED_LIMIT``)."""
        args = RecallArgs(
            alert_description=self.alert.description[:4000], service=self.alert.service, limit=SCOPED_LIMIT
        )
        return ToolCall(id="recall-first", name=RECALL, arguments=args.model_dump_json(exclude_none=True))

    def checked(self, call: ToolCall) -> tuple[ToolCall, str | None]:
        """The call, with its query replaced by the alert's text when it is only the label."""
        if call.name != RECALL:
            return call, None
        try:
            raw = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            return call, None
        query = raw.get("alert_description") if isinstance(raw, dict) else None
        if not isinstance(query, str) or names_the_alert(query, self.alert):
            return call, None
        raw["alert_description"] = self.alert.description[:4000]
        return ToolCall(id=call.id, name=call.name, arguments=json.dumps(raw)), REPLACED_QUERY

    def apply(self, turn: ModelTurn, *, first_hop: bool) -> tuple[ModelTurn, dict[str, str]]:
        """The turn the loop runs, and a note for each call the rule made or changed (by call id)."""
        notes: dict[str, str] = {}
        calls: list[ToolCall] = []
        for call in turn.tool_calls:
            checked, note = self.checked(call)
            calls.append(checked)
            if note:
                notes[checked.id] = note
        if first_hop and not any(c.name == RECALL for c in calls):
            default = self.default_call()
            calls.insert(0, default)
            notes[default.id] = LOOP_CALL
            return ModelTurn(content=None, tool_calls=calls, usage=turn.usage), notes
        return replace(turn, tool_calls=calls), notes
