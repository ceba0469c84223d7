"""A throwaway RecallOps in one directory: its own database and memory, for evals and benchmarks.

Everything else (bank id, timeouts, LLM key) comes from the environment as usual, so an eval or a
benchmark measures the configured product, never the operator's real data.
"""

from pathlib import Path
from typing import Any, Literal

from memory.service import Rejections, validate_items
from web.app.container import Container
from web.app.history import import_history
from web.app.settings import Settings


def sandbox_settings(
    data_dir: Path,
    *,
    memory: Literal["embedded", "hindsight"] = "embedded",
    hindsight_url: str | None = None,
    bank_id: str | None = None,
    llm: Literal["auto", "llm", "evidence-only"] = "evidence-only",
) -> Settings:
    """Settings whose database and embedded memory live under ``data_dir`` (created if missing)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    settings.web = settings.web.model_copy(update={"data_dir": data_dir, "run_worker": False})
    settings.incidents = settings.incidents.model_copy(update={"data_dir": data_dir, "database_url": None})
    memory_update: dict[str, object] = {"data_dir": data_dir, "memory": memory}
    if hindsight_url:
        memory_update["hindsight_base_url"] = hindsight_url
    if bank_id:
        memory_update["bank_id"] = bank_id
    settings.memory = settings.memory.model_copy(update=memory_update)
    settings.llm = settings.llm.model_copy(update={"llm_mode": llm})
    return settings


async def import_records(container: Container, records: list[dict[str, Any]], *, actor: str) -> None:
    """Import history rows exactly as ``recallops import`` does; any rejected row is an error here."""
    rejections = Rejections()
    rows = validate_items(enumerate(records, start=1), rejections)
    summary = await import_history(
        sessions=container.sessions,
        bank=container.bank,
        rows=rows,
        origin="import",
        actor=actor,
        rejections=rejections,
    )
    if summary.rejected_count:
        reasons = "; ".join(f"{r.incident_id or r.line}: {', '.join(r.reasons)}" for r in summary.rejected)
        raise RuntimeError(f"{summary.rejected_count} record(s) rejected by the import: {reasons}")
