"""A ``.env`` value is read as written, as the same value in the environment is: no ``${NAME}`` expansion."""

from pathlib import Path

import pytest

from incidents.settings import IncidentSettings


def test_a_reference_in_the_env_file_is_kept_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    monkeypatch.delenv("RECALLOPS_DATABASE_URL", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    (tmp_path / ".env").write_text("RECALLOPS_DATABASE_URL=sqlite:///${NOT_SET_ANYWHERE}/x.db\n")
    assert IncidentSettings().database_url == "sqlite:///${NOT_SET_ANYWHERE}/x.db"
    assert IncidentSettings(_env_file=None).database_url is None  # type: ignore[call-arg]
