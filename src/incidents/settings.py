"""Database and intake settings, read from ``RECALLOPS_*`` variables and ``.env``."""

from pathlib import Path

from pydantic import AliasChoices, Field

from incidents.env_settings import EnvSettings

DEFAULT_SERVICE_LABELS = ("service", "job", "app", "app_kubernetes_io_name", "component")


class IncidentSettings(EnvSettings):
    data_dir: Path = Path("data")
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("RECALLOPS_DATABASE_URL", "DATABASE_URL")
    )
    # False on replicas when a release job runs `recallops db upgrade`: the server then waits (up to
    # schema_wait_s) for the schema to reach head instead of migrating it itself.
    migrate_on_start: bool = True
    schema_wait_s: float = Field(default=120.0, ge=0)
    service_labels: tuple[str, ...] = DEFAULT_SERVICE_LABELS
    max_body_bytes: int = Field(default=1024 * 1024, ge=1)
    max_import_bytes: int = Field(default=20 * 1024 * 1024, ge=1)  # one history import; split bigger files
    max_labels: int = Field(default=64, ge=1)
    max_label_chars: int = Field(default=4096, ge=1)

    @property
    def resolved_database_url(self) -> str:
        """SQLite under the data directory unless a URL is given, so two data dirs never share a database."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'recallops.db').resolve()}"
