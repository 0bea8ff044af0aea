"""A stored memory's vector with its conversational context mixed in (pure: numpy on the embedder's vectors).

A conversation turn often means little alone: "Yes, it was amazing!" answers the turn before it, and a
question about that turn names what the turn before it said. A memory's `context` (for a turn, the
turns just before it in its session, see `core.retrieval.context_text`) is already indexed for keyword
search at a lower weight; `with_context` gives the vector side the same: the memory is stored under
`normalize(v(content) + weight * v(context))`, both parts unit vectors, so the context pulls the vector
towards its topic without outweighing the memory's own words at `weight <= 1`. A memory without context
keeps `v(content)` exactly. The stored `content` does not change.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..embedders.base import Vectors, normalize_rows
from ..errors import InvalidInput


def with_context(content: Vectors, context: Vectors, has_context: Sequence[bool], weight: float) -> Vectors:
    """Row i: `normalize(content[i] + weight * context[i])` where `has_context[i]`, else `content[i]`."""
    if weight < 0:
        raise InvalidInput(f"context weight must be >= 0, got {weight}")
    if content.shape != context.shape or content.shape[0] != len(has_context):
        raise InvalidInput(
            f"content {content.shape} and context {context.shape} vectors must match {len(has_context)} memories"
        )
    if weight == 0 or not any(has_context):
        return content
    rows = np.flatnonzero(np.asarray(has_context, dtype=bool))
    mixed = content.copy()
    mixed[rows] = normalize_rows(content[rows] + weight * context[rows])
    return mixed
