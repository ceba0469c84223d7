"""Where an incident's messages stand, one line per channel: "sent to #oncall 07:43", "failing: 404 ...".

A channel's line sums its rows for the incident: failing or failed if the newest trouble is not yet
behind a later success, pending while anything is owed, else sent (with the latest send time). While
the first briefing is being made, the channels it will go to have no row yet: each is upcoming (a
channel never used included), so the page says where the briefing goes before it exists. A channel
its receiver asked to wait (a 429's ``Retry-After`` holds the whole channel, on every replica) is
held while this incident is owed anything there, its coming briefing included: until when, and what
the receiver answered, which may have been to a message of another incident. A failed row stays
failed however the channel is held: only ``notify retry`` sends it again. The channel is named by
its label (a Slack channel, a redacted Apprise URL), never by its address.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime

from incidents.delivery.holds import ChannelHold
from incidents.delivery.models import Delivery


@dataclass(frozen=True)
class DeliveryLine:
    channel: str
    label: str
    state: str  # upcoming | pending | held | sent | failing | failed
    sent: int
    owed: int
    last_sent_at: datetime | None
    error: str | None
    error_at: datetime | None  # when the receiver answered with ``error`` (unknown on rows before 0011)
    next_attempt_at: datetime | None
    hold: ChannelHold | None = None  # set when the state is held


def delivery_lines(
    rows: list[Delivery],
    labels: Mapping[str, str],
    holds: Mapping[str, ChannelHold],
    upcoming: Collection[str] = (),
) -> list[DeliveryLine]:
    """``upcoming``: the channels the briefing being made will be owed to (none once it is stored)."""
    by_channel: dict[str, list[Delivery]] = {name: [] for name in upcoming}
    for row in rows:
        by_channel.setdefault(row.channel, []).append(row)
    lines: list[DeliveryLine] = []
    for channel, items in sorted(by_channel.items()):
        troubled = [row for row in items if row.state in ("failing", "failed")]
        owed = [row for row in items if row.state in ("pending", "failing")]
        sent = [row for row in items if row.state == "sent"]
        worst = troubled[-1] if troubled else None
        state = worst.state if worst else "pending" if owed else "sent" if sent else "upcoming"
        waits = bool(owed) or channel in upcoming
        hold = holds.get(channel) if waits and state != "failed" else None
        lines.append(
            DeliveryLine(
                channel=channel,
                label=labels.get(channel, channel),
                state="held" if hold else state,
                sent=len(sent),
                owed=len(owed),
                last_sent_at=max((row.sent_at for row in sent if row.sent_at), default=None),
                error=worst.last_error if worst else None,
                error_at=worst.last_error_at if worst else None,
                next_attempt_at=worst.next_attempt_at if worst and worst.state == "failing" else None,
                hold=hold,
            )
        )
    return lines
