"""An in-process exact vector index for one user's memories (numpy, cosine on unit vectors).

Rows live in a preallocated float32 buffer that grows by doubling, so adding a memory does not copy
the whole matrix; removal swaps the last row into the hole. `version` mirrors the store's per-user
version counter so a stale index (another process wrote) is detected and reloaded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


class UserVectorIndex:
    def __init__(self, version: int, ids: Sequence[str], matrix: Matrix) -> None:
        self.version = version
        self.ids: list[str] = list(ids)
        self.positions = {memory_id: row for row, memory_id in enumerate(self.ids)}
        self._buffer: Matrix = np.array(matrix, dtype=np.float32, copy=True, ndmin=2)
        self.count = len(self.ids)

    @property
    def matrix(self) -> Matrix:
        return self._buffer[: self.count]

    @property
    def dimensions(self) -> int | None:
        return int(self._buffer.shape[1]) if self.count else None

    def upsert(self, ids: Sequence[str], vectors: Matrix) -> None:
        """Replace the vectors of known ids and append the others."""
        if not len(ids):
            return
        if not self.count:
            self._buffer = np.zeros((max(len(ids), 64), vectors.shape[1]), dtype=np.float32)
        for memory_id, vector in zip(ids, vectors, strict=True):
            row = self.positions.get(memory_id)
            if row is None:
                row = self._append_slot(memory_id)
            self._buffer[row] = vector

    def _append_slot(self, memory_id: str) -> int:
        if self.count == len(self._buffer):
            grown = np.zeros((len(self._buffer) * 2, self._buffer.shape[1]), dtype=np.float32)
            grown[: self.count] = self._buffer[: self.count]
            self._buffer = grown
        row = self.count
        self.ids.append(memory_id)
        self.positions[memory_id] = row
        self.count += 1
        return row

    def remove(self, ids: Sequence[str]) -> None:
        for memory_id in ids:
            row = self.positions.pop(memory_id, None)
            if row is None:
                continue
            last = self.count - 1
            if row != last:
                moved = self.ids[last]
                self._buffer[row] = self._buffer[last]
                self.ids[row] = moved
                self.positions[moved] = row
            self.ids.pop()
            self.count -= 1

    def similarities(self, query: Matrix) -> Matrix:
        return self.matrix @ query
