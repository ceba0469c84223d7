"""Test doubles for the memory bank's injected parts: hashing embedders and a recording synthesizer."""

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from memory.bank import RecalledIncident, ReflectAnswer
from memory.embedder import normalize


class HashingEmbedder:
    """Bag of hashed words: fast and deterministic, shares words => similar. No semantics at all."""

    model_id = "hashing-test"

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dimension] += 1.0
            out[row, 0] += 1e-3  # never the zero vector
        return normalize(out)


class CountingEmbedder(HashingEmbedder):
    """A hashing embedder that remembers every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += texts
        return super().embed(texts)


class RecordingSynthesizer:
    """Answers with the ids it was given, and remembers every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    async def synthesize(
        self, *, query: str, incidents: list[RecalledIncident], response_schema: dict[str, Any] | None = None
    ) -> ReflectAnswer:
        ids = [i.id for i in incidents]
        self.calls.append((query, ids))
        structured = {"incident_ids": ids} if response_schema is not None else None
        return ReflectAnswer(
            text=f"{len(ids)} incidents: {', '.join(ids)}", structured=structured, based_on=ids
        )


class ListRecall:
    """A bank that answers every search with the first ``limit`` of a fixed list, and remembers each
    ``limit`` it was asked for."""

    driver = "embedded"
    ranking_model = "embedded:test"

    def __init__(self, found: list[RecalledIncident]) -> None:
        self.found = found
        self.limits: list[int] = []

    async def recall(self, *, limit: int = 5, **_: Any) -> list[RecalledIncident]:
        self.limits.append(limit)
        return self.found[:limit]

    async def reflect(self, **_: Any) -> ReflectAnswer:
        return ReflectAnswer("answer")


RANKED_IDS = [f"R{n}" for n in range(8)]
# A channel's order: some of ``RANKED_IDS``, best first.
CHANNEL_ORDERS = st.permutations(RANKED_IDS).flatmap(
    lambda p: st.integers(1, len(p)).map(lambda n: list(p[:n]))
)


def ranked(orders: dict[str, list[str]]) -> list[RecalledIncident]:
    """Records as a search finds them: each id of ``orders`` (channel -> ids best first), sorted, with its
    1-based rank in every channel that found it."""
    found = {ident for order in orders.values() for ident in order}
    return [
        RecalledIncident(
            i,
            i,
            None,
            0.5,
            {ch: order.index(i) + 1 for ch, order in orders.items() if i in order},
            [],
            {},
            None,
        )
        for i in sorted(found)
    ]
