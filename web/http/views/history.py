"""What the pages say about an incident that came in as history (seeded or imported), not from an alert.

History did not happen here: its post-mortem dates it, RecallOps learned of it when it was loaded, and
no briefing was made of it unless someone asked for one, so nothing was suggested for it and nothing
waits to be graded. The pages say so instead of what they say of an alert's incident.
"""

from incidents.incident.models import Incident

HISTORY = {"seed": "seeded history", "import": "imported history"}


def history_of(incident: Incident) -> str | None:
    """ "seeded history" or "imported history"; None for an incident opened from an alert here."""
    return HISTORY.get(incident.origin)


def record_origin(incident: Incident, resolved: bool) -> str:
    """Where a record's post-mortem came from: history loaded here, this service's resolve form or API
    (``resolved``), or nowhere yet (an incident still open has no record)."""
    return history_of(incident) or ("resolved here" if resolved else "not resolved yet")


def no_briefing(incident: Incident, job_state: str | None) -> str:
    """What the places a briefing fills say while there is none: why there is none."""
    if job_state in ("pending", "running"):
        return "The briefing is being made."
    if job_state == "failed":
        return "The briefing failed."
    history = history_of(incident)
    return f"Not briefed: loaded as {history}." if history else "No briefing yet."
