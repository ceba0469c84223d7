"""The choice between a chat model behind an endpoint and the evidence-only planner, and the status of
the last model call.

The endpoint client (``agent.endpoint``) imports the ``groq`` and ``openai`` SDKs, seconds of imports
that a process with no model configured never needs: ``open_model`` imports it only when a model is
set, so ``recallops ask`` in evidence-only mode starts without them.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent.briefing.planner import EvidenceOnlyPlanner
from agent.core.conversation import Model
from agent.settings import LLMSettings


@dataclass
class LLMStatus:
    """The last outcome of a model call in this process, for readiness checks and the operator."""

    last_ok_at: datetime | None = None
    last_error_at: datetime | None = None
    last_error: str | None = None

    @property
    def ok(self) -> bool:
        if self.last_error_at is None:
            return True
        return self.last_ok_at is not None and self.last_ok_at > self.last_error_at

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "last_ok_at": self.last_ok_at.isoformat() if self.last_ok_at else None,
            "last_error_at": self.last_error_at.isoformat() if self.last_error_at else None,
            "last_error": self.last_error,
        }


STATUS = LLMStatus()


def open_model(settings: LLMSettings) -> Model:
    """The configured endpoint (a key, a base URL, or ``RECALLOPS_LLM_MODE=llm``), else the planner."""
    if settings.uses_llm:
        from agent.endpoint import EndpointChatModel

        return EndpointChatModel(settings)
    return EvidenceOnlyPlanner()
