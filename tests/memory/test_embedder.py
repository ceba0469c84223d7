"""The real embedder: sentence-transformers-compatible vectors, and recall of a paraphrase."""

from pathlib import Path

import numpy as np

from memory.embedded.bank import EmbeddedBank
from memory.embedder import DIMENSION, MiniLMEmbedder
from memory.settings import MemorySettings
from memory.tools import log_incident
from tests.memory.fakes import RecordingSynthesizer
from tests.memory.test_contract import ALL, JWT, OOM, POOL


def test_vectors_are_normalised_and_batched(minilm: MiniLMEmbedder) -> None:
    texts = [f"text number {n}" for n in range(40)]
    vectors = minilm.embed(texts)
    assert vectors.shape == (40, DIMENSION) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(minilm.embed(texts[33:34])[0], vectors[33], atol=1e-5)  # batching changes nothing


def test_long_text_is_truncated_not_rejected(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed(["word " * 5000]).shape == (1, DIMENSION)


def test_similar_meaning_scores_higher(minilm: MiniLMEmbedder) -> None:
    a, b, c = minilm.embed(
        [
            "The database connection pool was exhausted during peak traffic.",
            "We ran out of Postgres connections when load spiked.",
            "The TLS certificate on the CDN expired.",
        ]
    )
    assert a @ b > a @ c + 0.2


async def test_paraphrases_recall_the_incident(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    bank = EmbeddedBank(
        MemorySettings(data_dir=tmp_path), embedder=minilm, synthesizer=RecordingSynthesizer()
    )
    try:
        for record in ALL:
            await log_incident(bank, record)
        cases = {
            "shoppers cannot pay because the SQL backend has no free sessions left at peak": POOL.incident_id,
            "users suddenly logged out, tokens refused after credentials were swapped": JWT.incident_id,
            "warehouse stock job killed by the kernel for using too much RAM overnight": OOM.incident_id,
        }
        for query, expected in cases.items():
            found = await bank.recall(query=query, limit=2)
            assert expected in [r.id for r in found], query
            semantic = next(r for r in found if r.id == expected)
            assert "semantic" in semantic.why
    finally:
        await bank.close()
