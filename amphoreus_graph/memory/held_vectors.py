"""One agent's row vectors held in process: its own small index, searched exactly, apart from every other agent's.

A society's rows share one Chroma collection (one write a round), so Chroma can only search an agent's rows by a
search of the whole collection filtered to that agent, which costs with the society's size, not the agent's (71.5
of a 76 ms recall at 100k records). An index its run has to itself (`RecordIndex.exclusive`) cannot change under
it, so each agent's vectors are held here, in one float32 matrix that grows in place as rows are written (a row
deleted gives its slot to the last row), and recall ranks that agent's rows alone: cost by the agent's rows, and
no other agent's row is ever a candidate.

A search scores every row in float32, then ranks the rows within float32's error of the n-th best again in
float64 with `index.nearest` (in row-id order), so it answers exactly as that scan of the same rows would, ties and
all, at a float32 matrix product's cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from amphoreus_graph.memory.index import nearest

_GROWTH = 1.5  # a full matrix grows by half: amortised O(1) a row, at most a third of it idle
_MIN_CAPACITY = 8  # 12 KB of 384 float32s an agent before it grows: 64 rows held ~1 GB idle at 10,000 agents


class HeldVectors:
    """Row id → vector, stacked in one float32 matrix (its first `len` rows used), with each row's norm."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._slot: dict[str, int] = {}
        self._matrix: NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self._norms: NDArray[np.float32] = np.zeros(0, dtype=np.float32)

    @classmethod
    def of(cls, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> HeldVectors:
        """An index's rows as read back, held at once."""
        held = cls()
        if ids:
            held._matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1).copy()
            held._norms = np.linalg.norm(held._matrix, axis=1).astype(np.float32)
            held._ids = list(ids)
            held._slot = {row: slot for slot, row in enumerate(held._ids)}
        return held

    def __len__(self) -> int:
        return len(self._ids)

    def put(self, row: str, vector: Sequence[float]) -> None:
        """Hold a row's vector (replacing the one it had)."""
        values = np.asarray(vector, dtype=np.float32)
        slot = self._slot.get(row)
        if slot is None:
            slot = len(self._ids)
            self._reserve(slot + 1, values.shape[0])
            self._ids.append(row)
            self._slot[row] = slot
        self._matrix[slot] = values
        self._norms[slot] = np.linalg.norm(values)

    def remove(self, rows: Iterable[str]) -> None:
        """Let go of rows' vectors (those not held are skipped); the last row moves into each freed slot."""
        for row in rows:
            slot = self._slot.pop(row, None)
            if slot is None:
                continue
            last = len(self._ids) - 1
            moved = self._ids.pop()
            if slot != last:
                self._ids[slot] = moved
                self._slot[moved] = slot
                self._matrix[slot] = self._matrix[last]
                self._norms[slot] = self._norms[last]

    def nearest(self, query: Sequence[float], n: int) -> list[tuple[str, float]]:
        """The n rows nearest `query` by cosine, nearest first, ties by row id: `index.nearest` over every row."""
        count = len(self._ids)
        if count == 0 or n <= 0:
            return []
        target = np.asarray(query, dtype=np.float32)
        matrix, norms = self._matrix[:count], self._norms[:count] * np.linalg.norm(target)
        # einsum's own loop on this thread, not BLAS: OpenBLAS splits a matrix-vector product over its threads,
        # which spin-wait for one another, and on a busy machine that made this product 3-6x slower (20-40 ms
        # against 6 ms for 8,600 rows at a load of 14 on two cores).
        scores = np.einsum("ij,j->i", matrix, target) / np.where(norms == 0, 1.0, norms)
        if n < count:
            nth = -np.partition(-scores, n - 1)[n - 1]
            margin = 8 * matrix.shape[1] * np.finfo(np.float32).eps  # well over float32's error on a cosine
            slots = np.flatnonzero(scores >= nth - margin)
        else:
            slots = np.arange(count)
        order = sorted(slots.tolist(), key=self._ids.__getitem__)
        return nearest([self._ids[i] for i in order], matrix[order], query, n)

    def _reserve(self, rows: int, dimension: int) -> None:
        """Room for `rows` rows of `dimension` values (the first vector held sets the dimension)."""
        capacity, width = self._matrix.shape
        if rows <= capacity:
            return
        grown = max(_MIN_CAPACITY, rows, int(capacity * _GROWTH))
        matrix = np.zeros((grown, width or dimension), dtype=np.float32)
        norms = np.zeros(grown, dtype=np.float32)
        used = len(self._ids)
        if used:
            matrix[:used], norms[:used] = self._matrix[:used], self._norms[:used]
        self._matrix, self._norms = matrix, norms
