"""Embedders: text → unit-length float32 vectors. `resolve_embedder(spec)` picks one from a spec string."""

from .base import Embedder, Vectors
from .e5 import E5Embedder
from .hashing import HashingEmbedder
from .openai_compat import OpenAICompatibleEmbedder
from .registry import resolve_embedder
from .static import StaticEmbedder

__all__ = [
    "E5Embedder",
    "Embedder",
    "HashingEmbedder",
    "OpenAICompatibleEmbedder",
    "StaticEmbedder",
    "Vectors",
    "resolve_embedder",
]
