"""Incidents and post-mortems for resolution tests."""

from datetime import UTC, datetime

from sqlalchemy.orm import Session

from incidents.incident.models import Incident
from incidents.resolution.models import ResolutionCreate

OPENED = datetime(2026, 3, 14, 9, 12, tzinfo=UTC)


def make_incident(
    db: Session,
    public_id: str = "INC-0001",
    *,
    service: str = "checkout-service",
    status: str = "acknowledged",
) -> Incident:
    incident = incident_row(public_id, service=service, status=status)
    db.add(incident)
    db.flush()
    return incident


def incident_row(
    public_id: str = "INC-0001", *, service: str = "checkout-service", status: str = "acknowledged"
) -> Incident:
    """An incident not yet in any session."""
    return Incident(
        public_id=public_id,
        title="Checkout p99 over 4 s",
        service=service,
        alertname="CheckoutLatencyHigh",
        severity="critical",
        status=status,
        first_seen=OPENED,
        last_seen=OPENED,
    )


def post_mortem(**changes: str) -> ResolutionCreate:
    fields = {
        "symptom": "p99 latency over 4 s on /checkout; 5xx at 12%",
        "error_signature": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
        "root_cause": "Postgres connection pool sized for average load, exhausted by the flash-sale burst",
        "resolution_steps": "Checked pg_stat_activity; raised the pool from 20 to 60; added a breaker",
        "runbook_used": "runbooks/checkout-db-pool.md",
        "outcome": "Latency normal after 6 minutes",
        "failed_attempts": "Adding pods made it worse: more pods, more connections",
    }
    fields.update(changes)
    return ResolutionCreate(**fields)
