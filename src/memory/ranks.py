"""Channel ranks counted without some of the records a search found.

A recalled record's ``why`` gives its rank in each channel (keyword, semantic) among everything the
search looked at. Some records should not count against the others: the query's own record, which a
briefing never finds (``evals.bench.without_own``), and a lookalike the alert contradicts, which must not
push the real precedent down (``agent.core.tools.recall_past_lookalikes``). Each rank after such a record
moves up one place.
"""

from collections.abc import Collection, Sequence
from dataclasses import replace

from memory.bank import RecalledIncident


def counted_without(found: Sequence[RecalledIncident], skipped: Collection[str]) -> list[RecalledIncident]:
    """``found`` in its order, each channel rank of a record not in ``skipped`` counted as if the records
    of ``skipped`` were not there; those keep their own ranks."""
    ahead = [incident.why for incident in found if incident.id in skipped]
    if not ahead:
        return list(found)
    return [
        incident
        if incident.id in skipped
        else replace(
            incident,
            why={
                channel: rank - sum(1 for why in ahead if channel in why and why[channel] < rank)
                for channel, rank in incident.why.items()
            },
        )
        for incident in found
    ]
