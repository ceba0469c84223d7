"""A number or address no deployment means is refused when the settings are read, not acted on."""

import pytest
from pydantic import ValidationError

from web.app.settings import Settings


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
