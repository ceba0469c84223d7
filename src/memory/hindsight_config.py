"""The Hindsight bank's configuration: mission and dispositions as bank config, directives as directives.

Applying a ``BankConfig`` makes the server's directives exactly ``config.directives``, in order (the
first has the highest priority), deleting the rest; reading gives back what applying wrote.
"""

from typing import Any

from hindsight_client import Hindsight

from memory.bank import BankConfig
from memory.hindsight_results import directive_name

DISPOSITIONS = ("skepticism", "literalism", "empathy")


async def apply_config(client: Hindsight, bank_id: str, config: BankConfig) -> None:
    unknown = set(config.dispositions) - set(DISPOSITIONS)
    if unknown:
        raise ValueError(f"unknown dispositions: {', '.join(sorted(unknown))}")
    dispositions: dict[str, Any] = {f"disposition_{k}": v for k, v in config.dispositions.items()}
    await client.aupdate_bank_config(bank_id, reflect_mission=config.mission, **dispositions)
    existing = (await client.alist_directives(bank_id)).items
    wanted = {content: len(config.directives) - i for i, content in enumerate(config.directives)}
    for directive in existing:
        if wanted.get(directive.content) != directive.priority or not directive.is_active:
            await client.adelete_directive(bank_id, directive.id)
        else:
            wanted.pop(directive.content)
    for content, priority in wanted.items():
        await client.acreate_directive(
            bank_id, name=directive_name(content), content=content, priority=priority
        )


async def read_config(client: Hindsight, bank_id: str) -> BankConfig:
    resolved = (await client.aget_bank_config(bank_id)).get("config", {})
    directives = (await client.alist_directives(bank_id)).items
    active = sorted((d for d in directives if d.is_active), key=lambda d: -(d.priority or 0))
    return BankConfig(
        mission=resolved.get("reflect_mission") or "",
        directives=[d.content for d in active],
        dispositions={
            k: int(resolved[f"disposition_{k}"])
            for k in DISPOSITIONS
            if resolved.get(f"disposition_{k}") is not None
        },
    )
