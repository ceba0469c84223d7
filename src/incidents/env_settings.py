"""The base of every package's settings: ``RECALLOPS_*`` variables, then a ``.env`` file, read alike.

python-dotenv expands ``${NAME}`` in a ``.env`` value and makes a missing variable an empty string, so
a secret written ``${WEBHOOK_SECRET}`` would silently become "". Values from the file are taken as
written instead, exactly as the same value in the environment is: a ``${NAME}`` reference is then
expanded (or refused when missing) by whatever reads that setting, e.g. the delivery channels.
"""

from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.sources.utils import parse_env_vars


class _LiteralDotEnv(DotEnvSettingsSource):
    """A ``.env`` source that reads every value literally, with no ``${NAME}`` interpolation."""

    def _read_env_file(self, file_path: Path) -> Mapping[str, str | None]:
        values = dotenv_values(file_path, encoding=self.env_file_encoding or "utf-8", interpolate=False)
        return parse_env_vars(values, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


class EnvSettings(BaseSettings):
    """Settings read from ``RECALLOPS_*`` variables and ``.env``, the file's values taken as written."""

    model_config = SettingsConfigDict(env_prefix="RECALLOPS_", env_file=".env", extra="ignore")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        assert isinstance(dotenv_settings, DotEnvSettingsSource)
        literal = _LiteralDotEnv(
            settings_cls,
            env_file=dotenv_settings.env_file,
            env_file_encoding=dotenv_settings.env_file_encoding,
            case_sensitive=dotenv_settings.case_sensitive,
            env_prefix=dotenv_settings.env_prefix,
            env_ignore_empty=dotenv_settings.env_ignore_empty,
            env_parse_none_str=dotenv_settings.env_parse_none_str,
        )
        return init_settings, env_settings, literal, file_secret_settings
