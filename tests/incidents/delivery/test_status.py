"""One line per channel, on the incident page and in its API: what its state is and why."""

from datetime import UTC, datetime, timedelta

from incidents.delivery.holds import ChannelHold
from incidents.delivery.models import Delivery
from incidents.delivery.status import delivery_lines

NOW = datetime(2026, 3, 14, 7, 43, tzinfo=UTC)
LABELS = {"oncall": "#oncall", "audit": "webhook https://audit.example.org/…"}
RATE_LIMITED = ChannelHold(
    channel="oncall",
    until=NOW + timedelta(minutes=5),
    reason="429 from Slack (ratelimited)",
    reason_at=NOW - timedelta(seconds=10),
)


def row(channel: str, state: str, **fields: object) -> Delivery:
    return Delivery(channel=channel, event="briefing_stored", state=state, **fields)


def test_a_briefing_owed_to_a_held_channel_is_held_until_the_receivers_time_with_its_answer() -> None:
    [line] = delivery_lines([row("oncall", "pending")], LABELS, {"oncall": RATE_LIMITED})
    assert (line.state, line.label, line.owed, line.hold) == ("held", "#oncall", 1, RATE_LIMITED)


def test_a_failing_row_waiting_on_the_hold_is_held_not_failing() -> None:
    failing = row("oncall", "failing", last_error="429 from Slack (ratelimited)", next_attempt_at=NOW)
    [line] = delivery_lines([failing], LABELS, {"oncall": RATE_LIMITED})
    assert line.state == "held"


def test_a_hold_on_one_channel_leaves_the_others_as_they_are() -> None:
    rows = [row("oncall", "pending"), row("audit", "pending")]
    lines = delivery_lines(rows, LABELS, {"oncall": RATE_LIMITED})
    assert [(line.channel, line.state) for line in lines] == [("audit", "pending"), ("oncall", "held")]
    assert lines[0].hold is None


def test_a_hold_says_nothing_about_a_channel_that_already_has_the_briefing_or_failed_it() -> None:
    sent = row("oncall", "sent", sent_at=NOW - timedelta(minutes=1))
    failed = row("audit", "failed", last_error="404 from the webhook: gone")
    holds = {"oncall": RATE_LIMITED, "audit": ChannelHold("audit", NOW + timedelta(minutes=1), None, None)}
    lines = delivery_lines([sent, failed], LABELS, holds)
    assert [(line.channel, line.state, line.hold) for line in lines] == [
        ("audit", "failed", None),  # only `notify retry` sends it again, whatever the receiver asks
        ("oncall", "sent", None),
    ]


def test_a_failing_channel_says_when_its_receiver_last_answered_with_the_error() -> None:
    older = row("oncall", "failed", last_error="404 from Slack", last_error_at=NOW - timedelta(hours=1))
    newer = row(
        "oncall",
        "failing",
        last_error="503 from Slack",
        last_error_at=NOW - timedelta(seconds=30),
        next_attempt_at=NOW + timedelta(minutes=2),
    )
    [line] = delivery_lines([older, newer], LABELS, {})
    assert (line.state, line.error, line.error_at) == (
        "failing",
        "503 from Slack",
        NOW - timedelta(seconds=30),
    )
    assert line.next_attempt_at == NOW + timedelta(minutes=2)


def test_while_the_briefing_is_made_each_channel_it_goes_to_is_upcoming_even_one_never_used() -> None:
    lines = delivery_lines([], LABELS, {}, upcoming=["oncall", "never-used"])
    assert [(line.channel, line.label, line.state) for line in lines] == [
        ("never-used", "never-used", "upcoming"),
        ("oncall", "#oncall", "upcoming"),
    ]


def test_a_held_channel_holds_the_briefing_being_made_even_after_an_earlier_message_went() -> None:
    acknowledged = row("oncall", "sent", sent_at=NOW - timedelta(minutes=20))
    [line] = delivery_lines([acknowledged], LABELS, {"oncall": RATE_LIMITED}, upcoming=["oncall"])
    assert (line.state, line.owed, line.hold) == ("held", 0, RATE_LIMITED)
