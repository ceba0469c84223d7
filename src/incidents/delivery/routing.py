"""Which channels hear about which events: the routing rules, kept in the database beside the events.

The service writes its configured channels' rules here at start (``sync_channels``); a command run
from another shell does not, so a configuration it lacks never turns the service's channels off. Any
transaction recording an event (an acknowledgement in the API, a resolution from the page, a
briefing stored by the worker, a PagerDuty acknowledgement at intake) routes it the same way without
being handed the configuration. A rule matches when the event is one the channel wants, the service
is one of its services (or it names none) and the incident is at least as severe as its minimum.
"""

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.delivery.models import DeliveryChannel
from incidents.severity import outranks
from incidents.timeutil import utcnow

BRIEFING_STORED = "briefing_stored"
BRIEFING_UPDATED = "briefing_updated"
INCIDENT_ACKNOWLEDGED = "incident_acknowledged"
INCIDENT_RESOLVED = "incident_resolved"
TEST = "test"  # `recallops notify test`: never routed, always addressed to one channel
EVENTS = (BRIEFING_STORED, BRIEFING_UPDATED, INCIDENT_ACKNOWLEDGED, INCIDENT_RESOLVED)
KINDS = ("slack", "apprise", "webhook")


@dataclass(frozen=True)
class ChannelRoute:
    """A channel's routing as configured: everything about it except how to reach it."""

    name: str
    kind: str
    label: str
    services: tuple[str, ...] = ()
    min_severity: str | None = None
    events: tuple[str, ...] = field(default=EVENTS)

    def matches(self, *, event: str, service: str, severity: str) -> bool:
        if event not in (self.events or EVENTS):
            return False
        if self.services and service not in self.services:
            return False
        if self.min_severity is None:
            return True
        return not outranks(self.min_severity, severity)


def sync_channels(*, db_session: Session, routes: list[ChannelRoute]) -> None:
    """Make the table say what the configuration says; channels it no longer names are disabled."""
    now = utcnow()
    existing = {row.name: row for row in db_session.scalars(select(DeliveryChannel))}
    wanted = {route.name for route in routes}
    for route in routes:
        row = existing.get(route.name)
        if row is None:
            row = DeliveryChannel(name=route.name)
            db_session.add(row)
        values = {
            "kind": route.kind,
            "label": route.label,
            "services": list(route.services),
            "min_severity": route.min_severity,
            "events": list(route.events),
            "enabled": True,
        }
        if any(getattr(row, key, None) != value for key, value in values.items()):
            for key, value in values.items():
                setattr(row, key, value)
            row.updated_at = now
    for name, row in existing.items():
        if name not in wanted and row.enabled:
            row.enabled = False
            row.updated_at = now
    db_session.flush()


def enabled_routes(*, db_session: Session) -> list[ChannelRoute]:
    rows = db_session.scalars(
        select(DeliveryChannel).where(DeliveryChannel.enabled.is_(True)).order_by(DeliveryChannel.name)
    )
    return [
        ChannelRoute(
            name=row.name,
            kind=row.kind,
            label=row.label,
            services=tuple(row.services or ()),
            min_severity=row.min_severity,
            events=tuple(row.events or EVENTS),
        )
        for row in rows
    ]


def routes_for(*, db_session: Session, event: str, service: str, severity: str) -> list[ChannelRoute]:
    """The enabled channels whose rules take this event about an incident of this service and severity."""
    return [
        route
        for route in enabled_routes(db_session=db_session)
        if route.matches(event=event, service=service, severity=severity)
    ]


def channel_labels(*, db_session: Session) -> dict[str, str]:
    """Every channel ever configured, by name: what a page shows instead of the channel's address."""
    return {row.name: row.label for row in db_session.scalars(select(DeliveryChannel))}
