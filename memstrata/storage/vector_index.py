"""An in-process vector index for one user's memories (numpy, cosine on unit vectors).

Rows live in preallocated float32 buffers that grow by doubling, so adding a memory does not copy the
whole matrix; removal swaps the last row into the hole. `version` mirrors the store's per-user version
counter so a stale index (another process wrote) is detected and reloaded.

**Two-stage search for big users.** Scoring every row reads the whole matrix (100 MB for 100k rows of
256 dims): memory bandwidth, not arithmetic, is the cost. From `TWO_STAGE_FROM_ROWS` rows the index
keeps its vectors rotated by the principal axes of the user's own vectors (an orthogonal rotation, so
every dot product is unchanged), split into a head of the highest-variance half of the axes and a tail
of the rest. `best` scores all rows on the head only (half the bytes), then rescores the
`candidates(limit)` best of those exactly on all dimensions. Rows outside the head's candidates can be
missed; how often is measured (tests, BENCHMARKS.md). `similarities` stays exact for every row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]

TWO_STAGE_FROM_ROWS = 20_000
"""From this many rows the index is rotated and searched in two stages (below, one exact pass is cheap)."""

_MOMENT_CHUNK = 65_536

CANDIDATES_PER_RESULT = 20
MIN_CANDIDATES = 1000


def candidates(limit: int) -> int:
    """How many rows the head stage passes to exact rescoring for `limit` results."""
    return max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * limit)


def principal_rotation(matrix: Matrix) -> Matrix:
    """The orthogonal matrix whose columns are the principal axes of `matrix`'s rows (uncentered second
    moment, so dot products with any query are preserved), highest variance first. Pure."""
    moment = np.zeros((matrix.shape[1], matrix.shape[1]), dtype=np.float64)
    for start in range(0, len(matrix), _MOMENT_CHUNK):  # float32 products, summed in float64: no big copy
        chunk = matrix[start : start + _MOMENT_CHUNK]
        moment += chunk.T @ chunk
    _, axes = np.linalg.eigh(moment)  # ascending eigenvalues
    return np.ascontiguousarray(axes[:, ::-1], dtype=np.float32)


class UserVectorIndex:
    def __init__(self, version: int, ids: Sequence[str], matrix: Matrix) -> None:
        self.version = version
        self.ids: list[str] = list(ids)
        self.positions = {memory_id: row for row, memory_id in enumerate(self.ids)}
        self.count = len(self.ids)
        self.rotation: Matrix | None = None
        self._head, self._tail = self._split(np.array(matrix, dtype=np.float32, copy=True, ndmin=2))
        self._rotate_when_big()

    # -- layout -----------------------------------------------------------------------------------
    @property
    def dimensions(self) -> int | None:
        return int(self._head.shape[1] + self._tail.shape[1]) if self.count else None

    @property
    def two_stage(self) -> bool:
        return self.rotation is not None

    @property
    def matrix(self) -> Matrix:
        """The stored vectors, in their original coordinates (a copy)."""
        rows = np.hstack([self._head[: self.count], self._tail[: self.count]])
        return rows if self.rotation is None else rows @ self.rotation.T

    def _rotated(self, vectors: Matrix) -> Matrix:
        return vectors if self.rotation is None else vectors @ self.rotation

    def _split(self, vectors: Matrix) -> tuple[Matrix, Matrix]:
        """(head, tail) of `vectors` in the index's coordinates; without rotation the head is everything."""
        if self.rotation is None:
            return np.ascontiguousarray(vectors), np.zeros((len(vectors), 0), dtype=np.float32)
        head_dims = self.rotation.shape[1] // 2  # each half rotated on its own: no full rotated copy
        return vectors @ self.rotation[:, :head_dims], vectors @ self.rotation[:, head_dims:]

    # -- writes -----------------------------------------------------------------------------------
    def upsert(self, ids: Sequence[str], vectors: Matrix) -> None:
        """Replace the vectors of known ids and append the others."""
        if not len(ids):
            return
        if not self.count:
            self.rotation = None
            self._head, self._tail = self._split(np.zeros((max(len(ids), 64), vectors.shape[1]), dtype=np.float32))
        head, tail = self._split(np.asarray(vectors, dtype=np.float32))
        for memory_id, head_row, tail_row in zip(ids, head, tail, strict=True):
            row = self.positions.get(memory_id)
            if row is None:
                row = self._append_slot(memory_id)
            self._head[row] = head_row
            self._tail[row] = tail_row
        self._rotate_when_big()

    def _rotate_when_big(self) -> None:
        """Switch to the rotated two-stage layout once the user has `TWO_STAGE_FROM_ROWS` rows (once: the
        rotation stays exact as rows change, it only fits the data a little less well over time)."""
        if self.rotation is not None or self.count < TWO_STAGE_FROM_ROWS:
            return
        vectors = np.hstack([self._head[: self.count], self._tail[: self.count]])
        self.rotation = principal_rotation(vectors)
        self._head, self._tail = self._split(vectors)

    def _append_slot(self, memory_id: str) -> int:
        if self.count == len(self._head):
            self._head = _grown(self._head, self.count)
            self._tail = _grown(self._tail, self.count)
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
                self._head[row] = self._head[last]
                self._tail[row] = self._tail[last]
                self.ids[row] = moved
                self.positions[moved] = row
            self.ids.pop()
            self.count -= 1

    # -- reads ------------------------------------------------------------------------------------
    def _query_halves(self, query: Matrix) -> tuple[Matrix, Matrix]:
        """`query` in the index's coordinates, split like the rows (head, tail)."""
        q = self._rotated(np.asarray(query, dtype=np.float32))
        split = self._head.shape[1]
        return q[:split], q[split:]

    def similarities(self, query: Matrix) -> Matrix:
        """Exact cosine of every row with `query` (a unit vector), by row number."""
        head, tail = self._query_halves(query)
        sims = self._head[: self.count] @ head
        if self._tail.shape[1]:
            sims += self._tail[: self.count] @ tail
        return sims

    def best(self, query: Matrix, limit: int) -> tuple[Rows, Matrix]:
        """The row numbers of the `limit` best rows, best first, and their exact similarities.
        Exact below `TWO_STAGE_FROM_ROWS` rows; two-stage above (see the module docstring)."""
        if self.rotation is None or candidates(limit) >= self.count:
            sims = self.similarities(query)
            top = top_rows(sims, limit)
            return top, sims[top]
        head, tail = self._query_halves(query)
        coarse = top_rows(self._head[: self.count] @ head, candidates(limit))
        exact = self._head[coarse] @ head + self._tail[coarse] @ tail
        order = top_rows(exact, limit)
        return coarse[order], exact[order]


def top_rows(scores: Matrix, head: int) -> Rows:
    """The row numbers of the `head` best scores, best first (a partial sort: cheap at 100k rows)."""
    n = len(scores)
    if head >= n:
        return np.argsort(-scores, kind="stable")
    top = np.argpartition(scores, n - head)[n - head :]
    return top[np.argsort(-scores[top], kind="stable")]


def _grown(buffer: Matrix, used: int) -> Matrix:
    grown = np.zeros((max(len(buffer) * 2, 64), buffer.shape[1]), dtype=np.float32)
    grown[:used] = buffer[:used]
    return grown
