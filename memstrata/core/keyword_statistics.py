"""What a write changes in a user's keyword statistics (pure), for both stores.

BM25 (`core.bm25`) needs, per user, how many memories there are, how many tokens they hold (for the
average length), and per term how many memories hold it. Each store keeps these counts in tables of its
own, updated in the transaction of every write: `statistics_change` computes what replacing some
memories' terms by others adds and removes, and the store applies it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StatisticsChange:
    """What a write changes in a user's statistics."""

    memories: int
    tokens: int
    documents: dict[str, int]
    """Per term, how many more memories hold it (negative: fewer); terms without change left out."""


def statistics_change(
    removed: Iterable[tuple[Collection[str], int]], added: Iterable[tuple[Collection[str], int]]
) -> StatisticsChange:
    """The change from replacing the rows `removed` by `added`, each given as (terms, length)."""
    documents: Counter[str] = Counter()
    memories = tokens = 0
    for terms, length in removed:
        documents.subtract(set(terms))
        memories -= 1
        tokens -= length
    for terms, length in added:
        documents.update(set(terms))
        memories += 1
        tokens += length
    return StatisticsChange(memories, tokens, {t: n for t, n in sorted(documents.items()) if n})
