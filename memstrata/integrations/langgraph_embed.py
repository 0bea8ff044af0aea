"""LangGraph's `index={"embed": ..., "dims": ...}` as a memstrata `Embedder`.

`embed` may be what LangGraph's stores take: a LangChain `Embeddings`, a function from texts to vectors,
or a provider string (`"openai:text-embedding-3-small"`, resolved by LangGraph's `init_embeddings`).
The adapter's `name` records the embeddings' class and model in the store, so reopening the store with
other embeddings is refused (`EmbeddingMismatch`) instead of mixing vector spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base.embed import ensure_embeddings

from ..embedders.base import Embedder, Vectors, normalize_rows
from ..errors import ConfigurationError


class LangChainEmbedder:
    """A memstrata embedder over a LangChain `Embeddings` of known dimensions."""

    def __init__(self, embeddings: Embeddings, dims: int, *, source: object = None) -> None:
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 2:
            raise ConfigurationError(f"index dims must be an integer >= 2, got {dims!r}")
        self.embeddings = embeddings
        self.source = embeddings if source is None else source
        """What the index config named as `embed` (a function or a provider string before wrapping)."""
        self._dims = dims

    @property
    def name(self) -> str:
        model = getattr(self.embeddings, "model", None) or getattr(self.embeddings, "model_name", None)
        label = type(self.embeddings).__name__ + (f"/{model}" if isinstance(model, str) else "")
        return f"langchain:{label}:{self._dims}"

    @property
    def dimensions(self) -> int:
        return self._dims

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        if not texts:
            return np.zeros((0, self._dims), dtype=np.float32)
        return self._checked(self.embeddings.embed_documents(list(texts)), len(texts))

    def embed_query(self, text: str, /) -> Vectors:
        return self._checked([self.embeddings.embed_query(text)], 1)[0]

    def _checked(self, rows: Any, count: int) -> Vectors:
        matrix = np.asarray(rows, dtype=np.float32)
        if matrix.shape != (count, self._dims):
            raise ConfigurationError(
                f"the index's embeddings returned shape {matrix.shape}, expected ({count}, {self._dims}) (dims)"
            )
        return normalize_rows(matrix)


class EmbedderAsEmbeddings(Embeddings):
    """A memstrata embedder seen as LangChain `Embeddings`: what `MemstrataStore.embeddings` is when the
    Memory embeds with one of memstrata's own embedders (LangGraph's stores expose the embeddings their
    index uses there). Vectors are the embedder's own (unit length)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.embedder.embed_documents(texts)] if texts else []

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.embedder.embed_query(text)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EmbedderAsEmbeddings) and other.embedder is self.embedder

    def __hash__(self) -> int:
        return id(self.embedder)


def embeddings_of(embedder: Embedder) -> Embeddings:
    """The LangChain `Embeddings` behind a memstrata embedder: the wrapped one for a `LangChainEmbedder`,
    else a view of the embedder itself."""
    return embedder.embeddings if isinstance(embedder, LangChainEmbedder) else EmbedderAsEmbeddings(embedder)


def embedder_from_index(index: dict[str, Any]) -> LangChainEmbedder:
    """The embedder an index config with `embed` and `dims` asks for."""
    if index.get("dims") is None:
        raise ConfigurationError("an index with 'embed' needs 'dims' (the embeddings' dimensions)")
    return LangChainEmbedder(ensure_embeddings(index["embed"]), index["dims"], source=index["embed"])


def same_embeddings(embedder: object, embed: object) -> bool:
    """Whether a Memory's embedder already is the index's `embed` (wrapped or equal)."""
    if isinstance(embedder, LangChainEmbedder):
        return any(inner is embed or inner == embed for inner in (embedder.embeddings, embedder.source))
    return embedder is embed


__all__ = ["EmbedderAsEmbeddings", "LangChainEmbedder", "embedder_from_index", "embeddings_of", "same_embeddings"]
