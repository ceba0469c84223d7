"""How a bank without its own reasoning (the embedded driver) answers reflect and refreshes models.

The bank recalls the incidents in scope and hands them to a ``Synthesizer``: the offline profile
synthesizer by default, an LLM-backed one when the service has a model configured. The bank never
decides what the answer says, only what evidence it is given.
"""

from typing import Any, Protocol

from memory.bank import RecalledIncident, ReflectAnswer


class Synthesizer(Protocol):
    async def synthesize(
        self,
        *,
        query: str,
        incidents: list[RecalledIncident],
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        """Answer ``query`` (a question, or a mental model's source query) from ``incidents`` only."""
        ...


class EvidenceDigest:
    """The synthesizer used when nothing better is configured: it restates the evidence, citing it.

    It makes no claim beyond the records: for each incident in scope (most relevant first) its
    service, root cause, resolution and failed attempts, numbered so the answer can be checked.
    """

    async def synthesize(
        self,
        *,
        query: str,
        incidents: list[RecalledIncident],
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        if not incidents:
            return ReflectAnswer(text="No incident in memory matches this question.", based_on=[])
        lines = [f"{len(incidents)} incident(s) in memory bear on: {query}"]
        for n, incident in enumerate(incidents, start=1):
            record = incident.record
            if record is None:
                lines.append(f"[{n}] {incident.id}: {incident.text.splitlines()[0][:200]}")
                continue
            lines.append(f"[{n}] {record.incident_id} ({record.service}): root cause: {record.root_cause}")
            lines.append(f"    resolution: {record.resolution_steps}")
            if record.failed_attempts:
                lines.append(f"    did not help or made it worse: {record.failed_attempts}")
        return ReflectAnswer(text="\n".join(lines), based_on=[i.id for i in incidents])
