"""LLM settings. With no key and no endpoint the agent runs in evidence-only mode, a real product mode.

Two kinds of endpoint, told apart by the base URL alone:

- none, or a bare host (``https://gateway.example``): Groq through the ``groq`` SDK, which posts to
  ``{base}/openai/v1/chat/completions``;
- a base URL ending in ``/v1`` (``http://127.0.0.1:8080/v1``): any server documenting an
  OpenAI-compatible API (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, and Groq's own ``.../openai/v1``),
  through the ``openai`` SDK, which posts to ``{base}/chat/completions``.

Timeouts fit the endpoint unless set: a hosted API answers a hop in seconds, a model on a team's
own CPU box can take minutes. So does the reliability profile: the model writes it on Groq, and on an
OpenAI-compatible endpoint only when asked, since a server with one slot would take the profile's
calls ahead of the briefings.
"""

from typing import Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from incidents.env_settings import EnvSettings

HOSTED_TIMEOUT_S = 30.0
SELF_HOSTED_TIMEOUT_S = 600.0

Endpoint = Literal["groq", "openai-compatible"]


class LLMSettings(EnvSettings):
    model_config = SettingsConfigDict(populate_by_name=True)

    llm_api_key: str | None = Field(
        default=None,
        validation_alias=AliasChoices("RECALLOPS_LLM_API_KEY", "RECALLOPS_GROQ_API_KEY", "GROQ_API_KEY"),
    )
    llm_model: str = "openai/gpt-oss-120b"
    llm_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("RECALLOPS_LLM_BASE_URL", "GROQ_BASE_URL")
    )
    # Unset: 30 s for Groq, 600 s for an OpenAI-compatible base URL (a local model takes minutes).
    llm_timeout_s: float | None = Field(default=None, gt=0)
    # Retries re-send a request only when it never reached the model or was turned away before it
    # was read (429, 5xx, refused connection): a request that timed out is never sent again.
    llm_max_retries: int = Field(default=3, ge=0)
    llm_max_tokens: int = Field(default=2048, ge=1)
    # How the first hop's recall is asked for: ``tool_choice`` naming the tool; a JSON schema on the
    # answer (servers that ignore a named tool_choice, such as llama.cpp's); or ``loop``: the loop
    # makes it without asking (a slow local model is spared a call whose answer is known).
    llm_force_call: Literal["tool_choice", "json_schema", "loop"] = "tool_choice"
    llm_mode: Literal["auto", "llm", "groq", "evidence-only"] = "auto"
    # Who writes the reliability profile in LLM mode: ``model``, ``offline`` (grouped from the records
    # alone, as in evidence-only mode), or ``auto``: the model on Groq, offline on a ``/v1`` endpoint.
    llm_profile: Literal["auto", "model", "offline"] = "auto"

    @property
    def endpoint(self) -> Endpoint:
        path = urlsplit(self.llm_base_url).path.rstrip("/") if self.llm_base_url else ""
        return "openai-compatible" if path.endswith("/v1") else "groq"

    @property
    def timeout_s(self) -> float:
        if self.llm_timeout_s is not None:
            return self.llm_timeout_s
        return HOSTED_TIMEOUT_S if self.endpoint == "groq" else SELF_HOSTED_TIMEOUT_S

    @property
    def profile_uses_llm(self) -> bool:
        if not self.uses_llm or self.llm_profile == "offline":
            return False
        return self.llm_profile == "model" or self.endpoint == "groq"

    @property
    def uses_llm(self) -> bool:
        """``auto`` turns the model on with a key or an endpoint (a local server needs no key)."""
        if self.llm_mode == "evidence-only":
            return False
        return self.llm_mode != "auto" or bool(self.llm_api_key) or bool(self.llm_base_url)
