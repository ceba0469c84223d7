"""Generated incidents for benchmarks: services x failure modes, each record worded with its own hosts,
numbers and details, deterministic for a seed, so runs on different machines measure the same bank."""

import random
from datetime import UTC, datetime, timedelta

from agent.core.evidence import AlertInput
from memory.schema import IncidentRecord

SERVICES = (
    "checkout-service",
    "payment-gateway",
    "auth-service",
    "inventory-service",
    "search-api",
    "cart-service",
    "order-service",
    "shipping-service",
    "notification-service",
    "pricing-service",
    "catalog-service",
    "recommendation-api",
    "user-profile",
    "fraud-detection",
    "ledger-service",
    "media-cdn",
    "gateway-edge",
    "reporting-etl",
    "loyalty-service",
    "tax-service",
)
# (symptom, error signature, root cause, resolution steps, runbook, failed attempts); {n} {host} {dep} vary.
MODES = (
    (
        "p99 latency over {n} s and 5xx on writes",
        "FATAL: remaining connection slots are reserved ({dep})",
        "connection pool sized for average load, exhausted by a traffic burst",
        "Checked pg_stat_activity on {host}; raised the pool to {n}0; added a circuit breaker",
        "runbooks/db-pool.md",
        "Adding replicas without checking max_connections made it worse",
    ),
    (
        "upstream confirmations timing out",
        "HTTP 429 Too Many Requests from {dep}",
        "retries without backoff tripped the provider's rate limit",
        "Added exponential backoff with jitter; moved failures to a dead-letter queue",
        "runbooks/rate-limits.md",
        "Raising the retry count amplified the 429 storm",
    ),
    (
        "wave of 401s after a deploy",
        "JWT signature verification failed (kid={n})",
        "signing key rotation reached only some pods",
        "Rolled the new key to every pod on {host}; verified JWKS",
        "runbooks/jwt-rotation.md",
        "Restarting the gateway alone did not help",
    ),
    (
        "pods OOMKilled during the nightly job",
        "OOMKilled exit code 137 on {host}",
        "the batch loads the whole dataset in memory",
        "Streamed the job in batches of {n}00; raised the limit",
        "runbooks/oom.md",
        "Doubling replicas only multiplied the kills",
    ),
    (
        "disk full on the primary",
        "No space left on device: /var/lib/{dep}",
        "log rotation disabled after an image change",
        "Re-enabled logrotate; pruned {n} GB of old WAL",
        "runbooks/disk-full.md",
        "Deleting files by hand removed the live WAL segment",
    ),
    (
        "TLS handshakes failing for clients",
        "x509: certificate has expired ({dep})",
        "certificate renewal job silently failed",
        "Renewed the certificate; alert on expiry {n} days ahead",
        "runbooks/certificates.md",
        "Pinning the old certificate broke mobile clients",
    ),
    (
        "queue depth growing without bound",
        "consumer lag {n}0000 messages on {dep}",
        "a poison message crashed the consumer in a loop",
        "Moved the poison message to a DLQ; added a retry cap",
        "runbooks/queue-lag.md",
        "Scaling consumers made the crash loop faster",
    ),
    (
        "DNS lookups timing out",
        "dial tcp: lookup {dep}: i/o timeout",
        "CoreDNS pods throttled on CPU",
        "Raised the CoreDNS CPU limit; added node-local DNS cache on {host}",
        "runbooks/dns.md",
        "Restarting every pod at once caused a thundering herd",
    ),
    (
        "cache hit ratio collapsed, database overloaded",
        "redis: connection refused {host}:6379",
        "cache node evicted after a failover",
        "Promoted the replica; warmed the cache for the top {n}00 keys",
        "runbooks/cache.md",
        "Flushing the cache doubled the database load",
    ),
    (
        "config push broke request routing",
        "upstream connect error or disconnect/reset before headers ({dep})",
        "a bad routing rule was pushed to every edge at once",
        "Rolled back the config; added a canary stage",
        "runbooks/config-rollback.md",
        "Hot-patching the rule by hand pushed a second bad version",
    ),
    (
        "clock skew broke token validation",
        "token used before issued (skew {n} s)",
        "NTP daemon stopped on {host}",
        "Restarted chronyd; alert on skew over 1 s",
        "runbooks/ntp.md",
        "Widening the allowed skew hid a replay attack window",
    ),
    (
        "deadlocks on order writes",
        "ERROR: deadlock detected (SQLSTATE 40P01) on {dep}",
        "two code paths lock rows in opposite order",
        "Made both paths lock in id order; retried on 40P01",
        "runbooks/deadlocks.md",
        "Raising lock_timeout made requests hang longer",
    ),
)
DEPS = ("orders-db", "payments-db", "stripe", "adyen", "kafka", "rabbitmq", "redis", "users-db", "s3")


def _fill(template: str, rng: random.Random) -> str:
    host = f"{rng.choice(('db', 'app', 'node', 'edge'))}-{rng.randint(1, 999):03d}"
    return template.format(n=rng.randint(2, 9), host=host, dep=rng.choice(DEPS))


def synthetic_record(index: int, rng: random.Random) -> IncidentRecord:
    symptom, signature, cause, steps, runbook, failed = rng.choice(MODES)
    service = rng.choice(SERVICES)
    return IncidentRecord(
        incident_id=f"SYN-{index:06d}",
        service=service,
        timestamp=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 1_000_000)),
        symptom=f"{service}: {_fill(symptom, rng)}",
        error_signature=_fill(signature, rng),
        root_cause=_fill(cause, rng),
        resolution_steps=_fill(steps, rng),
        runbook_used=runbook,
        outcome=f"Recovered after {rng.randint(5, 90)} minutes",
        failed_attempts=_fill(failed, rng) if rng.random() < 0.7 else "",
        resolved_by=rng.choice(("dana", "lee", "sam", "kim", "ari")),
    )


def synthetic_alert(rng: random.Random) -> AlertInput:
    symptom, signature, *_ = rng.choice(MODES)
    service = rng.choice(SERVICES)
    return AlertInput(
        text=f"{_fill(signature, rng)}; {_fill(symptom, rng)}", service=service, title=f"{service} alert"
    )
