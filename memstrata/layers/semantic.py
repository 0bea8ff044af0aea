"""Semantic (long-term) memory: add, get, list, update, supersede, forget, history and search.

This module sequences I/O (embedder, store) around the pure scoring functions in `core/`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

import numpy as np

from ..core import scoring
from ..core.retrieval import (
    CandidateFacts,
    HybridParams,
    as_about_user,
    hybrid_rank,
    is_about_user,
    named_speakers,
    names_the_user,
    user_names_in,
    without_names,
)
from ..core.temporal import TimeWindow, asks_when, read_windows
from ..core.text import words
from ..embedders.base import Embedder, Vectors
from ..errors import InvalidInput, MemoryNotFound
from ..extraction.dates import find_dates
from ..filters import aware
from ..models import (
    EventType,
    HistoryEvent,
    MemoryKind,
    MemoryRecord,
    Scope,
    SearchHit,
    content_hash,
    new_event,
    new_record,
    validate_text,
)
from ..storage.base import MemoryFilter, ScoredRow, Store
from ..storage.fence import fenced
from . import derived
from .access import AccessRecorder
from .clock import Clock
from .context_vector import with_context
from .known_names import known_names
from .time_cues import TimeCues

_V = TypeVar("_V")
ExpiryPolicy = Callable[[MemoryKind, datetime], "datetime | None"]
"""The default `expires_at` of a new memory of a kind created at a time (TTL per kind), or None."""

MAX_K = 1000
CONTEXT_VECTOR_WEIGHT = 0.0
"""Default `SemanticMemory.context_weight` (see BENCHMARKS.md §10, "LoCoMo recall, fourth pass")."""
MAX_EMBEDDED_QUERY_CHARS = 8_192
"""A search embeds at most this much of its query: every embedder reads a bounded input (the bundled
model its first 3,072 characters, hosted models a few thousand tokens), so a pasted 32 KB document is
cut here instead of being tokenized whole or sent over the network."""
MAX_READ_QUERY_CHARS = 2_048
"""Ranking reads the dates, names and asked role of a query in its first 2,048 characters: scanning a
32 KB query for date expressions alone took 36 ms. Keyword search takes its own first
`core.text.MAX_QUERY_TERMS` words of the whole query."""


class Strategy(StrEnum):
    """How search ranks. `hybrid` (the default) is the measured recipe of `core.retrieval`;
    `hybrid_weighted` is the classic 0.7 semantic + 0.3 keyword weighting and `hybrid_rrf` reciprocal-rank
    fusion (k=60) — both kept for comparison, both lost on LoCoMo (see BENCHMARKS.md)."""

    SEMANTIC = "semantic"
    KEYWORD = "keyword"
    HYBRID = "hybrid"
    HYBRID_WEIGHTED = "hybrid_weighted"
    HYBRID_RRF = "hybrid_rrf"
    TIME_WEIGHTED = "time_weighted"

    @classmethod
    def parse(cls, value: object) -> Strategy:
        try:
            return cls(str(value))
        except ValueError:
            known = ", ".join(s.value for s in cls)
            raise InvalidInput(f"unknown search strategy {value!r}; known: {known}") from None


@dataclass(frozen=True, slots=True)
class NewMemory:
    """One memory to add in a batch (`SemanticMemory.add_many`)."""

    content: str
    kind: MemoryKind = MemoryKind.FACT
    metadata: Mapping[str, Any] | None = None
    importance: float = 0.5
    source_ids: tuple[str, ...] = ()
    expires_at: datetime | None = None
    pinned: bool = False
    created_at: datetime | None = None
    scope: Scope | None = None
    context: str = ""
    """Surrounding text the memory is found by, never returned as its content: indexed for keyword search
    at a lower weight and mixed into its vector (`SemanticMemory.context_weight`); see `MemoryRecord.context`."""
    valid_from: datetime | None = None
    """When it became true (valid time, e.g. when the user said it); default `created_at`."""
    record_id: str | None = None
    """The id to store it under (default: a new one). A queued job derives it from its own id, so a
    re-run of the job finds what an earlier run stored. Never read from `add_many`'s dict items."""


def as_new_memories(items: object) -> list[NewMemory]:
    """`add_many`'s items as `NewMemory`s: a string is a fact, a dict holds `NewMemory` fields."""
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise InvalidInput(f"add_many() takes a list of memories, not {type(items).__name__}")
    return [_as_new_memory(item, i) for i, item in enumerate(items)]


def _as_new_memory(item: object, index: int) -> NewMemory:
    if isinstance(item, NewMemory):
        return item
    if isinstance(item, str):
        return NewMemory(content=item)
    if isinstance(item, Mapping):
        unknown = sorted(set(map(str, item)) - (set(NewMemory.__dataclass_fields__) - {"record_id"}))
        if unknown or "content" not in item:
            problem = f"unknown fields {unknown}" if unknown else "no 'content'"
            raise InvalidInput(f"add_many() item {index}: {problem}")
        return NewMemory(**{str(k): v for k, v in item.items()})
    raise InvalidInput(f"add_many() item {index} is a {type(item).__name__}; pass a str, a dict or a NewMemory")


class SemanticMemory:
    """Long-term memories of one store, embedded with one embedder."""

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        clock: Clock,
        track_access: bool = True,
        params: HybridParams | None = None,
        default_expiry: ExpiryPolicy | None = None,
        context_weight: float = CONTEXT_VECTOR_WEIGHT,
    ) -> None:
        """`context_weight`: how much a memory's `context` pulls its stored vector (`layers.context_vector`; 0 = the
        vector of the content alone)."""
        if context_weight < 0:
            raise InvalidInput(f"context_weight must be >= 0, got {context_weight}")
        self.context_weight = context_weight
        self.params = params or HybridParams()
        self.default_expiry = default_expiry
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.track_access = track_access
        self.access = AccessRecorder(store)
        self._speakers: dict[str, frozenset[str]] = {}
        self._time_cues = TimeCues()

    # -- writes ------------------------------------------------------------
    # `add` and `add_many` store text as given: nothing is extracted from it and no other memory is
    # retired by it. Comparing a statement with what the user said before (supersede, retract, an LLM's
    # decision) is `LearningMemory.learn`'s job, so one call of either always means the same thing.
    @fenced
    def add(self, scope: Scope, item: NewMemory) -> MemoryRecord:
        """Store one memory verbatim: `add_many` of that one item."""
        return self.add_many(scope, [item])[0]

    @fenced
    def add_many(
        self, scope: Scope, items: Sequence[NewMemory | str | Mapping[str, Any]], *, dedupe: bool = True
    ) -> list[MemoryRecord]:
        """Validate, embed in one batch, and store atomically, verbatim. Exact duplicates of a current memory
        (same normalized text and kind) are not stored again; the existing record is returned instead.
        Items are `NewMemory`s, plain strings (facts), or dicts of `NewMemory` fields."""
        items = as_new_memories(items)
        now = self.clock()
        records = [self._build(item.scope or scope, item, now) for item in items]
        if len({r.user_id for r in records}) > 1:
            raise InvalidInput("a batch must belong to one user")
        existing = self._current_duplicates(scope, records) if dedupe else {}
        fresh = [r for r in records if (r.content_hash, r.kind) not in existing]
        fresh = list({(r.content_hash, r.kind): r for r in fresh}.values()) if dedupe else fresh
        if fresh:
            vectors = self.vectors_of(fresh)
            events = [new_event(r, EventType.ADD, after=r.content, at=now) for r in fresh]
            self.store.save(scope.user_id, fresh, events, vectors)
        if existing:
            self.store.record_access(scope.user_id, [r.id for r in existing.values()], now)
        by_key = {(r.content_hash, r.kind): r for r in fresh} | existing
        return [by_key.get((r.content_hash, r.kind), r) for r in records]

    def vectors_of(self, records: Sequence[MemoryRecord]) -> Vectors:
        """The vectors records are stored under: their content's, pulled towards their context's."""
        return embed_records(self.embedder, records, self.context_weight)

    def _build(self, scope: Scope, item: NewMemory, now: datetime) -> MemoryRecord:
        kind = MemoryKind.parse(item.kind)
        created = aware(item.created_at, "created_at") or now
        expires = aware(item.expires_at, "expires_at")
        if expires is None and self.default_expiry is not None:
            expires = self.default_expiry(kind, created)
        return new_record(
            scope=scope,
            content=item.content,
            kind=kind,
            metadata=dict(item.metadata or {}),
            importance=item.importance,
            source_ids=tuple(item.source_ids),
            expires_at=expires,
            pinned=item.pinned,
            created_at=created,
            context=item.context,
            valid_from=aware(item.valid_from, "valid_from"),
            memory_id=item.record_id,
        )

    def _current_duplicates(
        self, scope: Scope, records: Sequence[MemoryRecord]
    ) -> dict[tuple[str, MemoryKind], MemoryRecord]:
        candidates = [r for r in records if r.kind is not MemoryKind.EPISODE]
        if not candidates:
            return {}
        found: dict[tuple[str, MemoryKind], MemoryRecord] = {}
        hashes = tuple({r.content_hash for r in candidates})
        where = MemoryFilter(agent_id=scope.agent_id, content_hashes=hashes)
        for record in self.store.list_memories(scope.user_id, where, limit=len(hashes) * 8):
            found.setdefault((record.content_hash, record.kind), record)
        return found

    @fenced
    def update(
        self,
        scope: Scope,
        memory_id: str,
        *,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        expires_at: datetime | None = None,
        pinned: bool | None = None,
    ) -> MemoryRecord:
        """Change a memory in place; the previous content stays in its history."""
        old = self.get(scope, memory_id)
        now = self.clock()
        changes: dict[str, Any] = {"updated_at": now}
        if content is not None:
            derived.refuse_content_change(old)
            text = validate_text(content)
            changes |= {"content": text, "content_hash": content_hash(text)}
        if metadata is not None:
            if not isinstance(metadata, Mapping):
                raise InvalidInput("metadata must be a JSON object (a dict)")
            changes["metadata"] = dict(metadata)
        if importance is not None:
            if not 0.0 <= importance <= 1.0:
                raise InvalidInput(f"importance must be between 0 and 1, got {importance}")
            changes["importance"] = importance
        if expires_at is not None:
            changes["expires_at"] = aware(expires_at, "expires_at")
        if pinned is not None:
            changes["pinned"] = pinned
        new = replace(old, **changes)
        event = new_event(new, EventType.UPDATE, before=old.content, after=new.content, at=now)
        vectors = self.vectors_of([new]) if content is not None else None
        self.store.save(scope.user_id, [new], [event], vectors)
        return new

    @fenced
    def supersede(
        self,
        scope: Scope,
        memory_id: str,
        content: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        reason: str = "",
    ) -> MemoryRecord:
        """Retire a memory in favour of a new one: the old record gets `valid_to` and a successor link."""
        old = self.get(scope, memory_id)
        item = NewMemory(
            content=content,
            kind=old.kind,
            importance=old.importance,
            metadata={**old.metadata, **(metadata or {})},
            source_ids=old.source_ids,
        )
        return self.replace(old.scope, [memory_id], item, reason=reason)

    @fenced
    def replace(
        self,
        scope: Scope,
        memory_ids: Sequence[str],
        item: NewMemory,
        *,
        reason: str = "",
        event: EventType = EventType.SUPERSEDE,
    ) -> MemoryRecord:
        """Add `item` and retire every memory in `memory_ids` in its favour, in one transaction.

        Retired memories keep their text and history; they get `valid_to` = when `item` became valid
        (its `valid_from`, else now) and `superseded_by`, so they disappear from default search but remain
        for `as_of` and `include_superseded`. Supersession follows valid time: a memory in `memory_ids`
        that became valid after `item` is never retired by it; `item` is stored as its history instead
        (`add_history`), still retiring the others.
        """
        wanted = list(dict.fromkeys(memory_ids))
        olds = self.store.get(scope.user_id, wanted)
        if len(olds) != len(wanted):
            missing = next(i for i in wanted if i not in {o.id for o in olds})
            raise MemoryNotFound(missing)
        for old in olds:
            if old.valid_to is not None:
                raise InvalidInput(f"memory {old.id!r} is already superseded")
        now = self.clock()
        successor = self._build(item.scope or scope, item, now)
        ended = valid_since(successor)  # valid time: the old memory stopped holding when the new began
        later = [old for old in olds if valid_since(old) > ended]
        if later:
            nearest = min(later, key=valid_since)
            return self.add_history(scope, item, successor_id=nearest.id, retire=[o.id for o in olds if o not in later])
        retired = [
            replace(old, valid_to=max(ended, old.valid_from or ended), superseded_by=successor.id, updated_at=now)
            for old in olds
        ]
        events = [
            new_event(
                r, event, before=old.content, after=successor.content, at=now, successor=successor.id, reason=reason
            )
            for r, old in zip(retired, olds, strict=True)
        ]
        events.append(
            new_event(successor, EventType.ADD, after=successor.content, at=now, predecessors=[o.id for o in olds])
        )
        vectors = self.vectors_of([successor])
        self.store.save(scope.user_id, [successor, *retired], events, vectors)
        return successor

    @fenced
    def add_history(
        self, scope: Scope, item: NewMemory, *, successor_id: str, retire: Sequence[str] = ()
    ) -> MemoryRecord:
        """Store `item` as already superseded, its place in valid time found from `successor_id`, a memory
        said after it: it is inserted into the chain of memories that replaced one another before the
        successor, before the first of them that became valid after it. It ends where that next memory
        begins (its successor link points there) and appears only in `as_of` and history queries. A
        memory of that chain that began before it ends where it begins and is retired in its favour, like
        the current memories in `retire` (said before it), in the same write. A newer memory is never
        retired."""
        found = {r.id: r for r in self.store.get(scope.user_id, [successor_id, *retire])}
        if successor_id not in found:
            raise MemoryNotFound(successor_id)
        now = self.clock()
        record = self._build(item.scope or scope, item, now)
        start = valid_since(record)
        successor, earlier = self._place_in_chain(scope, found[successor_id], start)
        record = replace(record, valid_to=max(start, valid_since(successor)), superseded_by=successor.id)
        events = [new_event(record, EventType.ADD, after=record.content, at=now, successor=successor.id)]
        olds = [found[i] for i in retire if i in found and found[i].valid_to is None and valid_since(found[i]) <= start]
        olds += [old for old in earlier if old.id not in {o.id for o in olds}]
        retired = [
            replace(old, valid_to=max(start, valid_since(old)), superseded_by=record.id, updated_at=now) for old in olds
        ]
        events += [
            new_event(r, EventType.SUPERSEDE, before=r.content, after=record.content, at=now, successor=record.id)
            for r in retired
        ]
        vectors = self.vectors_of([record])
        self.store.save(scope.user_id, [record, *retired], events, vectors)
        return record

    def _place_in_chain(
        self, scope: Scope, successor: MemoryRecord, start: datetime
    ) -> tuple[MemoryRecord, list[MemoryRecord]]:
        """Where a memory valid from `start` goes among the memories `successor` replaced (directly or
        through the ones they replaced): `(next, earlier)`, the memory it is superseded by, the first one
        valid after `start`, and that memory's predecessors valid before `start` that still held then (the
        memory now retires them)."""
        for _ in range(_MAX_CHAIN):
            replaced = MemoryFilter(superseded_by=(successor.id,), include_superseded=True, include_expired=True)
            before = self.store.list_memories(scope.user_id, replaced, limit=_MAX_CHAIN)
            between = [p for p in before if valid_since(p) > start]
            if not between:
                return successor, [p for p in before if p.valid_to is None or p.valid_to > start]
            successor = min(between, key=valid_since)
        return successor, []

    @fenced
    def forget(self, scope: Scope, memory_id: str) -> bool:
        """Delete a memory, its vector and full-text entry, and scrub its text from history."""
        records = self.store.get(scope.user_id, [memory_id])
        if not records:
            return False
        event = HistoryEvent(
            id=new_event(records[0], EventType.DELETE).id,
            memory_id=memory_id,
            user_id=scope.user_id,
            event=EventType.DELETE,
            at=self.clock(),
        )
        deleted = self.store.delete(scope.user_id, [memory_id], [event]) > 0
        self._time_cues.forget(scope.user_id, memory_id)
        derived.drop_item_of(self.store, scope.user_id, records[0])
        return deleted

    # -- reads -------------------------------------------------------------
    def get(self, scope: Scope, memory_id: str) -> MemoryRecord:
        self.access.flush()  # read this process's own access updates
        found = self.store.get(scope.user_id, [memory_id])
        if not found:
            raise MemoryNotFound(memory_id)
        return found[0]

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEvent]:
        return self.store.history(scope.user_id, memory_id)

    def search(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 10,
        strategy: Strategy = Strategy.HYBRID,
        threshold: float | None = None,
        where: MemoryFilter | None = None,
        decay_rate: float = scoring.DECAY_RATE,
        query_vectors: QueryVectors | None = None,
        owner_names: tuple[str, ...] | None = None,
    ) -> list[SearchHit]:
        """Rank the scope's memories for `query` as of a time T: `where.as_of`, else `where.recorded_as_of`,
        else the clock.

        What a search at T sees: memories whose event time (`valid_from`, the `created_at` given when
        they were added) is at or before T, that were not yet superseded at T (`valid_to` unset or
        after T) and not expired at T. T is also "now" for the query's date expressions ("last week",
        "two months ago" are resolved against T) and for `time_weighted` recency.

        `query_vectors` (from `query_vectors()`): the query vectors shared by several searches of one
        query, so that each text is embedded once among them. `owner_names`: the user's known names
        (`known_names`) when the caller read them already, else a fused search reads them.
        """
        query = validate_text(query, "query")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise InvalidInput(f"k must be between 1 and {MAX_K}, got {k}")
        where = _scoped(where or MemoryFilter(), scope)
        at = where.current_at(self.clock())
        where = replace(where, as_of=at)
        fused = strategy not in (Strategy.KEYWORD, Strategy.SEMANTIC)
        owner = (known_names(self.store, scope.user_id) if owner_names is None else owner_names) if fused else ()
        about_owner = names_the_user(query[:MAX_READ_QUERY_CHARS], owner)
        # A query naming the user: the keyword side searches without the name (every memory is the user's, and
        # they call the user by the name or "the user"), the vector side with "the user" in its place, and the
        # ranking lifts the memories about the user (`core.retrieval.is_about_user`).
        keywords = without_names(query, user_names_in(query[:MAX_READ_QUERY_CHARS], owner)) if about_owner else query
        query = as_about_user(query, owner) if about_owner else query
        read = query[:MAX_READ_QUERY_CHARS]
        depth = max(k, self.params.depth)
        embed = query_vectors or self.query_vectors()
        semantic, keyword = self._candidates(scope, keywords, strategy, where, depth, embed, vector_text=query)
        windows = _query_windows(read, at, _params_of(strategy, self.params)) if fused else []
        hits = _rank(
            strategy,
            read,
            semantic,
            keyword,
            now=at,
            decay_rate=decay_rate,
            params=self.params,
            named=frozenset(w.casefold() for w in words(read)),
            windows=windows,
            cues=self._time_cues,
            owner=owner if about_owner else None,
        )
        if threshold is not None:
            hits = [h for h in hits if h.score >= threshold]
        hits = hits[:k]
        if self.track_access and hits:
            self.access.record(scope.user_id, [h.memory.id for h in hits], self.clock())
        return hits

    def query_vectors(self) -> QueryVectors:
        """A fresh cache of query vectors of this layer's embedder, for the searches of one query."""
        return QueryVectors(self.embedder)

    def _candidates(
        self,
        scope: Scope,
        query: str,
        strategy: Strategy,
        where: MemoryFilter,
        depth: int,
        embed: QueryVectors,
        *,
        vector_text: str | None = None,
    ) -> tuple[list[ScoredRow], list[ScoredRow]]:
        """`(vector, keyword)` candidates of a search as of `where.as_of`; the vector side searches with
        `vector_text` when given, else with `query`."""
        if strategy is Strategy.KEYWORD:
            return [], self.store.keyword_search(scope.user_id, query, where, limit=depth)
        text = (vector_text if vector_text is not None else query)[:MAX_EMBEDDED_QUERY_CHARS]
        if strategy is Strategy.SEMANTIC:
            return self.store.vector_search(scope.user_id, embed(text), where, limit=depth), []
        params = _params_of(strategy, self.params)
        plain = params.plain_vector_query and params.speaker_boost > 0
        known = self._speakers.get(scope.user_id, frozenset()) if plain else frozenset()
        embedded = _without_speakers(text, known) if plain else text
        vector = embed(embedded)
        semantic, keyword = self.store.hybrid_candidates(scope.user_id, vector, query, where, limit=depth)
        if plain:
            speakers = known | _speakers_of([*keyword, *semantic])
            self._remember_speakers(scope.user_id, speakers)
            wanted = _without_speakers(text, speakers)
            if wanted != embedded:  # the query names a speaker not known before this search
                vector = embed(wanted)
                semantic = self.store.vector_search(scope.user_id, vector, where, limit=depth)
        return semantic, keyword

    def forget_user(self, user_id: str) -> None:
        """Drop what this layer keeps in process about a user (the speakers' names seen in their
        memories, what their texts say about time): called when the user is erased, so no name of theirs
        outlives the erasure here."""
        self._speakers.pop(user_id, None)
        self._time_cues.forget_user(user_id)

    def _remember_speakers(self, user_id: str, speakers: frozenset[str]) -> None:
        """Keep the speakers seen among a user's candidates, so that the next search of that user embeds
        its plain query at once instead of searching the vectors twice."""
        if len(self._speakers) >= _REMEMBERED_USERS and user_id not in self._speakers:
            self._speakers.clear()
        self._speakers[user_id] = speakers


class QueryVectors:
    """Query vectors of one embedder, each distinct text embedded once: what the searches of one query
    share (`context()` searches memories, episodes and procedures with the same query)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vectors: dict[str, Vectors] = {}

    def __call__(self, text: str) -> Vectors:
        vector = self._vectors.get(text)
        if vector is None:
            vector = self._vectors[text] = self.embedder.embed_query(text)
        return vector


def embed_records(embedder: Embedder, records: Sequence[MemoryRecord], context_weight: float) -> Vectors:
    """Embed records as they are stored: `layers.context_vector.with_context` of their content and context
    vectors (one batch each; only the records that have a context are embedded twice)."""
    content = embedder.embed_documents([r.content for r in records])
    has_context = [context_weight > 0 and bool(r.context.strip()) for r in records]
    if not any(has_context):
        return content
    with_ctx = [i for i, has in enumerate(has_context) if has]
    context = np.zeros_like(content)
    context[with_ctx] = embedder.embed_documents([records[i].context for i in with_ctx])
    return with_context(content, context, has_context, context_weight)


def valid_since(record: MemoryRecord) -> datetime:
    """When a memory became true (valid time): its `valid_from`, else its `created_at`."""
    return record.valid_from or record.created_at


_MAX_CHAIN = 1000
"""How many steps back through a chain of replaced memories `add_history` looks for its place."""

_REMEMBERED_USERS = 4096
"""How many users' speakers a semantic layer keeps (`_remember_speakers`); beyond, it starts afresh."""


def _speakers_of(candidates: Sequence[ScoredRow]) -> frozenset[str]:
    return frozenset(s for row in candidates if isinstance(s := row.record.metadata.get("speaker"), str))


def _without_speakers(query: str, speakers: AbstractSet[str]) -> str:
    """The query without the names of `speakers` that it names: the text the vector side searches with when
    the speaker boost ranks by those names."""
    named = named_speakers(query[:MAX_READ_QUERY_CHARS], speakers) if speakers else set()
    return without_names(query, named) if named else query


def _scoped(where: MemoryFilter, scope: Scope) -> MemoryFilter:
    """Narrow a filter to the scope's agent/session when the scope names them."""
    return replace(
        where,
        agent_id=where.agent_id or scope.agent_id,
        session_id=where.session_id or scope.session_id,
    )


CLASSIC_WEIGHTS = HybridParams(vector_weight=0.7, speaker_boost=0.0, time_boost=0.0)
RRF_PARAMS = HybridParams(fusion="rrf", vector_weight=0.5, speaker_boost=0.0, time_boost=0.0)


def _params_of(strategy: Strategy, params: HybridParams) -> HybridParams:
    """The ranking settings a strategy uses: the comparison fusions have their own, the rest the Memory's."""
    return {Strategy.HYBRID_WEIGHTED: CLASSIC_WEIGHTS, Strategy.HYBRID_RRF: RRF_PARAMS}.get(strategy, params)


def _query_windows(query: str, now: datetime, params: HybridParams) -> list[TimeWindow]:
    """The periods the query names, resolved against the search's time (none when the time boost is off)."""
    return read_windows(query, find_dates(query, now, prefer="past", seasons=True), now) if params.time_boost else []


def _rank(
    strategy: Strategy,
    query: str,
    semantic: Sequence[ScoredRow],
    keyword: Sequence[ScoredRow],
    *,
    now: datetime,
    decay_rate: float,
    params: HybridParams,
    named: AbstractSet[str] = frozenset(),
    windows: Sequence[TimeWindow] = (),
    cues: TimeCues | None = None,
    owner: Sequence[str] | None = None,
) -> list[SearchHit]:
    """Order candidates by `strategy`; every hit keeps its raw and normalized component scores.

    `windows` are the periods the query names (`_query_windows`); `cues` the layer's remembered answers
    about what candidates' texts say about time (default: read afresh); `owner` the memory owner's known names
    when the query names the user (its memories about the user then rise)."""
    records = {row.record.id: row.record for row in [*keyword, *semantic]}
    sem = [(r.record.id, r.score) for r in semantic]
    kw = [(r.record.id, r.score) for r in keyword]
    raw: dict[str, dict[str, float]] = {i: {} for i in records}
    for i, score in sem:
        raw[i]["semantic"] = score
    for i, score in kw:
        raw[i]["keyword"] = score
    if strategy in (Strategy.SEMANTIC, Strategy.KEYWORD):
        ordered = [(i, raw[i][strategy.value]) for i, _ in (sem if strategy is Strategy.SEMANTIC else kw)]
        return [SearchHit(records[i], score, {**raw[i], strategy.value: score}) for i, score in ordered]
    chosen = _params_of(strategy, params)
    cues = cues or TimeCues()
    timed = _Lazy(records, cues.states_time)
    facts = CandidateFacts(
        speaker_of={i: _names(records[i], named) for i in records},
        time_of={i: r.created_at for i, r in records.items()},
        session_of={i: r.scope.session_id for i, r in records.items()},
        role_of={i: _text(r.metadata.get("role")) for i, r in records.items()},
        windows=windows,
        periods_of=_Lazy(records, cues.periods) if windows else {},
        timed=timed if chosen.when_boost and asks_when(query) else {},
        about_user={i: is_about_user(r.content, _text(r.metadata.get("role")), owner) for i, r in records.items()}
        if owner is not None
        else {},
        superseded={i: r.valid_to is not None and r.valid_to <= now for i, r in records.items()},
    )
    ranked = hybrid_rank(kw, sem, query=query, params=chosen, facts=facts)
    hits = []
    for hit in ranked:
        scores = {
            **raw[hit.id],
            "keyword_norm": hit.components["keyword"],
            "semantic_norm": hit.components["vector"],
            "boost": hit.components["speaker_boost"],
            "time_match": hit.components["time_match"],
            "hybrid": hit.score,
        }
        score = hit.score
        if strategy is Strategy.TIME_WEIGHTED:
            record = records[hit.id]
            recency = scoring.recency_score(record.last_accessed_at or record.created_at, now, decay_rate=decay_rate)
            relevance = max(raw[hit.id].get("semantic", 0.0), 0.0)  # LangChain's relevance: the similarity
            score = recency + relevance
            scores["recency"] = recency
        scores[strategy.value] = score
        hits.append(SearchHit(records[hit.id], score, scores))
    if strategy is Strategy.TIME_WEIGHTED:
        hits.sort(key=lambda h: -h.score)
    return hits


class _Lazy(Mapping[str, _V]):
    """Per memory id, a value computed from the record on first use (the ranking asks about its best
    candidates only)."""

    def __init__(self, records: Mapping[str, MemoryRecord], compute: Callable[[MemoryRecord], _V]) -> None:
        self._records, self._compute = records, compute
        self._known: dict[str, _V] = {}

    def __getitem__(self, memory_id: str) -> _V:
        if memory_id not in self._known:
            self._known[memory_id] = self._compute(self._records[memory_id])
        return self._known[memory_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _names(record: MemoryRecord, named: AbstractSet[str]) -> str | None:
    """The name that links a memory to the query: its speaker, or an entity the query names."""
    speaker = record.metadata.get("speaker")
    if isinstance(speaker, str):
        return speaker
    linked = record.metadata.get("entities")
    if isinstance(linked, list):
        return next((n for n in linked if isinstance(n, str) and n.casefold() in named), None)
    return None
