"""`context()`: one prompt block assembled from every memory layer, within a token budget.

Parts, in display order (a part is only present when it has something to say):

    profile     "What I know about this user:"  profile facts, then the user context's preferences and facts
    memories    "Relevant memories from past conversations:"  dated hits of a hybrid search over the
                user's memories and, separately, their episodes (or "No relevant past context found.")
    entities    "Relevant people, places and things:"  entities named in the query or the recent turns
    procedures  "Relevant procedures:"  instructions / examples for the task the query describes
    pending     "Pending from last session: a; b"  (user context open items)
    topics      "Last talked about: x, y, z"  (user context last topics)
    summary     "Summary of earlier in this conversation:"  the session's rolling summary
    recent      "Recent conversation:"  the session's last turns

Packing (`core/budget.py`) never exceeds `max_tokens` (counted with the real offline tokenizer of
`core/tokens.py`) and follows `PRIORITY`: the live conversation (recent turns, then the summary) is
packed first, so it survives every budget; when the budget is short, lower-priority parts lose
items, then disappear, first.
The memories part holds the hits `core.context_rank` selects: never filler turns ("Thanks, that's all
for now."), learned facts and preferences before raw turns for a question asking for advice or a plan, plus
a few standing facts about the user (preferences, diet, allergies) however little they share with it; an
advice question keeps only hits scoring at least a share of the best one, so a large budget does not pack
every memory.
Same store state, same query, same budget: same text.
The store reads that wait on nothing but the call (the user context, profile, session state, entities, known
names, which kinds of memory the user has, ...) are asked for together (`context_reads`, `Store.read_many`:
one round trip on PostgreSQL); then each search that can find something is one more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..buffer import Turn
from ..core import context_rank
from ..core.budget import Block, pack
from ..core.text import content_terms
from ..core.tokens import TokenCounter, default_counter
from ..errors import InvalidInput
from ..models import MemoryKind, MemoryRecord, Scope, SearchHit
from ..storage.base import MemoryFilter
from ..storage.fence import expected_generation
from .context_reads import ContextReads, Wanted, read_context
from .conversation import Conversation
from .entities import Entity, mentioned_in
from .procedures import ProceduralMemory
from .profile import ProfileFact
from .semantic import QueryVectors, SemanticMemory, Strategy

PARTS = ("profile", "memories", "entities", "procedures", "pending", "topics", "summary", "recent")
"""Part names in display order (the live conversation last, next to the message it precedes)."""
PRIORITY = ("recent", "summary", "profile", "memories", "entities", "procedures", "pending", "topics")
"""Packing priority (most important first): the live conversation — recent turns, then the rolling
summary — is kept at every budget; long-term parts fill what is left."""
LONG_TERM_PARTS = ("profile", "memories", "entities", "procedures", "pending", "topics")
"""The parts that do not depend on the current session (what an agent puts in its system prompt)."""

PROFILE_HEADER = "What I know about this user:"
MEMORIES_HEADER = "Relevant memories from past conversations:"
NO_MEMORIES = "No relevant past context found."
ENTITIES_HEADER = "Relevant people, places and things:"
PROCEDURES_HEADER = "Relevant procedures:"
PENDING_HEADER = "Pending from last session:"
TOPICS_HEADER = "Last talked about:"
SUMMARY_HEADER = "Summary of earlier in this conversation:"
RECENT_HEADER = "Recent conversation:"

DEFAULT_MAX_TOKENS = 2000
MAX_TOKENS_LIMIT = 1_000_000
MIN_SIMILARITY = 0.3
"""A hit without a shared keyword must have at least this cosine similarity to count as relevant."""
MAX_ENTITIES = 10
_CATEGORY_ORDER = {"identity": 0, "relation": 1, "preference": 2}
STANDING_POOL = 200
"""How many of the user's newest preferences and facts the standing facts of an advice question are chosen from."""
_LONG_TERM_KINDS = tuple(k for k in MemoryKind if k not in (MemoryKind.EPISODE, MemoryKind.PROCEDURE))


@dataclass(frozen=True, slots=True)
class ContextPart:
    name: str
    text: str
    tokens: int
    items: int = 0
    total_items: int = 0


@dataclass(frozen=True, slots=True)
class Context:
    """The assembled block: `text`, its `tokens`, and its `parts` in order. `dropped` names the parts
    that had content but did not fit the budget."""

    text: str
    tokens: int
    max_tokens: int
    parts: tuple[ContextPart, ...] = ()
    dropped: tuple[str, ...] = ()

    def part(self, name: str) -> ContextPart | None:
        return next((p for p in self.parts if p.name == name), None)

    def __str__(self) -> str:
        return self.text


def _one_line(text: str) -> str:
    return " ".join(text.split())


def human_date(when: datetime) -> str:
    """'12 May 2024': unambiguous, and 5 tokens where '2024-05-12' takes 6."""
    return f"{when.day} {when:%B %Y}"


def render_memory(record: MemoryRecord) -> str:
    """'- [12 May 2024] text'; an episode is prefixed with its speaker (or role) unless its text has it."""
    text = _one_line(record.content)
    if record.kind is MemoryKind.EPISODE:
        who = record.metadata.get("speaker") or record.metadata.get("role")
        if who and not text.startswith(f"{who}:"):
            text = f"{who}: {text}"
    return f"- [{human_date(record.created_at)}] {text}"


def render_turn(turn: Turn) -> str:
    return f"{turn.speaker or turn.role}: {_one_line(turn.content)}"


def render_entity(entity: Entity) -> str:
    head = f"- {entity.name} ({entity.type})" if entity.type and entity.type != "other" else f"- {entity.name}"
    details = [_one_line(entity.summary)] if entity.summary else []
    details += [f"{k}: {v}" for k, v in sorted(entity.attributes.items()) if v not in (None, "")]
    return f"{head}: {'; '.join(details)}" if details else head


def is_relevant(hit: SearchHit, min_similarity: float) -> bool:
    return hit.scores.get("keyword", 0.0) > 0.0 or hit.scores.get("semantic", -1.0) >= min_similarity


def _candidate(hit: SearchHit) -> context_rank.Candidate:
    """What the context selection (`core.context_rank`) reads of a search hit."""
    return context_rank.Candidate(
        score=hit.score,
        keyword=hit.scores.get("keyword", 0.0) > 0.0,
        similarity=hit.scores.get("semantic"),
        episode=hit.memory.kind is MemoryKind.EPISODE,
        text=hit.memory.content,
    )


def _standing(record: MemoryRecord) -> context_rank.Standing:
    """What the standing-fact choice (`core.context_rank.standing_facts`) reads of a learned memory."""
    return context_rank.Standing(
        preference=record.kind is MemoryKind.PREFERENCE,
        about_user=record.metadata.get("subject") == "user",
        importance=record.importance,
        created=record.created_at.timestamp(),
        text=record.content,
    )


def merge_hits(groups: Iterable[Sequence[SearchHit]]) -> list[SearchHit]:
    """Hits of several searches in one priority order: score, then list order, then id (stable)."""
    ranked = [(hit, group) for group, hits in enumerate(groups) for hit in hits]
    ranked.sort(key=lambda pair: (-pair[0].score, pair[1], pair[0].memory.id))
    seen: set[str] = set()
    merged = []
    for hit, _ in ranked:
        if hit.memory.id not in seen:
            seen.add(hit.memory.id)
            merged.append(hit)
    return merged


def search_depth(max_tokens: int) -> int:
    """How many hits per search feed the memories part: enough to fill the budget (≈ 25 tokens each)."""
    return max(5, min(100, max_tokens // 25))


class ContextAssembler:
    """Builds `Context` objects from the layers of one store."""

    def __init__(
        self,
        *,
        semantic: SemanticMemory,
        conversation: Conversation,
        procedures: ProceduralMemory,
        counter: TokenCounter | None = None,
        min_similarity: float = MIN_SIMILARITY,
    ) -> None:
        self.semantic = semantic
        self.conversation = conversation
        self.counter = counter or default_counter()
        self.min_similarity = min_similarity
        self.procedures = procedures

    def build(
        self,
        scope: Scope,
        query: str | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        include: Sequence[str] | None = None,
    ) -> Context:
        """Assemble the parts named in `include` (default: all, in `PARTS` priority order)."""
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= MAX_TOKENS_LIMIT:
            raise InvalidInput(f"max_tokens must be an integer between 1 and {MAX_TOKENS_LIMIT}, got {max_tokens!r}")
        names = tuple(include) if include is not None else PARTS
        unknown = [n for n in names if n not in PARTS]
        if unknown:
            raise InvalidInput(f"unknown context part(s) {unknown}; known: {', '.join(PARTS)}")
        query = _one_line(query) if isinstance(query, str) and query.strip() else None
        wanted = set(names)
        found = read_context(self.semantic.store, scope, self._wanted(scope, query, wanted))
        recent = (
            self.conversation.recent_turns(scope, generation=found.generation) if _reads_recent(scope, wanted) else []
        )
        by_priority = sorted(names, key=PRIORITY.index)
        vectors = self.semantic.query_vectors()  # every search of this query shares its embedding
        blocks = [self._block(name, scope, query, recent, found, max_tokens, vectors) for name in by_priority]
        packing = pack(
            [b for b in blocks if b is not None],
            max_tokens,
            self.counter.count_many,
            display=names,
            additive=bool(getattr(self.counter, "additive", False)),  # a counter of the caller's may not say
        )
        parts = tuple(ContextPart(p.name, p.text, p.tokens, p.items, p.total_items) for p in packing.parts)
        return Context(packing.text, packing.tokens, max_tokens, parts, packing.dropped)

    def _wanted(self, scope: Scope, query: str | None, wanted: set[str]) -> Wanted:
        """The reads of `context_reads` the parts in `wanted` need: those each part's layer would make."""
        searching = query is not None and "memories" in wanted
        procedures = query is not None and "procedures" in wanted and bool(content_terms(query))
        has: list[tuple[MemoryKind, ...]] = [_LONG_TERM_KINDS, (MemoryKind.EPISODE,)] if searching else []
        if procedures and scope.agent_id is None:  # agent-wide procedures live under a reserved scope
            has.append((MemoryKind.PROCEDURE,))
        advice = searching and query is not None and context_rank.asks_for_advice(query)
        return Wanted(
            generation=_reads_recent(scope, wanted) and expected_generation(scope.user_id) is None,
            about=bool({"profile", "pending", "topics"} & wanted),
            profile="profile" in wanted,
            session=scope.session_id is not None and "summary" in wanted,
            entities="entities" in wanted,
            names=searching or procedures,
            has=tuple(has),
            standing=STANDING_POOL if advice else 0,
        )

    def _block(
        self,
        name: str,
        scope: Scope,
        query: str | None,
        recent: list[Turn],
        found: ContextReads,
        budget: int,
        vectors: QueryVectors,
    ) -> Block | None:
        about = found.about or {}
        if name == "profile":
            return Block("profile", PROFILE_HEADER, self._profile_lines(found.profile, about))
        if name == "memories":
            if query is None:
                return None
            hits = self._memory_hits(scope, query, search_depth(budget), {t.id for t in recent}, vectors, found)
            return Block(
                "memories",
                MEMORIES_HEADER,
                [render_memory(h.memory) for h in hits],
                empty=NO_MEMORIES,
                order=[h.memory.created_at.timestamp() for h in hits],
            )
        if name == "entities":
            text = " ".join([query or "", *(t.content for t in recent)])
            return Block(
                "entities", ENTITIES_HEADER, [render_entity(e) for e in _entities(found.entities, query, text)]
            )
        if name == "procedures":
            return (
                Block("procedures", PROCEDURES_HEADER, self._procedure_lines(scope, query, vectors, found))
                if query
                else None
            )
        if name == "pending":
            items = [_one_line(str(i)) for i in about.get("open_items") or []]
            return Block("pending", PENDING_HEADER, items, separator="; ", inline=True)
        if name == "topics":
            topics = [_one_line(str(t)) for t in about.get("last_topics") or []]
            return Block("topics", TOPICS_HEADER, topics, separator=", ", inline=True)
        if scope.session_id is None:
            return None
        if name == "summary":
            lines = [line for line in found.session.summary.splitlines() if line.strip()]
            return Block("summary", SUMMARY_HEADER, lines, keep="last", truncate=True)
        return Block(
            "recent",
            RECENT_HEADER,
            [render_turn(t) for t in recent],
            keep="last",
            contiguous=True,
            truncate=True,
        )

    def _profile_lines(self, profile: Sequence[ProfileFact], context: dict[str, Any]) -> list[str]:
        facts = sorted(
            profile,
            key=lambda f: (_CATEGORY_ORDER.get(f.category, 9), f.category, f.key != "name", f.key),
        )
        lines = [f"- {f.key.replace('_', ' ')}: {_one_line(f.value)}" for f in facts]
        known = {f.key for f in facts}
        preferences = context.get("preferences") or {}
        lines += [f"- {k}: {_one_line(str(v))}" for k, v in sorted(preferences.items()) if k not in known]
        lines += [f"- {_one_line(str(fact))}" for fact in reversed(context.get("facts") or [])]
        return list(dict.fromkeys(lines))

    def _memory_hits(
        self, scope: Scope, query: str, k: int, exclude: set[str], vectors: QueryVectors, found: ContextReads
    ) -> list[SearchHit]:
        target = Scope(scope.user_id, agent_id=scope.agent_id)
        groups = []
        for kinds in (_LONG_TERM_KINDS, (MemoryKind.EPISODE,)):
            if kinds not in found.has:  # a lookup is far cheaper than a search that finds nothing
                continue
            where = MemoryFilter(kinds=kinds)
            hits = self.semantic.search(
                target,
                query,
                k=k,
                strategy=Strategy.HYBRID,
                where=where,
                query_vectors=vectors,
                owner_names=found.names,
            )
            groups.append([h for h in hits if h.memory.id not in exclude])
        merged = merge_hits(groups)
        advice = context_rank.asks_for_advice(query)
        chosen = [
            merged[i] for i in context_rank.select([_candidate(h) for h in merged], self.min_similarity, advice=advice)
        ]
        return chosen + _standing_facts(found.standing, {h.memory.id for h in chosen}) if advice else chosen

    def _procedure_lines(self, scope: Scope, query: str, vectors: QueryVectors, found: ContextReads) -> list[str]:
        wanted = set(content_terms(query))
        if not wanted:
            return []
        # agent-wide procedures live under a reserved scope: only a scope without an agent can skip early
        if scope.agent_id is None and (MemoryKind.PROCEDURE,) not in found.has:
            return []
        procedures = self.procedures.for_task(scope, query, k=3, query_vectors=vectors, owner_names=found.names)
        return [p.render() for p in procedures if wanted & set(content_terms(p.memory.content))]


def _reads_recent(scope: Scope, wanted: set[str]) -> bool:
    """Whether the parts in `wanted` read the session's recent turns (shown, or mined for entities and
    excluded from the memories)."""
    return bool(scope.session_id) and bool({"recent", "entities", "memories"} & wanted)


def _standing_facts(learned: Sequence[MemoryRecord], chosen: set[str]) -> list[SearchHit]:
    """The user's standing facts (`context_rank.standing_facts`) an advice question brings, after its hits:
    chosen from `learned`, the user's newest preferences and facts (`STANDING_POOL`)."""
    fresh = [r for r in learned if r.id not in chosen]
    picked = context_rank.standing_facts([_standing(r) for r in fresh])
    return [SearchHit(memory=fresh[i], score=0.0, scores={"standing": 1.0}) for i in picked]


def _entities(known: Sequence[Entity], query: str | None, text: str) -> list[Entity]:
    """The entities `text` names (the query's first), from the user's entities (read once for both texts)."""
    mentioned = mentioned_in(text, known)
    in_query = {e.key for e in mentioned_in(query, known)} if query else set()
    return sorted(mentioned, key=lambda e: (e.key not in in_query, -e.mention_count, e.key))[:MAX_ENTITIES]


__all__ = [
    "LONG_TERM_PARTS",
    "NO_MEMORIES",
    "PARTS",
    "PRIORITY",
    "Context",
    "ContextAssembler",
    "ContextPart",
    "render_memory",
]
