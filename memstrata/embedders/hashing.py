"""A deterministic, dependency-free embedder: hashed bag of stemmed words.

Not a semantic model. It exists so tests can run without loading weights
(`TestEmbedder` in the style of llm's `EmbedDemo`), and as a last-resort
offline embedder. Texts sharing words get similar vectors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ..core.text import content_terms
from .base import Vectors, normalize_rows


class HashingEmbedder:
    __test__ = False

    def __init__(self, dimensions: int = 64) -> None:
        if dimensions < 2:
            raise ValueError("dimensions must be >= 2")
        self._dimensions = dimensions

    @property
    def name(self) -> str:
        return f"hashing-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self._dimensions, dtype=np.float32)
        for term in content_terms(text):
            digest = hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dimensions
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[bucket] += sign
        return vector

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str, /) -> Vectors:
        return self.embed_documents([text])[0]


TestEmbedder = HashingEmbedder
