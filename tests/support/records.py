"""A past incident the briefing tests recall: a Postgres pool exhausted on checkout-service."""

from datetime import UTC, datetime

from memory.schema import IncidentRecord

POOL = "FATAL: remaining connection slots are reserved for non-replication superuser connections"
POOL_INCIDENT = IncidentRecord(
    incident_id="PM-0042",
    service="checkout-service",
    timestamp=datetime(2026, 3, 14, 9, 12, tzinfo=UTC),
    symptom="checkout 500s during the flash sale",
    error_signature=POOL,
    root_cause="Postgres connection pool sized for average load, exhausted by the burst",
    resolution_steps="1. Check pool saturation\n2. Raise the pool to 50\n3. Add a circuit breaker",
    runbook_used="runbooks/checkout-db-pool.md",
    outcome="Recovered in 25 minutes",
    failed_attempts="Adding app replicas without checking max_connections made it worse",
    resolved_by="dana",
)
