"""Open the configured memory bank: the embedded driver by default, a Hindsight server when asked."""

from memory.bank import MemoryBank
from memory.embedder import Embedder
from memory.patterns import OfflineSynthesizer, ProfileAwareSynthesizer
from memory.settings import MemorySettings
from memory.synthesis import EvidenceDigest, Synthesizer


def open_bank(settings: MemorySettings) -> MemoryBank:
    """Build the bank without touching the store: the first call connects (and may then fail)."""
    if settings.memory == "hindsight":
        from memory.hindsight import HindsightBank

        return HindsightBank(settings)
    from memory.embedded.bank import EmbeddedBank
    from memory.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    return EmbeddedBank(settings, embedder=embedder, synthesizer=default_synthesizer(embedder))


def default_synthesizer(embedder: Embedder) -> Synthesizer:
    """Without an LLM: the team profile from the offline pattern synthesizer, other questions as a digest."""
    return ProfileAwareSynthesizer(profile=OfflineSynthesizer(embedder), fallback=EvidenceDigest())
