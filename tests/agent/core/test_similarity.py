"""Similarity reads stored vectors before it embeds: only texts memory does not know are embedded."""

from collections.abc import Mapping, Sequence

import numpy as np

from agent.core.similarity import Similarity
from tests.memory.fakes import CountingEmbedder, HashingEmbedder


def test_known_texts_are_looked_up_and_only_the_rest_embedded() -> None:
    stored = HashingEmbedder()
    known_texts = {"Raised the pool to 40", "Restarted the pods"}
    asked: list[list[str]] = []

    def known(texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        asked.append(list(texts))
        return {t: stored.embed([t])[0] for t in texts if t in known_texts}

    embedder = CountingEmbedder()
    similarity = Similarity(embedder, known)
    similarity.prepare(["Raised the pool to 40", "Restarted the pods", "Scaled out the workers"])
    assert embedder.embedded == ["Scaled out the workers"]
    cosine = similarity.cosine("Raised the pool to 40", "Restarted the pods")
    assert cosine is not None and abs(cosine - float(np.dot(*stored.embed(sorted(known_texts))))) < 1e-6
    assert len(asked) == 1  # vectors already at hand are not asked for again


def test_without_a_lookup_everything_is_embedded() -> None:
    embedder = CountingEmbedder()
    Similarity(embedder).prepare(["a b", "c d", "a b"])
    assert embedder.embedded == ["a b", "c d"]
