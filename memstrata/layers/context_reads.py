"""The store reads of one `context()` call that wait on nothing but the call itself, asked for at once.

Before it searches, `ContextAssembler.build` needs: the user's erasure generation (whether this process's
buffered turns still hold), the user context object, the profile facts, the session's state (its rolling
summary), the entities, the user's known names (what a query may call the user), whether the user has any
long-term memories, episodes and procedures (a look-up is far cheaper than a search that finds nothing),
and for an advice question the pool its standing facts are chosen from. `Store.read_many` answers them
together, from one snapshot: on PostgreSQL one round trip where each layer reading its own took one each.
What is read follows the parts asked for, as when each layer read its own; each answer is turned into what
the layer's own read returns by the layer's pure function (`context_of`, `facts_of`, `state_of`, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models import MemoryKind, MemoryRecord, Scope
from ..storage.base import GenerationRead, MemoriesRead, MemoryFilter, Read, Store
from .conversation import SessionState, state_of, state_read
from .entities import ENTITIES_READ, Entity, entities_of
from .known_names import NAME_READ, names_of
from .profile import FACTS_READ, ProfileFact, facts_of
from .user_context import CONTEXT_READ, context_of

Kinds = tuple[MemoryKind, ...]


@dataclass(frozen=True, slots=True)
class Wanted:
    """Which reads one context call needs (see the module docstring)."""

    generation: bool = False
    about: bool = False
    profile: bool = False
    session: bool = False
    entities: bool = False
    names: bool = False
    has: tuple[Kinds, ...] = ()
    """Kinds of memory to look for one current memory of (in the scope's agent)."""
    standing: int = 0
    """How many of the newest preferences and facts to read (0: none)."""


@dataclass(frozen=True, slots=True)
class ContextReads:
    """What the reads found; a field not asked for holds its empty value (`generation` None; `session` a fresh
    state, as before the first write)."""

    generation: int | None = None
    about: dict[str, Any] | None = None
    profile: tuple[ProfileFact, ...] = ()
    session: SessionState = field(default_factory=SessionState)
    entities: tuple[Entity, ...] = ()
    names: tuple[str, ...] | None = None
    has: frozenset[Kinds] = frozenset()
    """The kinds of `Wanted.has` the user has a current memory of."""
    standing: tuple[MemoryRecord, ...] = ()


def read_context(store: Store, scope: Scope, wanted: Wanted) -> ContextReads:
    """Ask `store` for the reads of `wanted` in one `read_many`."""
    user_id = scope.user_id
    named: dict[str, Read] = {}
    if wanted.generation:
        named["generation"] = GenerationRead()
    if wanted.about:
        named["about"] = CONTEXT_READ
    if wanted.profile:
        named["profile"] = FACTS_READ
    if wanted.session:
        named["session"] = state_read(scope)
    if wanted.entities:
        named["entities"] = ENTITIES_READ
    if wanted.names:
        named["names"] = NAME_READ
    checks = {kinds: MemoriesRead(MemoryFilter(kinds=kinds, agent_id=scope.agent_id), limit=1) for kinds in wanted.has}
    if wanted.standing:
        where = MemoryFilter(kinds=(MemoryKind.PREFERENCE, MemoryKind.FACT), agent_id=scope.agent_id)
        named["standing"] = MemoriesRead(where, limit=wanted.standing)
    reads: Sequence[Read] = [*named.values(), *checks.values()]
    answers = dict(zip([*named, *checks], store.read_many(user_id, reads) if reads else [], strict=True))
    return ContextReads(
        generation=answers.get("generation"),
        about=context_of(user_id, answers["about"]) if wanted.about else None,
        profile=tuple(facts_of(answers["profile"])) if wanted.profile else (),
        session=state_of(answers["session"]) if wanted.session else SessionState(),
        entities=tuple(entities_of(answers["entities"])) if wanted.entities else (),
        names=names_of(answers["names"]) if wanted.names else None,
        has=frozenset(kinds for kinds in checks if answers[kinds]),
        standing=tuple(answers.get("standing", ())),
    )


__all__ = ["ContextReads", "Wanted", "read_context"]
