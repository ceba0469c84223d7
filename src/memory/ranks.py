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


def best_of(first: Sequence[RecalledIncident], second: Sequence[RecalledIncident]) -> list[RecalledIncident]:
    """Two searches' records as one ranking: each record once, each channel ordered by the better of a
    record's two ranks there (``first``'s rank, then its order, breaking a tie) and numbered 1, 2, 3...
    again, so the ranks stay a ranking: two records first in one channel would read as two best matches,
    where a record the second search put first beside the first search's first is the second best.
    Listed in the order of each record's best rank in any channel (``first``'s order on a tie)."""
    merged: dict[str, dict[str, tuple[int, int]]] = {}
    records: dict[str, RecalledIncident] = {}
    for incident in [*first, *second]:
        records.setdefault(incident.id, incident)
        ranks = merged.setdefault(incident.id, {})
        for channel, rank in incident.why.items():
            was = ranks.get(channel)
            ranks[channel] = (min(rank, was[0]), was[1]) if was else (rank, rank)
    renumbered: dict[str, dict[str, int]] = {ident: {} for ident in merged}
    for channel in {c for ranks in merged.values() for c in ranks}:
        order = sorted((ranks[channel], ident) for ident, ranks in merged.items() if channel in ranks)
        for place, (_, ident) in enumerate(order, start=1):
            renumbered[ident][channel] = place
    found = [replace(records[ident], why=renumbered[ident]) for ident in records]
    return sorted(found, key=lambda i: min(i.why.values(), default=0))
