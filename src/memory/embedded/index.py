"""The in-memory half of the embedded driver: every vector in one float32 matrix, tags as postings.

Brute-force cosine over a contiguous float32 matrix beats an ANN index up to a few hundred thousand
records on a laptop and needs no extension. Tag filters become a boolean mask computed from per-tag
position arrays, so the semantic channel ranks only the records the filter admits. Writers and readers
share one lock; a search copies nothing but the similarity vector.
"""

import threading
from collections.abc import Iterable

import numpy as np

from memory.bank import TagsMatch
from memory.embedded.store import IndexRow


class VectorIndex:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.lock = threading.RLock()
        self.seq = 0  # highest document seq applied
        self.loaded = False
        self._size = 0
        self._matrix = np.empty((0, dimension), dtype=np.float32)
        self._ids = np.empty(0, dtype=np.int64)
        self._ts = np.empty(0, dtype=np.float64)
        self._tag_count = np.empty(0, dtype=np.int32)
        self._pos: dict[int, int] = {}
        self._tags: list[frozenset[str]] = []
        self._postings: dict[str, set[int]] = {}
        self._posting_arrays: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return self._size

    def load(
        self, ids: np.ndarray, vectors: np.ndarray, ts: np.ndarray, tags: list[tuple[str, ...]], seq: int
    ) -> None:
        """Replace everything at once (bulk reload from the file). ``vectors`` is used in place if writable.

        Records share few distinct tag sets, so postings are built per distinct set, not per record.
        """
        with self.lock:
            n = len(ids)
            matrix = np.asarray(vectors, dtype=np.float32).reshape(n, self.dimension)
            self._matrix = matrix if matrix.flags.writeable else matrix.copy()
            self._ids = ids.astype(np.int64)
            self._ts = ts.astype(np.float64)
            groups: dict[tuple[str, ...], list[int]] = {}
            for position, combo in enumerate(tags):
                groups.setdefault(combo, []).append(position)
            self._tags = [frozenset()] * n
            self._tag_count = np.zeros(n, dtype=np.int32)
            self._postings = {}
            for combo, positions in groups.items():
                shared = frozenset(combo)
                for position in positions:
                    self._tags[position] = shared
                self._tag_count[positions] = len(shared)
                for tag in shared:
                    self._postings.setdefault(tag, set()).update(positions)
            self._pos = {int(doc): i for i, doc in enumerate(self._ids.tolist())}
            self._posting_arrays = {}
            self._size = n
            self.seq = seq
            self.loaded = True

    def apply(self, rows: Iterable[IndexRow]) -> None:
        """Insert or replace rows in place (a replaced document keeps its position)."""
        with self.lock:
            for row in rows:
                pos = self._pos.get(row.id)
                if pos is None:
                    pos = self._append_slot()
                    self._pos[row.id] = pos
                    self._ids[pos] = row.id
                    self._tags.append(frozenset())
                old = self._tags[pos]
                new = frozenset(row.tags)
                for tag in old - new:
                    self._postings[tag].discard(pos)
                    self._posting_arrays.pop(tag, None)
                for tag in new - old:
                    self._postings.setdefault(tag, set()).add(pos)
                    self._posting_arrays.pop(tag, None)
                self._tags[pos] = new
                self._tag_count[pos] = len(new)
                self._matrix[pos] = row.vector
                self._ts[pos] = row.ts
                self.seq = max(self.seq, row.seq)

    def _append_slot(self) -> int:
        if self._size == len(self._matrix):
            capacity = max(64, 2 * len(self._matrix))
            self._matrix = _grow(self._matrix, capacity)
            self._ids = _grow(self._ids, capacity)
            self._ts = _grow(self._ts, capacity)
            self._tag_count = _grow(self._tag_count, capacity)
        self._size += 1
        return self._size - 1

    def _posting(self, tag: str) -> np.ndarray:
        arr = self._posting_arrays.get(tag)
        if arr is None:
            arr = np.fromiter(self._postings.get(tag, ()), dtype=np.int64)
            self._posting_arrays[tag] = arr
        return arr

    def admitted(self, tags: list[str] | None, match: TagsMatch) -> set[int] | None:
        """The ids of the documents the filter admits (``mask`` as ids); None = all."""
        with self.lock:
            hit = self.mask(tags, match)
            return None if hit is None else set(self._ids[: self._size][hit].tolist())

    def mask(self, tags: list[str] | None, match: TagsMatch) -> np.ndarray | None:
        """Which positions the filter admits, with Hindsight's meaning of each mode; None = all."""
        wanted = list(dict.fromkeys(tags or []))
        if not wanted:
            return None
        size = self._size
        if match in ("any", "any_strict"):
            hit = np.zeros(size, dtype=bool)
            for tag in wanted:
                hit[self._posting(tag)] = True
        else:
            counts = np.zeros(size, dtype=np.int32)
            for tag in wanted:
                counts[self._posting(tag)] += 1
            hit = counts == len(wanted)
            if match == "exact":
                hit &= self._tag_count[:size] == len(wanted)
        if match in ("any", "all"):
            hit |= self._tag_count[:size] == 0
        return hit

    def search(self, query: np.ndarray, *, tags: list[str] | None, match: TagsMatch, k: int) -> list[int]:
        """Document ids of the ``k`` nearest admitted vectors, best first."""
        with self.lock:
            size = self._size
            if size == 0 or k <= 0:
                return []
            admitted = self.mask(tags, match)
            if admitted is None:
                candidates = None
                sims = self._matrix[:size] @ query
            elif admitted.sum() * 4 < size:
                candidates = np.flatnonzero(admitted)
                sims = self._matrix[candidates] @ query
            else:
                candidates = None
                sims = self._matrix[:size] @ query
                sims[~admitted] = -np.inf
            ids = self._ids[:size] if candidates is None else self._ids[candidates]
            ts = self._ts[:size] if candidates is None else self._ts[candidates]
            k = min(k, len(sims))
            if k == 0:
                return []
            top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
            top = top[np.isfinite(sims[top])]
            order = np.lexsort((-ts[top], -sims[top]))
            return [int(x) for x in ids[top[order]]]

    def snapshot(self) -> np.ndarray:
        """A copy of the live vectors (for measuring the raw matrix product against recall)."""
        with self.lock:
            return self._matrix[: self._size].copy()

    def timestamps(self, doc_ids: Iterable[int]) -> dict[int, float]:
        with self.lock:
            return {d: float(self._ts[self._pos[d]]) for d in doc_ids if d in self._pos}


def _grow(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown
