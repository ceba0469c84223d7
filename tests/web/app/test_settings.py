"""A number or address no deployment means is refused when the settings are read, not acted on."""

import pytest
from pydantic import ValidationError

from web.app.settings import Settings, typos


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("RECALLOPS_PORT", "70000"),
        ("RECALLOPS_PORT", "0"),
        ("RECALLOPS_SESSION_IDLE_S", "-1"),
        ("RECALLOPS_SESSION_LIFETIME_S", "0"),
        ("RECALLOPS_WORKER_POLL_S", "-1"),
        ("RECALLOPS_PROFILE_CHECK_S", "0"),
        ("RECALLOPS_PROFILE_REFRESH_DEBOUNCE_S", "-1"),
        ("RECALLOPS_TRUSTED_PROXIES", '["10.0.0.5", "not-an-ip"]'),
        ("RECALLOPS_MAX_BODY_BYTES", "-1"),
        ("RECALLOPS_MAX_IMPORT_BYTES", "0"),
        ("RECALLOPS_MAX_LABELS", "0"),
        ("RECALLOPS_MAX_LABEL_CHARS", "0"),
        ("RECALLOPS_MEMORY_TIMEOUT_S", "0"),
    ],
)
def test_a_value_out_of_bounds_is_refused(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert caught.value.errors()[0]["loc"][0] == variable.removeprefix("RECALLOPS_").lower()


def test_proxies_may_be_addresses_networks_or_everyone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLOPS_TRUSTED_PROXIES", '["10.0.0.5", "10.1.0.0/16", "::1", "*"]')
    assert Settings().web.trusted_proxies == ["10.0.0.5", "10.1.0.0/16", "::1", "*"]


def test_a_near_miss_of_a_setting_is_taken_for_a_typo_and_anything_else_is_left_alone() -> None:
    given = ["RECALLOPS_PROT", "RECALLOPS_notify_chanel", "RECALLOPS_PORT", "RECALLOPS_WEBHOOK_SECRET"]
    assert typos([*given, "PATH", "RECALLOPS_CACHE", "DATABASE_URL"]) == [
        ("RECALLOPS_NOTIFY_CHANEL", "RECALLOPS_NOTIFY_CHANNELS"),
        ("RECALLOPS_PROT", "RECALLOPS_PORT"),
    ]


def test_reading_the_settings_warns_of_a_mistyped_variable(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("RECALLOPS_PROT", "18739")
    with caplog.at_level("WARNING", logger="web.app.settings"):
        Settings()
    assert "RECALLOPS_PROT is not a setting RecallOps reads; did you mean RECALLOPS_PORT?" in caplog.text
