"""A corpus bank as a query would find it in production: without the query's own record.

The corpus benchmarks put every record in one bank and ask it with each record's symptoms, so the
query's own record is nearly always ranked first by keywords (on the dev split, 45 of the 50 unscoped
queries that find it) and often by meaning. Dropping it from the results is not enough: every record
ranked after it keeps a channel rank one worse than a briefing would give it, where the alert's own
incident is not in memory yet. The confidence fit learns from those ranks (``bench calibration``) and the
re-ranking reads them (``bench retrieval``), so they are renumbered as if the record were not there.
The fused order is the bank's, computed with the record present: by reciprocal ranks 60 deep, one place
moves a record's fused score by under 2 %, and the channel ranks are what the fit reads.
"""

from typing import Any

from memory.bank import Budget, Recall, RecalledIncident, ReflectAnswer, TagsMatch
from memory.ranks import counted_without


def renumbered(found: list[RecalledIncident], own_id: str) -> list[RecalledIncident]:
    """``found`` without ``own_id``, each channel rank after the one it had moved up one place."""
    return [incident for incident in counted_without(found, {own_id}) if incident.id != own_id]


class WithoutOwn:
    """``bank`` answering as if the record stored as ``own_id`` were not in it (``Recall``)."""

    def __init__(self, bank: Recall, own_id: str) -> None:
        self.bank = bank
        self.own_id = own_id
        self.driver = bank.driver

    @property
    def ranking_model(self) -> str:
        return self.bank.ranking_model

    async def recall(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        budget: Budget = "mid",
        limit: int = 5,
    ) -> list[RecalledIncident]:
        found = await self.bank.recall(
            query=query, tags=tags, tags_match=tags_match, budget=budget, limit=limit + 1
        )
        return renumbered(found, self.own_id)[:limit]

    async def reflect(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        return await self.bank.reflect(
            query=query, tags=tags, tags_match=tags_match, response_schema=response_schema
        )
