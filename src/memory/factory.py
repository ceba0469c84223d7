"""Open the configured memory bank: the embedded driver by default, a Hindsight server when asked."""

import functools

from memory.bank import MemoryBank
from memory.embedder import Embedder, MiniLMEmbedder
from memory.patterns import OfflineSynthesizer, ProfileAwareSynthesizer
from memory.settings import MemorySettings
from memory.synthesis import EvidenceDigest, Synthesizer


def open_bank(
    settings: MemorySettings,
    *,
    profile_synthesizer: Synthesizer | None = None,
    embedder: Embedder | None = None,
    read_only: bool = False,
) -> MemoryBank:
    """Build the bank without touching the store: the first call connects (and may then fail).

    ``profile_synthesizer`` writes the reliability profile on the embedded driver (the service passes
    an LLM-backed one when a model is configured); without it the offline pattern synthesizer does.
    ``embedder`` replaces the process's embedder (``open_embedder``), which is the default.
    ``read_only`` opens a Hindsight bank only to read it: one the server lacks is not created (an
    embedded bank's file is the caller's to find first).
    """
    if settings.memory == "hindsight":
        from memory.hindsight import HindsightBank

        return HindsightBank(settings, read_only=read_only)
    from memory.embedded.bank import EmbeddedBank

    embedder = embedder or open_embedder()
    return EmbeddedBank(
        settings, embedder=embedder, synthesizer=default_synthesizer(embedder, profile=profile_synthesizer)
    )


@functools.cache
def open_embedder() -> MiniLMEmbedder:
    """The process's sentence embedder (loads lazily), shared by the embedded bank and the agent: one
    per process, so the model is loaded once however many parts ask for it."""
    return MiniLMEmbedder()


def default_synthesizer(embedder: Embedder, *, profile: Synthesizer | None = None) -> Synthesizer:
    """The profile from ``profile`` (else the offline pattern synthesizer); other questions as a digest."""
    return ProfileAwareSynthesizer(profile=profile or OfflineSynthesizer(embedder), fallback=EvidenceDigest())
