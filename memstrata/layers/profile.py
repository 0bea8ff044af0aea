"""Profile memory: structured key/value facts about a user, by category.

A fact is upserted by (category, key); the values it replaces are kept in the fact's `previous`
list (newest first, bounded), so an update never silently loses what was known before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .. import namespaces
from ..errors import InvalidInput, NotFound
from ..storage.base import Item, ItemsRead, Store
from ..storage.fence import fenced
from .semantic import Clock

MAX_VALUE_CHARS = 2000
MAX_PREVIOUS = 10
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.\-]{0,63}$")


@dataclass(frozen=True, slots=True)
class ProfileFact:
    category: str
    key: str
    value: str
    updated_at: datetime
    source: str | None = None
    previous: tuple[dict[str, Any], ...] = field(default=())


def _name(value: object, what: str) -> str:
    text = str(value).strip().casefold().replace(" ", "_") if isinstance(value, str) else ""
    if not _NAME.match(text):
        raise InvalidInput(f"invalid profile {what} {value!r}: use 1-64 letters, digits, _ . -")
    return text


def render_facts(facts: Sequence[ProfileFact]) -> str:
    """The profile block: 'What I know about this user:' then '- key: value' lines ('' when empty)."""
    if not facts:
        return ""
    lines = [f"- {f.key.replace('_', ' ')}: {f.value}" for f in facts]
    return "What I know about this user:\n" + "\n".join(lines)


class ProfileMemory:
    def __init__(self, *, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    @fenced
    def set_fact(self, user_id: str, category: str, key: str, value: str, *, source: str | None = None) -> ProfileFact:
        category, key = _name(category, "category"), _name(key, "key")
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput("profile value must be a non-empty string")
        if len(value) > MAX_VALUE_CHARS:
            raise InvalidInput(f"profile value is longer than {MAX_VALUE_CHARS} characters")
        value = value.strip()
        now = self.clock()
        existing = self.store.get_item(user_id, namespaces.PROFILE, f"{category}:{key}")
        previous: list[dict[str, Any]] = list(existing.value.get("previous", [])) if existing else []
        if existing and existing.value["value"] != value:
            old = existing.value
            previous.insert(0, {"value": old["value"], "updated_at": old["updated_at"], "replaced_at": now.isoformat()})
        payload = {
            "category": category,
            "key": key,
            "value": value,
            "source": source,
            "updated_at": now.isoformat(),
            "previous": previous[:MAX_PREVIOUS],
        }
        return _fact(self.store.put_item(user_id, namespaces.PROFILE, f"{category}:{key}", payload))

    def facts(self, user_id: str, category: str | None = None) -> list[ProfileFact]:
        wanted = _name(category, "category") if category is not None else None
        return [
            f
            for f in facts_of(self.store.list_items(user_id, FACTS_READ.namespace, limit=FACTS_READ.limit))
            if wanted in (None, f.category)
        ]

    def get_fact(self, user_id: str, category: str, key: str) -> ProfileFact:
        item = self.store.get_item(user_id, namespaces.PROFILE, f"{_name(category, 'category')}:{_name(key, 'key')}")
        if item is None:
            raise NotFound(f"no profile fact {category}/{key}")
        return _fact(item)

    @fenced
    def delete_fact(self, user_id: str, category: str, key: str) -> bool:
        return self.store.delete_item(user_id, namespaces.PROFILE, f"{_name(category, 'category')}:{_name(key, 'key')}")


FACTS_READ = ItemsRead(namespaces.PROFILE)
"""The read of the profile items `facts` reads (for `Store.read_many`)."""


def facts_of(items: Sequence[Item]) -> list[ProfileFact]:
    """The facts of profile items (`FACTS_READ`), by category and key."""
    return sorted((_fact(i) for i in items), key=lambda f: (f.category, f.key))


def _fact(item: Item) -> ProfileFact:
    v = item.value
    return ProfileFact(
        category=v["category"],
        key=v["key"],
        value=v["value"],
        updated_at=datetime.fromisoformat(v["updated_at"]),
        source=v.get("source"),
        previous=tuple(v.get("previous", [])),
    )
