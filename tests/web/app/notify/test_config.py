"""Channel configuration: YAML or JSON, secrets from the environment, clear errors, nothing leaked."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from web.app.notify.config import NotifyConfigError, NotifySettings, load_channels, redact


def test_yaml_channels_read_their_secrets_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK", "https://hooks.slack.com/services/T1/B2/very-secret-path")
    config = tmp_path / "notify.yaml"
    config.write_text(
        "channels:\n"
        "  - {name: oncall, kind: slack, webhook_url: '${HOOK}', min_severity: warning}\n"
        "  - {name: mail, kind: apprise, url: 'mailto://bot:hunter2@smtp.example.org?to=a@example.org'}\n"
    )
    slack, mail = load_channels(NotifySettings(notify_config=config))
    assert slack.secrets() == ["https://hooks.slack.com/services/T1/B2/very-secret-path"]
    assert "very-secret-path" not in repr(slack) and "hunter2" not in repr(mail)
    assert slack.route().min_severity == "warning" and slack.route().label == "Slack incoming webhook"
    assert "hunter2" not in mail.route().label and "smtp.example.org" in mail.route().label


@pytest.mark.parametrize(
    ("channels", "message"),
    [
        ([{"name": "a", "kind": "slack"}], "give exactly one of webhook_url or token"),
        ([{"name": "a", "kind": "slack", "token": "xoxb-1"}], "a bot token needs a channel"),
        (
            [{"name": "a", "kind": "webhook", "url": "http://x", "min_severity": "loud"}],
            "min_severity 'loud'",
        ),
        ([{"name": "a", "kind": "webhook", "url": "http://x", "events": ["paged"]}], "events"),
        ([{"name": "a", "kind": "fax", "url": "http://x"}], "kind: 'fax' is not a channel kind; use slack, "),
        ([{"name": "a", "url": "http://x"}], "kind: missing; say which channel this is: slack, apprise or "),
        ([{"name": "a", "kind": "webhook", "url": "${NOT_SET_ANYWHERE}"}], "NOT_SET_ANYWHERE is not set"),
        ([{"name": "a", "kind": "webhook", "url": "http://x", "secret": ""}], "secret: .*is empty"),
        ([{"name": "a", "kind": "slack", "webhook_url": ""}], "webhook_url: is not an http"),
        ([{"name": "a", "kind": "slack", "token": " ", "channel": "#c"}], "token: .*is empty"),
        ([{"name": "a", "kind": "apprise", "url": ""}], "url: .*is empty"),
        ([{"name": "a", "kind": "slack", "webhook_url": "not a url"}], "webhook_url: is not an http"),
        ([{"name": "a", "kind": "webhook", "url": "ftp://zz/x"}], "url: is not an http"),
        ([{"name": "a", "kind": "webhook", "url": "https://"}], "url: is not an http"),
        ([{"name": "a", "kind": "slack", "token": "x", "channel": "#c", "api_url": "x"}], "api_url: is not"),
        ([{"name": "a", "kind": "apprise", "url": "not a url"}], "url is not a URL Apprise recognises"),
        (
            [
                {"name": "a", "kind": "webhook", "url": "http://x"},
                {"name": "a", "kind": "webhook", "url": "http://y"},
            ],
            "used twice",
        ),
    ],
)
def test_a_bad_channel_is_an_error_naming_the_problem(
    channels: list[dict[str, object]], message: str
) -> None:
    with pytest.raises(NotifyConfigError, match=message):
        load_channels(NotifySettings(notify_channels=channels))


def test_a_channel_error_names_the_channel_by_its_number_and_name() -> None:
    good = {"name": "fine", "kind": "webhook", "url": "https://hooks.example.org/x"}
    for bad, expected in [
        ({"name": "oncall", "kind": "slack"}, "channel 2 (oncall): give exactly one of webhook_url or token"),
        ({"name": "audit", "kind": "webhook", "url": "ftp://zz/x"}, "channel 2 (audit): url: is not an http"),
        ({"name": "env", "kind": "webhook", "url": "${NOT_SET_ANYWHERE}"}, "channel 2 (env): environment"),
        ({"kind": "webhook", "url": "http://x"}, "channel 2: name: Field required"),
        ({**good}, "channel 2 (fine): the name is used twice"),
    ]:
        with pytest.raises(NotifyConfigError) as caught:
            load_channels(NotifySettings(notify_channels=[good, bad]))
        assert str(caught.value).startswith(expected), str(caught.value)


def test_errors_are_scrubbed_of_secrets_and_of_a_webhook_urls_path() -> None:
    url = "https://hooks.slack.com/services/T1/B2/very-secret-path"
    text = f"ConnectError: {url} and then /services/T1/B2/very-secret-path, token xoxb-9"
    scrubbed = redact(text, [url, "xoxb-9"])
    assert "very-secret-path" not in scrubbed and "xoxb-9" not in scrubbed


def test_an_ntfy_topic_is_a_secret_and_its_label_does_not_show_it() -> None:
    [hosted, cloud] = load_channels(
        NotifySettings(
            notify_channels=[
                {"name": "phones", "kind": "apprise", "url": "ntfys://ntfy.example.org/topic-secret-1"},
                {"name": "cloud", "kind": "apprise", "url": "ntfy://topic-secret-2"},
            ]
        )
    )
    assert "topic-secret-1" not in hosted.route().label and "ntfy.example.org" in hosted.route().label
    assert "topic-secret-2" not in cloud.route().label
    assert "topic-secret-1" in hosted.secrets() and "topic-secret-2" in cloud.secrets()
    assert "topic-secret-1" not in redact("failed to post to topic-secret-1", hosted.secrets())


def test_a_missing_variable_in_the_env_file_is_refused_as_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RECALLOPS_NOTIFY_CHANNELS", raising=False)
    monkeypatch.delenv("MISSING_SECRET", raising=False)
    channel = '{"name":"x","kind":"webhook","url":"http://127.0.0.1:1/h","secret":"${MISSING_SECRET}"}'
    (tmp_path / ".env").write_text(f"RECALLOPS_NOTIFY_CHANNELS=[{channel}]\n")
    with pytest.raises(NotifyConfigError, match="MISSING_SECRET is not set"):
        load_channels(NotifySettings())


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("https://audit.example.org", "webhook https://audit.example.org"),
        ("http://bot:pw@127.0.0.1:8080/hooks/secret-path", "webhook http://127.0.0.1:8080/…"),
        ("https://[::1]:8443/?key=secret-key", "webhook https://[::1]:8443/…"),
    ],
)
def test_a_webhooks_label_names_its_host_and_port_and_hides_its_path(url: str, label: str) -> None:
    [hook] = load_channels(NotifySettings(notify_channels=[{"name": "h", "kind": "webhook", "url": url}]))
    assert hook.label() == label


@pytest.mark.parametrize("url", ["recallops.example.org", "//recallops.example.org", "ftp://r.example.org"])
def test_a_public_url_without_an_http_scheme_is_refused(url: str) -> None:
    with pytest.raises(ValidationError, match="public_url"):
        NotifySettings(public_url=url)
    assert NotifySettings(public_url="https://r.example.org/").public_url == "https://r.example.org/"


@pytest.mark.parametrize("minimum", ["P2", "sev-2", "SEV 2", "Warning", "not classified", "err"])
def test_a_minimum_may_be_written_as_the_alerting_system_writes_it(minimum: str) -> None:
    """A team paged by priorities routes by them; the minimum is kept as written."""
    [channel] = load_channels(
        NotifySettings(
            notify_channels=[{"name": "a", "kind": "webhook", "url": "http://x", "min_severity": minimum}]
        )
    )
    assert channel.route().min_severity == minimum


def test_an_unknown_minimum_is_refused_naming_it_and_every_accepted_spelling() -> None:
    with pytest.raises(NotifyConfigError) as caught:
        load_channels(
            NotifySettings(
                notify_channels=[{"name": "a", "kind": "webhook", "url": "http://x", "min_severity": "P6"}]
            )
        )
    message = str(caught.value)
    assert message.startswith(
        "channel 1 (a): min_severity 'P6' is not a severity RecallOps ranks; use one of"
    )
    assert "critical, page" in message and "P1, SEV1 > high" in message and "not classified" in message
