"""Entity memory: people, projects, places a user mentions, upserted per (user, normalized name).

An entity keeps its display name, type, aliases, a short summary, attributes, first/last seen,
a mention count and the ids of the memories that mention it (for entity-aware retrieval).

Memories are linked to every known entity whose name they contain (`link_mentions`), not only to
those the extractor named; without an LLM the summary is built from the current memories linked
to the entity (`summary_from`), newest first, unless a summary was given explicitly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .. import namespaces
from ..errors import InvalidInput, NotFound
from ..models import MemoryRecord
from ..storage.base import Item, ItemsRead, Store
from ..storage.fence import fenced
from .clock import Clock

MAX_LINKED_MEMORIES = 200
MAX_SUMMARY_CHARS = 1000
BUILT_SUMMARY_CHARS = 400
"""Length of a summary built from memories: a few sentences, enough for a context block."""
SUMMARY_SOURCES = 6
SUMMARY_WINDOW = 20
"""Most recent linked memories read to rebuild an entity's summary."""
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
    summary_built: bool = False
    """True when `summary` was built from the linked memories (and may be rebuilt), not given."""

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


def summary_from(texts: Iterable[str], *, limit: int = BUILT_SUMMARY_CHARS) -> str:
    """A summary from the texts of memories about an entity (newest first): distinct sentences joined
    while they fit in `limit` characters (pure)."""
    chosen: list[str] = []
    seen: set[str] = set()
    size = 0
    for text in texts:
        sentence = " ".join(text.split()).rstrip(".") + "."
        key = sentence.casefold()
        if key in seen or size + len(sentence) + 1 > limit:
            continue
        seen.add(key)
        chosen.append(sentence)
        size += len(sentence) + 1
    return " ".join(chosen)


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
        and aliases, keep the newest non-empty summary, link the memory. Linking a memory already
        linked is not a new mention (a re-run of a queued job counts nothing twice)."""
        now = at or self.clock()
        existing = self._find(user_id, name)
        if summary is not None and len(summary) > MAX_SUMMARY_CHARS:
            raise InvalidInput(f"entity summary is longer than {MAX_SUMMARY_CHARS} characters")
        alias_keys = {normalize_name(a) for a in aliases}
        if existing is None:
            key = normalize_name(name)
            entity = Entity(
                key=key,
                name=name.strip(),
                type=type,
                first_seen=now,
                last_seen=now,
                summary=summary or "",
                aliases=tuple(sorted(alias_keys - {key})),
                attributes=dict(attributes or {}),
                memory_ids=(memory_id,) if memory_id else (),
            )
        else:
            key = existing.key
            mentioned = normalize_name(name)
            merged_aliases = set(existing.aliases) | alias_keys | ({mentioned} - {key})
            links = [
                *existing.memory_ids,
                *([memory_id] if memory_id and memory_id not in existing.memory_ids else []),
            ]
            entity = Entity(
                key=key,
                name=existing.name,
                type=existing.type if type == "other" else type,
                first_seen=existing.first_seen,
                last_seen=max(existing.last_seen, now),
                mention_count=existing.mention_count + (memory_id is None or memory_id not in existing.memory_ids),
                summary=summary or existing.summary,
                aliases=tuple(sorted(merged_aliases)),
                attributes={**existing.attributes, **(attributes or {})},
                memory_ids=tuple(links[-MAX_LINKED_MEMORIES:]),
                summary_built=existing.summary_built and not summary,
            )
        self.store.put_item(user_id, namespaces.ENTITY, key, _to_value(entity))
        return entity

    def link_mentions(
        self, user_id: str, memory_id: str, text: str, *, skip: Iterable[str] = (), at: datetime | None = None
    ) -> list[Entity]:
        """Link a memory to every known entity whose name or alias it contains (except `skip` names)."""
        skipped = {normalize_name(n) for n in skip}
        found = [e for e in self.mentioned_in(user_id, text) if e.key not in skipped and memory_id not in e.memory_ids]
        return [self.upsert(user_id, e.name, memory_id=memory_id, at=at) for e in found]

    def link_memory(self, user_id: str, memory: MemoryRecord, named: Iterable[tuple[str, str]] = ()) -> list[Entity]:
        """Link `memory` to the `named` (name, type) entities and to every known entity its text
        mentions, then rebuild their built summaries from their most recent current memories."""
        named = list(named)
        touched = [self.upsert(user_id, name, type=kind, memory_id=memory.id) for name, kind in named]
        touched += self.link_mentions(user_id, memory.id, memory.content, skip=[name for name, _ in named])
        return [
            self.summarize(user_id, e, self.store.get(user_id, list(e.memory_ids[-SUMMARY_WINDOW:]))) for e in touched
        ]

    def summarize(self, user_id: str, entity: Entity, memories: Iterable[MemoryRecord]) -> Entity:
        """Rebuild a built (or empty) summary from the entity's current linked memories, newest first."""
        if entity.summary and not entity.summary_built:
            return entity
        linked = set(entity.memory_ids)
        current = [m for m in memories if m.id in linked and m.valid_to is None]
        current.sort(key=lambda m: m.valid_from or m.created_at, reverse=True)
        summary = summary_from(m.content for m in current[:SUMMARY_SOURCES])
        if summary == entity.summary:
            return entity
        updated = replace(entity, summary=summary, summary_built=True)
        self.store.put_item(user_id, namespaces.ENTITY, entity.key, _to_value(updated))
        return updated

    def get(self, user_id: str, name: str) -> Entity:
        entity = self._find(user_id, name)
        if entity is None:
            raise NotFound(f"no entity named {name!r}")
        return entity

    def all(self, user_id: str) -> list[Entity]:
        return entities_of(self.store.list_items(user_id, namespaces.ENTITY, limit=ENTITIES_READ.limit))

    def mentioned_in(self, user_id: str, text: str) -> list[Entity]:
        return mentioned_in(text, self.all(user_id))

    def _find(self, user_id: str, name: str) -> Entity | None:
        key = normalize_name(name)
        item = self.store.get_item(user_id, namespaces.ENTITY, key)
        if item is not None:
            return _entity(item)
        return next((e for e in self.all(user_id) if key in e.aliases), None)


ENTITIES_READ = ItemsRead(namespaces.ENTITY, limit=10_000)
"""The read of the entity items `all` reads (for `Store.read_many`)."""


def entities_of(items: Sequence[Item]) -> list[Entity]:
    """The entities of entity items (`ENTITIES_READ`), the most mentioned first."""
    return sorted((_entity(i) for i in items), key=lambda e: (-e.mention_count, e.key))


def _to_value(entity: Entity) -> dict[str, Any]:
    return {
        "key": entity.key,
        "name": entity.name,
        "type": entity.type,
        "summary": entity.summary,
        "aliases": list(entity.aliases),
        "attributes": entity.attributes,
        "memory_ids": list(entity.memory_ids),
        "first_seen": entity.first_seen.isoformat(),
        "last_seen": entity.last_seen.isoformat(),
        "mention_count": entity.mention_count,
        "summary_built": entity.summary_built,
    }


def _entity(item: Item) -> Entity:
    v = item.value
    return Entity(
        key=v["key"],
        name=v["name"],
        type=v["type"],
        summary=v.get("summary", ""),
        aliases=tuple(v.get("aliases", [])),
        attributes=dict(v.get("attributes", {})),
        memory_ids=tuple(v.get("memory_ids", [])),
        first_seen=datetime.fromisoformat(v["first_seen"]),
        last_seen=datetime.fromisoformat(v["last_seen"]),
        mention_count=int(v.get("mention_count", 1)),
        summary_built=bool(v.get("summary_built", False)),
    )
