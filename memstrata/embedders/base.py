"""The embedder contract: turn texts into unit-length float32 vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
"""A 2-D float32 array, one L2-normalized row per text."""


@runtime_checkable
class Embedder(Protocol):
    """Every embedder exposes its identity and two batch methods.

    `name` and `dimensions` are recorded in the store; opening a store with a
    different embedder is an `EmbeddingMismatch` error.
    Rows are L2-normalized so that a dot product is the cosine similarity.
    Implementations raise `ProviderError` when a remote endpoint fails.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        """Embed texts to be stored. Batched; returns shape (len(texts), dimensions)."""
        ...

    def embed_query(self, text: str, /) -> Vectors:
        """Embed one search query; returns shape (dimensions,)."""
        ...


def normalize_rows(matrix: npt.ArrayLike) -> Vectors:
    """L2-normalize each row; zero rows stay zero."""
    array = np.asarray(matrix, dtype=np.float32)
    if array.ndim == 1:
        array = array[None, :]
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (array / norms).astype(np.float32, copy=False)
