"""LangGraph store query semantics (pure: no I/O, no LangGraph import).

Filters, namespace matching and result ordering follow LangGraph's own stores:

* a filter maps value keys to an exact value (nested dicts match nested dicts, lists match equal
  lists) or to operators `$eq $ne $gt $gte $lt $lte`; every key must match;
* a namespace condition matches from the start (`prefix`) or the end (`suffix`) of a namespace,
  `"*"` matching any one label; `max_depth` truncates, duplicates collapse, output is sorted;
* without a query, search returns the newest updates first (as LangGraph's SQL stores do); with a
  query, items scored by the best similarity of any of their vectors (max pooling), best first,
  then items that have no vector (stored with `index=False`), newest first: an unindexed item is
  still reachable through `search`, as `BaseStore.put` documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from .langgraph_items import StoredItem

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_FILTER_KEY = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")


class InvalidFilter(InvalidInput, ValueError):
    """A search filter LangGraph's stores refuse too: a bad key or an unknown operator. Also a
    `ValueError`, the error LangGraph's SQL stores raise for it."""


def check_filter(filter: Mapping[str, Any] | None) -> None:
    """Refuse a filter before it is applied: every key is a path of letters, digits, `_` and `-`
    separated by `.` (the keys LangGraph's SQL stores accept, so a filter behaves alike on every store),
    and every operator is one of `_OPERATORS`."""
    if filter is None:
        return
    if not isinstance(filter, Mapping):
        raise InvalidFilter(f"a search filter must be a mapping of value keys, got {type(filter).__name__}")
    for key, wanted in filter.items():
        if not isinstance(key, str) or not _FILTER_KEY.fullmatch(key):
            raise InvalidFilter(
                f"Invalid filter key: {key!r}. Filter keys are paths of letters, digits, '_' and '-' "
                "separated by '.' (e.g. 'user.level')"
            )
        if isinstance(wanted, Mapping):
            for operator in wanted:
                if isinstance(operator, str) and operator.startswith("$") and operator not in _OPERATORS:
                    raise InvalidFilter(
                        f"unsupported filter operator {operator!r} for {key!r}; use one of {', '.join(_OPERATORS)}"
                    )


def matches_filter(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether an item value satisfies a LangGraph search filter. A dotted key is a nested path
    (`{"user.level": 2}` looks at `value["user"]["level"]`), as in LangGraph's SQL stores."""
    return not filter or all(_matches(at_path(value, key), wanted) for key, wanted in filter.items())


def at_path(value: Mapping[str, Any], key: str) -> Any:
    """The value at a dotted path, or None where the path does not exist."""
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, Mapping):
            return None
        found = found.get(part)
    return found


def _matches(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in wanted):
            return all(_apply(actual, op, operand) for op, operand in wanted.items())
        return isinstance(actual, Mapping) and all(_matches(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_matches(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _apply(actual: Any, operator: str, operand: Any) -> bool:
    if operator not in _OPERATORS:
        raise InvalidFilter(f"unsupported filter operator {operator!r}; use one of {', '.join(_OPERATORS)}")
    if operator == "$eq":
        return bool(actual == operand)
    if operator == "$ne":
        return bool(actual != operand)
    comparable = _comparable(actual, operand)
    if comparable is None:
        return False
    left, right = comparable
    if operator == "$gt":
        return left > right
    if operator == "$gte":
        return left >= right
    if operator == "$lt":
        return left < right
    return left <= right


def _comparable(actual: Any, operand: Any) -> tuple[Any, Any] | None:
    """Numbers compare as numbers, strings as strings; anything else never matches an ordering."""
    numbers = (int, float)
    if isinstance(actual, numbers) and isinstance(operand, numbers):
        if isinstance(actual, bool) or isinstance(operand, bool):
            return None
        return float(actual), float(operand)
    if isinstance(actual, str) and isinstance(operand, str):
        return actual, operand
    return None


def has_prefix(namespace: Sequence[str], prefix: Sequence[str]) -> bool:
    return tuple(namespace[: len(prefix)]) == tuple(prefix)


def matches_condition(namespace: Sequence[str], match_type: str, path: Sequence[str]) -> bool:
    """One `MatchCondition`: `path` (with `"*"` wildcards) at the start or the end of `namespace`."""
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInput(f"unsupported namespace match type {match_type!r}; use 'prefix' or 'suffix'")
    return all(p == "*" or n == p for n, p in pairs)


def list_namespaces(
    namespaces: Iterable[tuple[str, ...]],
    conditions: Sequence[tuple[str, Sequence[str]]],
    *,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> list[tuple[str, ...]]:
    """Distinct namespaces matching every condition, truncated to `max_depth`, sorted, paged."""
    found = {
        ns[:max_depth] if max_depth is not None else ns
        for ns in namespaces
        if all(matches_condition(ns, kind, path) for kind, path in conditions)
    }
    return sorted(found)[offset : offset + limit]


def newest_first(items: Iterable[StoredItem]) -> list[StoredItem]:
    return sorted(items, key=lambda i: (i.updated_at, i.namespace, i.key), reverse=True)


def rank(
    items: Sequence[StoredItem], similarities: Mapping[str, float], *, limit: int, offset: int
) -> list[tuple[StoredItem, float | None]]:
    """Order candidates for a query: max-pooled vector score, best first, then unscored, newest first."""
    scored: list[tuple[StoredItem, float]] = []
    unscored: list[StoredItem] = []
    for item in items:
        scores = [similarities[i] for i in item.vector_ids if i in similarities]
        if scores:
            scored.append((item, max(scores)))
        else:
            unscored.append(item)
    scored.sort(key=lambda pair: (-pair[1], -pair[0].updated_at.timestamp(), pair[0].namespace, pair[0].key))
    ordered: list[tuple[StoredItem, float | None]] = [*scored, *((i, None) for i in newest_first(unscored))]
    return ordered[offset : offset + limit]


def live(items: Iterable[StoredItem], now: datetime) -> list[StoredItem]:
    """Items whose TTL has not run out (expired ones are never returned, even before a sweep)."""
    return [i for i in items if not i.expired(now)]


def check_page(limit: int, offset: int) -> None:
    for name, number in (("limit", limit), ("offset", offset)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise InvalidInput(f"{name} must be a non-negative integer, got {number!r}")


__all__ = [
    "InvalidFilter",
    "check_filter",
    "check_page",
    "has_prefix",
    "list_namespaces",
    "live",
    "matches_condition",
    "matches_filter",
    "newest_first",
    "rank",
]
