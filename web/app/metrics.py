"""Prometheus metrics, defined once here and updated where the work happens."""

import logging

from prometheus_client import Counter, Gauge, Histogram
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from incidents.incident.service import count_open

ALERTS_RECEIVED = Counter(
    "recallops_alerts_total", "Alerts received, by source and outcome", ["source", "outcome"]
)
INTAKE_LATENCY = Histogram(
    "recallops_intake_seconds",
    "Time from request to acknowledgement of an alert payload",
    ["source"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
OPEN_INCIDENTS = Gauge("recallops_open_incidents", "Incidents not yet resolved")
OUTBOX_DEPTH = Gauge("recallops_memory_outbox_depth", "Memory writes not yet synced, by state", ["state"])
OUTBOX_OLDEST_PENDING = Gauge(
    "recallops_memory_outbox_oldest_pending_seconds", "Age of the oldest memory write not yet synced"
)
OUTBOX_DELIVERIES = Counter(
    "recallops_memory_outbox_deliveries_total",
    "Memory write attempts by the outbox worker, by outcome",
    ["outcome"],
)
DELIVERIES = Counter(
    "recallops_deliveries_total",
    "Chat and webhook delivery attempts, by channel and outcome (sent, failing, failed)",
    ["channel", "outcome"],
)
DELIVERY_OUTBOX_DEPTH = Gauge(
    "recallops_delivery_outbox_depth", "Channel messages not yet sent, by state", ["state"]
)
LANE_DEPTH = Gauge("recallops_lane_depth", "Items owed to each worker lane, across every replica", ["lane"])
LANE_OLDEST = Gauge(
    "recallops_lane_oldest_seconds", "Age of the oldest item owed to each worker lane", ["lane"]
)
LANE_IN_FLIGHT = Gauge(
    "recallops_lane_in_flight", "Items each worker lane of this process runs now", ["lane"]
)
ABANDONED_CALLS = Gauge(
    "recallops_stuck_calls", "Blocking calls past their deadline whose threads have not returned yet"
)
ABANDONED_CALLS_TOTAL = Counter(
    "recallops_abandoned_calls_total", "Blocking calls given up on at their deadline"
)
BRIEFINGS = Counter("recallops_briefings_total", "Briefings produced, by mode", ["mode"])
RESOLUTION_DRAFTS = Counter(
    "recallops_resolution_drafts_total",
    "Resolution conversations run, by mode and whether the post-mortem was logged",
    ["mode", "logged"],
)
BRIEFING_JOBS = Gauge("recallops_briefing_jobs", "Briefing jobs by state (done jobs not counted)", ["state"])
BRIEFING_GRADES = Gauge(
    "recallops_briefing_grades_90d",
    "Briefing versions graded against their post-mortem in the last 90 days, by figure",
    ["figure"],
)
BRIEFING_LATENCY = Histogram(
    "recallops_briefing_seconds",
    "Time the agent took to brief an incident (model calls and recall), by mode",
    ["mode"],
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
HISTORY_RECORDS = Counter(
    "recallops_history_records_total",
    "Historical incidents seeded or imported, by origin and outcome (imported, updated, unchanged, rejected)",
    ["origin", "outcome"],
)
MEMORY_SEARCH_LATENCY = Histogram(
    "recallops_memory_search_seconds",
    "Time to answer a memory search (the agent's recall tool, query embedding included)",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)


def track_open_incidents(sessions: sessionmaker[Session]) -> None:
    """Count open incidents at scrape time: exact across processes, nothing to keep in step."""

    def count() -> float:
        try:
            with sessions() as db_session:
                return float(count_open(db_session=db_session))
        except SQLAlchemyError:
            logging.getLogger(__name__).warning("open incident count failed", exc_info=True)
            return float("nan")

    OPEN_INCIDENTS.set_function(count)
