"""Entity memory: people, projects, places a user mentions, upserted per (user, normalized name).

An entity keeps its display name, type, aliases, a short summary, attributes, first/last seen,
a mention count and the ids of the memories that mention it (for entity-aware retrieval).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .. import namespaces
from ..errors import InvalidInput, NotFound
from ..storage.base import Item, Store
from ..storage.fence import fenced
from .semantic import Clock

MAX_LINKED_MEMORIES = 200
MAX_SUMMARY_CHARS = 1000
_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")
_POSSESSIVE = re.compile(r"[’']s$")


def normalize_name(name: str) -> str:
    """'  The  Q3 Project's ' → 'q3 project': Unicode-folded, lower-cased, single-spaced, no article."""
    text = " ".join(unicodedata.normalize("NFKC", name).casefold().split())
    text = _POSSESSIVE.sub("", _LEADING_ARTICLE.sub("", text)).strip(" .,;:!?\"'")
    if not text or len(text) > 120:
        raise InvalidInput(f"invalid entity name {name!r}")
    return text


@dataclass(frozen=True, slots=True)
class Entity:
    key: str
    name: str
    type: str
    first_seen: datetime
    last_seen: datetime
    mention_count: int = 1
    summary: str = ""
    aliases: tuple[str, ...] = ()
    attributes: dict[str, Any] = field(default_factory=dict)
    memory_ids: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)


def mentioned_in(text: str, entities: Iterable[Entity]) -> list[Entity]:
    """Entities whose normalized name or alias occurs in `text` as whole words (pure)."""
    folded = " " + " ".join(re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text).casefold())) + " "
    found = []
    for entity in entities:
        for name in entity.names():
            words = " ".join(re.findall(r"[^\W_]+", name))
            if words and f" {words} " in folded:
                found.append(entity)
                break
    return found


class EntityMemory:
    def __init__(self, *, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    @fenced
    def upsert(
        self,
        user_id: str,
        name: str,
        *,
        type: str = "other",
        summary: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        aliases: Iterable[str] = (),
        memory_id: str | None = None,
        at: datetime | None = None,
    ) -> Entity:
        """Create the entity or merge into it (by name or alias): count the mention, merge attributes
        and aliases, keep the newest non-empty summary, link the memory."""
        now = at or self.clock()
        existing = self._find(user_id, name)
        if summary is not None and len(summary) > MAX_SUMMARY_CHARS:
            raise InvalidInput(f"entity summary is longer than {MAX_SUMMARY_CHARS} characters")
        alias_keys = {normalize_name(a) for a in aliases}
        if existing is None:
            key = normalize_name(name)
            entity = Entity(
                key=key, name=name.strip(), type=type, first_seen=now, last_seen=now, summary=summary or "",
                aliases=tuple(sorted(alias_keys - {key})), attributes=dict(attributes or {}),
                memory_ids=(memory_id,) if memory_id else (),
            )  # fmt: skip
        else:
            key = existing.key
            mentioned = normalize_name(name)
            merged_aliases = set(existing.aliases) | alias_keys | ({mentioned} - {key})
            links = [
                *existing.memory_ids,
                *([memory_id] if memory_id and memory_id not in existing.memory_ids else []),
            ]
            entity = Entity(
                key=key, name=existing.name, type=existing.type if type == "other" else type,
                first_seen=existing.first_seen, last_seen=max(existing.last_seen, now),
                mention_count=existing.mention_count + 1, summary=summary or existing.summary,
                aliases=tuple(sorted(merged_aliases)), attributes={**existing.attributes, **(attributes or {})},
                memory_ids=tuple(links[-MAX_LINKED_MEMORIES:]),
            )  # fmt: skip
        self.store.put_item(user_id, namespaces.ENTITY, key, _to_value(entity))
        return entity

    def get(self, user_id: str, name: str) -> Entity:
        entity = self._find(user_id, name)
        if entity is None:
            raise NotFound(f"no entity named {name!r}")
        return entity

    def all(self, user_id: str) -> list[Entity]:
        entities = [_entity(i) for i in self.store.list_items(user_id, namespaces.ENTITY, limit=10_000)]
        return sorted(entities, key=lambda e: (-e.mention_count, e.key))

    def mentioned_in(self, user_id: str, text: str) -> list[Entity]:
        return mentioned_in(text, self.all(user_id))

    def _find(self, user_id: str, name: str) -> Entity | None:
        key = normalize_name(name)
        item = self.store.get_item(user_id, namespaces.ENTITY, key)
        if item is not None:
            return _entity(item)
        return next((e for e in self.all(user_id) if key in e.aliases), None)


def _to_value(entity: Entity) -> dict[str, Any]:
    return {
        "key": entity.key, "name": entity.name, "type": entity.type, "summary": entity.summary,
        "aliases": list(entity.aliases), "attributes": entity.attributes, "memory_ids": list(entity.memory_ids),
        "first_seen": entity.first_seen.isoformat(), "last_seen": entity.last_seen.isoformat(),
        "mention_count": entity.mention_count,
    }  # fmt: skip


def _entity(item: Item) -> Entity:
    v = item.value
    return Entity(
        key=v["key"], name=v["name"], type=v["type"], summary=v.get("summary", ""),
        aliases=tuple(v.get("aliases", [])), attributes=dict(v.get("attributes", {})),
        memory_ids=tuple(v.get("memory_ids", [])), first_seen=datetime.fromisoformat(v["first_seen"]),
        last_seen=datetime.fromisoformat(v["last_seen"]), mention_count=int(v.get("mention_count", 1)),
    )  # fmt: skip
