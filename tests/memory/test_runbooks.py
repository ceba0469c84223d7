"""Runbooks are read by their own labels."""

from memory.runbooks import sections, title

RUNBOOK = """RUNBOOK RB-db-pool — checkout-service
Title: Database connection pool exhaustion
When: HikariPool errors while CPU is low.
First checks:
1. Pool dashboard: active == max and pending climbing.
2. Postgres: compare pg_stat_activity with max_connections
   and the per-service budget.
Mitigations that worked:
- Raise the pool only after computing pods x pool size.
Risky actions:
- Scaling pods out without checking database limits (INC-0001)."""


def test_sections_follow_the_runbook_labels() -> None:
    found = sections(RUNBOOK)
    assert found["first checks"] == [
        "Pool dashboard: active == max and pending climbing.",
        "Postgres: compare pg_stat_activity with max_connections and the per-service budget.",
    ]
    assert found["mitigations that worked"] == ["Raise the pool only after computing pods x pool size."]
    assert found["when"] == ["HikariPool errors while CPU is low."]
    assert title(RUNBOOK) == "Database connection pool exhaustion"
