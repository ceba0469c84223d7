"""Where an incident's messages stand, one line per channel: "sent to #oncall 07:43", "failing: 404 ...".

A channel's line sums its rows for the incident: failing or failed if the newest trouble is not yet
behind a later success, pending while anything is owed, else sent (with the latest send time). While
the first briefing is being made, the channels it will go to have no row yet: each is upcoming (a
channel never used included), so the page says where the briefing goes before it exists. A channel
its receiver asked to wait (a 429's or 503's ``Retry-After`` holds the whole channel, on every
replica) is held while this incident is owed anything there, its coming briefing included: until
when, and what the receiver answered, which may have been to a message of another incident. A failed row stays
failed however the channel is held: only ``notify retry`` sends it again. The channel is named by
its label (a Slack channel, a redacted Apprise URL), never by its address.

``incident_delivery`` is the one reading of it: the incident page shows its lines and the incident API
(and the MCP tool over it) returns them as they are, so a script and the engineer see the same state.
"""

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from incidents.briefings import service as briefing_service
from incidents.delivery.holds import ChannelHold, channel_holds
from incidents.delivery.models import Delivery
from incidents.delivery.outbox import incident_deliveries
from incidents.delivery.routing import BRIEFING_STORED, channel_labels, routes_for
from incidents.incident.models import Incident
from incidents.timeutil import utcnow

DeliveryState = Literal["upcoming", "pending", "held", "sent", "failing", "failed"]


class DeliveryLine(BaseModel):
    """Where the incident's messages to one chat channel stand."""

    model_config = ConfigDict(frozen=True)

    channel: str = Field(description="The channel's configured name")
    label: str = Field(description="Where it posts (a Slack channel, a redacted URL), never its address")
    state: DeliveryState = Field(
        description="upcoming: the briefing being made goes here; pending: being sent; held: the receiver "
        "asked to wait (see hold); sent; failing: retried after the receiver's error; failed: given up"
    )
    sent: int = Field(description="Messages the receiver accepted")
    owed: int = Field(description="Messages still to send (pending or failing)")
    last_sent_at: datetime | None = Field(description="When the latest accepted message was sent")
    error: str | None = Field(description="The receiver's answer to the newest failing or failed message")
    error_at: datetime | None = Field(
        description="When the receiver answered with error (null for errors recorded before schema 0011)"
    )
    next_attempt_at: datetime | None = Field(description="When a failing message is tried again")
    hold: ChannelHold | None = Field(
        default=None, description="Set when the state is held: until when, and the receiver's answer"
    )


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


def incident_delivery(
    *, db_session: Session, incident: Incident, now: datetime | None = None
) -> list[DeliveryLine]:
    """Where the incident's messages stand per channel at ``now``; while its first briefing is being
    made, the channels that briefing will go to as well."""
    coming = briefing_service.first_briefing_coming(db_session=db_session, incident_id=incident.id)
    upcoming = (
        routes_for(
            db_session=db_session, event=BRIEFING_STORED, service=incident.service, severity=incident.severity
        )
        if coming
        else []
    )
    return delivery_lines(
        incident_deliveries(db_session=db_session, incident_id=incident.id),
        channel_labels(db_session=db_session),
        channel_holds(db_session=db_session, now=now or utcnow()),
        upcoming=[route.name for route in upcoming],
    )
