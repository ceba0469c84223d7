"""Memory settings: which driver, which bank, where the embedded file lives, how long to wait."""

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field

from incidents.env_settings import EnvSettings


class MemorySettings(EnvSettings):
    data_dir: Path = Path("data")
    memory: Literal["embedded", "hindsight"] = "embedded"
    bank_id: str = "meridian-commerce-incidents"
    hindsight_base_url: str = Field(
        default="http://127.0.0.1:8888",
        validation_alias=AliasChoices("RECALLOPS_HINDSIGHT_BASE_URL", "HINDSIGHT_BASE_URL"),
    )
    hindsight_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("RECALLOPS_HINDSIGHT_API_KEY", "HINDSIGHT_API_KEY")
    )
    memory_timeout_s: float = Field(default=10.0, gt=0)

    @property
    def embedded_path(self) -> Path:
        return self.data_dir / "memory.db"

    @property
    def location(self) -> str:
        """Which memory these settings open, in words that tell two apart: the driver and the Hindsight
        server and bank, or the embedded file's absolute path (the embedded driver has one bank a file)."""
        if self.memory == "hindsight":
            return f"hindsight {self.hindsight_base_url.rstrip('/')} bank {self.bank_id}"
        return f"embedded {self.embedded_path.resolve()}"
