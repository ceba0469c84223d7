"""The session signing key: taken from the environment, else generated once, private, and reused."""

import stat
from pathlib import Path

import pytest

from web.app.settings import WebSettings
from web.http.sessions import SECRET_FILE, secret_key


def test_configured_key_wins(tmp_path: Path) -> None:
    settings = WebSettings(data_dir=tmp_path, secret_key="from-the-environment")
    assert secret_key(settings) == "from-the-environment"
    assert not (tmp_path / SECRET_FILE).exists()


def test_generated_once_owner_only_and_reused(tmp_path: Path) -> None:
    settings = WebSettings(data_dir=tmp_path / "data", secret_key=None)
    first = secret_key(settings)
    path = tmp_path / "data" / SECRET_FILE
    assert len(first) >= 48
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key(settings) == first
    assert secret_key(WebSettings(data_dir=tmp_path / "other", secret_key=None)) != first


def test_an_empty_key_file_is_an_error_that_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / SECRET_FILE).write_text("")
    with pytest.raises(ValueError, match="delete it to generate a new key"):
        secret_key(WebSettings(data_dir=tmp_path, secret_key=None))


def test_no_draft_files_are_left_behind(tmp_path: Path) -> None:
    secret_key(WebSettings(data_dir=tmp_path, secret_key=None))
    assert [p.name for p in tmp_path.iterdir()] == [SECRET_FILE]
