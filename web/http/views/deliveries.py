"""Where an incident's messages stand, one line per channel: "sent to #oncall 07:43", "failing: 404 ...".

A channel's line sums its rows for the incident: failing or failed if the newest trouble is not yet
behind a later success, pending while anything is owed, else sent (with the latest send time). The
channel is named by its label (a Slack channel, a redacted Apprise URL), never by its address.
"""

from dataclasses import dataclass
from datetime import datetime

from incidents.delivery.models import Delivery


@dataclass(frozen=True)
class DeliveryLine:
    channel: str
    label: str
    state: str  # pending | sent | failing | failed
    sent: int
    owed: int
    last_sent_at: datetime | None
    error: str | None
    next_attempt_at: datetime | None


def delivery_lines(rows: list[Delivery], labels: dict[str, str]) -> list[DeliveryLine]:
    by_channel: dict[str, list[Delivery]] = {}
    for row in rows:
        by_channel.setdefault(row.channel, []).append(row)
    lines: list[DeliveryLine] = []
    for channel, items in sorted(by_channel.items()):
        troubled = [row for row in items if row.state in ("failing", "failed")]
        owed = [row for row in items if row.state in ("pending", "failing")]
        sent = [row for row in items if row.state == "sent"]
        worst = troubled[-1] if troubled else None
        state = worst.state if worst else "pending" if owed else "sent"
        lines.append(
            DeliveryLine(
                channel=channel,
                label=labels.get(channel, channel),
                state=state,
                sent=len(sent),
                owed=len(owed),
                last_sent_at=max((row.sent_at for row in sent if row.sent_at), default=None),
                error=worst.last_error if worst else None,
                next_attempt_at=worst.next_attempt_at if worst and worst.state == "failing" else None,
            )
        )
    return lines
