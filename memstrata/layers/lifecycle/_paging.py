"""Reading every row of a user through the `Store` protocol (pages, all items, user listing)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ... import namespaces
from ...models import MemoryRecord
from ...storage.base import Item, MemoryFilter, Store
from .policy import LIFECYCLE

PAGE = 1000
ALL = 1_000_000_000
EVERYTHING = MemoryFilter(include_superseded=True, include_expired=True)
"""Current, superseded, compressed and expired memories alike."""


def all_memories(store: Store, user_id: str, where: MemoryFilter = EVERYTHING) -> list[MemoryRecord]:
    """Every matching memory, oldest first, read page by page."""
    found: list[MemoryRecord] = []
    while True:
        page = store.list_memories(user_id, where, limit=PAGE, offset=len(found), newest_first=False)
        found.extend(page)
        if len(page) < PAGE:
            return found


def user_namespaces() -> tuple[str, ...]:
    """Every namespace a user's items may live in (export and the erasure counts walk them all).

    `Store` cannot list a user's namespaces, so a namespace missing here would be missing from
    exports: it is `namespaces.ALL_USER_NAMESPACES` plus the lifecycle's own. (Erasure itself deletes
    every item of the user regardless.)
    """
    return tuple(dict.fromkeys((*namespaces.ALL_USER_NAMESPACES, LIFECYCLE)))


def all_items(store: Store, user_id: str, namespace: str) -> list[Item]:
    return store.list_items(user_id, namespace, limit=ALL)


def all_users(store: Store) -> list[str]:
    return [u for u in store.user_ids(limit=ALL) if u != namespaces.SYSTEM_USER]


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from strings_in(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from strings_in(inner)
