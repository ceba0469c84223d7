"""LLM settings. With no Groq key the agent runs in evidence-only mode, a real product mode."""

from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class LLMSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RECALLOPS_", env_file=".env", extra="ignore", populate_by_name=True
    )

    groq_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("RECALLOPS_GROQ_API_KEY", "GROQ_API_KEY")
    )
    llm_model: str = "openai/gpt-oss-120b"
    llm_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("RECALLOPS_LLM_BASE_URL", "GROQ_BASE_URL")
    )
    llm_timeout_s: float = 30.0
    llm_max_retries: int = 3
    llm_max_tokens: int = 2048
    llm_mode: Literal["auto", "groq", "evidence-only"] = "auto"

    @property
    def uses_groq(self) -> bool:
        if self.llm_mode == "evidence-only":
            return False
        return self.llm_mode == "groq" or bool(self.groq_api_key)
