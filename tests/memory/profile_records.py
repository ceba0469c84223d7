"""Incident records as recall returns them, for the profile tests."""

from datetime import UTC, datetime, timedelta

from memory.bank import RecalledIncident
from memory.corrections import CorrectionRecord, correction_metadata, correction_tags, format_correction
from memory.schema import IncidentRecord, format_record, record_tags

START = datetime(2026, 1, 1, tzinfo=UTC)


def recalled(
    number: int,
    service: str,
    signature: str,
    cause: str,
    *,
    severity: str = "critical",
    symptom: str = "",
    steps: str = "Checked the dashboards. Applied the fix.",
    failed: str = "",
    runbook: str = "",
) -> RecalledIncident:
    record = IncidentRecord(
        incident_id=f"INC-{number:04d}",
        service=service,
        timestamp=START + timedelta(days=number),
        symptom=symptom or f"alerts fired on {service}",
        error_signature=signature,
        root_cause=cause,
        resolution_steps=steps,
        runbook_used=runbook,
        outcome="restored",
        failed_attempts=failed,
        resolved_by="dana",
    )
    return RecalledIncident(
        id=record.incident_id,
        text=format_record(record),
        record=record,
        score=1.0,
        why={},
        tags=record_tags(record, severity=severity),
        metadata={},
        timestamp=record.timestamp,
    )


def correction(of: RecalledIncident, text: str, number: int = 1) -> RecalledIncident:
    assert of.record is not None
    record = CorrectionRecord(
        document_id=f"{of.id}-correction-{number}",
        corrects=of.id,
        service=of.record.service,
        timestamp=of.record.timestamp + timedelta(days=1),
        text=text,
        author="lee",
    )
    return RecalledIncident(
        id=record.document_id,
        text=format_correction(record),
        record=None,
        score=1.0,
        why={},
        tags=correction_tags(record),
        metadata=correction_metadata(record),
        timestamp=record.timestamp,
    )


POOL_A = recalled(
    1,
    "checkout-service",
    "FATAL: remaining connection slots are reserved; HikariPool-1 - Connection is not available",
    "Postgres connection pool sized for average load exhausted during the flash sale burst",
    failed="Added checkout pods: more pods opened more connections and made it worse",
    steps="Checked pg_stat_activity for connection counts. Raised the pool to 60; added a breaker.",
    runbook="runbooks/db-pool.md",
)
RETRY_A = recalled(
    2,
    "payment-gateway",
    "HTTP 429 Too Many Requests from processor; confirmation timeouts",
    "Retry storm without backoff after timeouts got us rate limited by the payment processor",
    severity="high",
)
POOL_B = recalled(
    3,
    "orders-service",
    "HikariPool-2 - Connection is not available, request timed out after 30000ms",
    "Database connection pool exhausted by a traffic spike; pool too small for peak load",
    runbook="runbooks/db-pool.md",
)
JWT = recalled(
    4,
    "auth-service",
    "401 Unauthorized: JWT signature verification failed",
    "Signing key rotation reached only 2 of 6 pods",
    severity="warning",
)
OOM_A = recalled(
    5,
    "inventory-service",
    "OOMKilled exit code 137 during nightly sync",
    "Nightly sync loads the entire catalog into memory",
    severity="high",
)
RETRY_B = recalled(
    6,
    "notification-service",
    "429 rate limit exceeded from SMS provider after retries",
    "Retries without jitter or backoff hammered the provider until it rate limited us",
    severity="high",
)
OOM_B = recalled(
    7,
    "search-service",
    "Container killed: OOMKilled, exit 137",
    "Memory leak in the index rebuild job loading all documents at once",
    severity="high",
)
HISTORY = [POOL_A, RETRY_A, POOL_B, JWT, OOM_A, RETRY_B, OOM_B]
