"""BM25 as both stores rank keyword matches with it: FTS5's `bm25()` formula and constants, computed
over the statistics of ONE user (pure).

For each query term: idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average)), summed over the
terms a memory holds, where f is the memory's weighted frequency of the term (`keyword_index`), length
its token count, average the user's mean length, and idf = ln((N - n + 0.5) / (n + 0.5)) with N the
user's memories and n those holding the term, 1e-6 when not positive (as FTS5). PostgreSQL computes the
same in SQL (`postgres/sql_functions.py`, which takes its constants from here); SQLite computes it with
numpy over the postings it reads, with the IDFs computed here (`storage/sqlite_keyword.py`).

`keyword_plan` chooses which query terms a search looks up; both stores follow it (SQLite calls it,
PostgreSQL's BM25_PLAN is the same rule in SQL, checked against it in tests/postgres/test_search.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

K1 = 1.2
B = 0.75
"""FTS5's bm25() constants."""

MIN_IDF = 1e-6
"""FTS5's floor for the IDF of a term in half of the rows or more."""

PRUNE_FROM_ROWS = 5000
"""Below this many memories a user's search looks up every query term (the scan is cheap anyway)."""

POSTING_BUDGET = 4000
"""Above `PRUNE_FROM_ROWS` memories, roughly how many postings one keyword search may rank at least."""

POSTING_SHARE = 0.04
"""...or this share of the user's memories when that is more: a fixed budget keeps ever fewer query terms
as the user grows (measured with 2,000 rows: 0.96 of source memories found at 100k rows, 0.38 at 1M).
4 % was chosen over 2 % for quality (BENCHMARKS.md §5: the budget's cost in found sources)."""


def idf(total: int, documents: int) -> float:
    """The IDF of a term held by `documents` of a user's `total` memories."""
    value = math.log((total - documents + 0.5) / (documents + 0.5))
    return MIN_IDF if value <= 0 else value


def keyword_plan(
    terms: Sequence[str], documents: dict[str, int], total: int, *, budget: int | None = POSTING_BUDGET
) -> list[str]:
    """Which of the query `terms` a search of a user with `total` memories looks up, in query order
    (repeated terms are kept: each is ranked, as FTS5 ranks each query phrase). `documents[term]` is how
    many of the user's memories hold the term (absent: none).

    * Users with fewer than `PRUNE_FROM_ROWS` memories look up every term: even a near-zero score brings
      a candidate to the fusion.
    * Terms in more than half of the memories are dropped: their IDF is the 1e-6 floor, so they add
      nothing to any score, yet their posting lists are the longest.
    * The rest are looked up rarest first (highest IDF, most weight) while their postings fit
      max(`budget`, `POSTING_SHARE` of `total`) (`budget` None: no limit); the rarest is always kept.
      Ranking cost grows with every posting ranked, so this bounds it for big users, at the cost of
      memories matching only frequent terms, which score lowest (term-at-a-time "quit" pruning, Moffat &
      Zobel 1996). The measured effect is in BENCHMARKS.md.
    """
    if total < PRUNE_FROM_ROWS:
        return list(terms)
    informative = sorted(
        (i for i, t in enumerate(terms) if documents.get(t, 0) * 2 <= total), key=lambda i: documents.get(terms[i], 0)
    )
    limit = None if budget is None else max(budget, math.floor(total * POSTING_SHARE))
    kept: list[int] = []
    spent = 0
    for position in informative:
        spent += documents.get(terms[position], 0)
        if kept and limit is not None and spent > limit:
            break
        kept.append(position)
    return [terms[i] for i in sorted(kept)]
