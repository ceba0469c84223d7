"""The real embedder: sentence-transformers-compatible vectors, and recall of a paraphrase."""

from pathlib import Path

import numpy as np

from memory.embedded.bank import EmbeddedBank
from memory.embedder import DIMENSION, MAX_TOKENS, MiniLMEmbedder
from memory.service import log_incident
from memory.settings import MemorySettings
from tests.memory.fakes import RecordingSynthesizer
from tests.memory.test_contract import ALL, JWT, OOM, POOL


def test_vectors_are_normalised_and_batched(minilm: MiniLMEmbedder) -> None:
    texts = [f"text number {n}" for n in range(40)]
    vectors = minilm.embed(texts)
    assert vectors.shape == (40, DIMENSION) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(
        minilm.embed(texts[33:34])[0], vectors[33]
    )  # what it is embedded with changes nothing
    assert minilm.embed([]).shape == (0, DIMENSION)


def test_a_long_text_and_short_lines_embedded_together_keep_their_vectors(minilm: MiniLMEmbedder) -> None:
    """A record is embedded in one call with its lines; none of them is read differently for it."""
    record = "Checkout requests queued for a database connection until they timed out. " * 20
    lines = [f"Raised the pool to {n} connections per pod" for n in range(20, 40)]
    together = minilm.embed([record, *lines])
    apart = np.vstack([minilm.embed([record]), minilm.embed(lines)])
    assert np.array_equal(together, apart)


def test_long_text_is_embedded_whole_not_truncated(minilm: MiniLMEmbedder) -> None:
    """What comes after the model's window still moves the vector: a long post-mortem keeps its root cause."""
    filler = "The on-call engineer was paged and joined the incident bridge. " * 60
    pool, tls = minilm.embed(
        [
            filler + "Root cause: the database connection pool was exhausted by a traffic burst.",
            filler + "Root cause: the TLS certificate on the load balancer expired overnight.",
        ]
    )
    (query,) = minilm.embed(["Postgres connection pool exhausted, requests waiting for a connection"])
    assert np.isclose(np.linalg.norm(pool), 1.0, atol=1e-5)
    assert query @ pool > query @ tls


def test_a_long_text_is_the_mean_of_its_windows(minilm: MiniLMEmbedder) -> None:
    vocabulary = ["database", "connection", "pool", "timeout", "certificate", "memory", "disk", "network"]
    text = " ".join(vocabulary[(n * n + n // 3) % len(vocabulary)] for n in range(700))  # one token a word
    (whole,) = minilm.embed([text])
    ids = minilm._tokenizer.encode(text).ids[1:-1]  # type: ignore[union-attr]
    width = MAX_TOKENS - 2
    windows = [minilm._tokenizer.decode(ids[i : i + width]) for i in range(0, len(ids), width)]  # type: ignore[union-attr]
    assert len(windows) > 2
    parts = minilm.embed(windows)
    expected = parts.sum(axis=0) / np.linalg.norm(parts.sum(axis=0))
    assert whole @ expected > 0.99


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
