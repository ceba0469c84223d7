"""Open the configured memory bank: the embedded driver by default, a Hindsight server when asked."""

from memory.bank import MemoryBank
from memory.settings import MemorySettings
from memory.synthesis import EvidenceDigest, Synthesizer


def open_bank(settings: MemorySettings) -> MemoryBank:
    """Build the bank without touching the store: the first call connects (and may then fail)."""
    if settings.memory == "hindsight":
        from memory.hindsight import HindsightBank

        return HindsightBank(settings)
    from memory.embedded.bank import EmbeddedBank
    from memory.embedder import MiniLMEmbedder

    return EmbeddedBank(settings, embedder=MiniLMEmbedder(), synthesizer=default_synthesizer())


def default_synthesizer() -> Synthesizer:
    """What answers reflect and refreshes mental models in the embedded driver without an LLM."""
    return EvidenceDigest()
