"""`Memory` methods for profile facts, entities and procedures (delegation only)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from .layers.entities import Entity, EntityMemory
from .layers.procedures import ProceduralMemory, Procedure
from .layers.profile import ProfileFact, ProfileMemory
from .models import ScopeLike, as_scope

if TYPE_CHECKING:
    from .layers.semantic import Clock, SemanticMemory
    from .storage.base import Store


class KnowledgeAPI:
    """Mixin of `Memory`: declares the attributes it relies on, which `Memory.__init__` sets."""

    store: Store
    semantic: SemanticMemory
    clock: Clock

    @cached_property
    def profiles(self) -> ProfileMemory:
        return ProfileMemory(store=self.store, clock=self.clock)

    @cached_property
    def entity_memory(self) -> EntityMemory:
        return EntityMemory(store=self.store, clock=self.clock)

    @cached_property
    def procedural(self) -> ProceduralMemory:
        return ProceduralMemory(semantic=self.semantic)

    # -- profile -------------------------------------------------------------
    def set_fact(
        self, category: str, key: str, value: str, *, scope: ScopeLike, source: str | None = None
    ) -> ProfileFact:
        """Upsert a profile fact; the value it replaces is kept in the fact's `previous` list."""
        return self.profiles.set_fact(as_scope(scope).user_id, category, key, value, source=source)

    def facts(self, *, scope: ScopeLike, category: str | None = None) -> list[ProfileFact]:
        return self.profiles.facts(as_scope(scope).user_id, category)

    def delete_fact(self, category: str, key: str, *, scope: ScopeLike) -> bool:
        return self.profiles.delete_fact(as_scope(scope).user_id, category, key)

    # -- entities ------------------------------------------------------------
    def upsert_entity(self, name: str, *, scope: ScopeLike, **fields: Any) -> Entity:
        return self.entity_memory.upsert(as_scope(scope).user_id, name, **fields)

    def entities(self, *, scope: ScopeLike) -> list[Entity]:
        return self.entity_memory.all(as_scope(scope).user_id)

    def entity(self, name: str, *, scope: ScopeLike) -> Entity:
        return self.entity_memory.get(as_scope(scope).user_id, name)

    # -- procedures ----------------------------------------------------------
    def add_procedure(
        self,
        task: str,
        *,
        scope: ScopeLike,
        instruction: str | None = None,
        example_input: str | None = None,
        example_output: str | None = None,
        agent_wide: bool = False,
    ) -> Procedure:
        """Store an instruction or a few-shot example for a task (per user/agent, or agent-wide)."""
        return self.procedural.add(
            as_scope(scope), task, instruction=instruction, example_input=example_input,
            example_output=example_output, agent_wide=agent_wide,
        )  # fmt: skip

    def procedures(self, task: str, *, scope: ScopeLike, k: int = 3) -> list[Procedure]:
        return self.procedural.for_task(as_scope(scope), task, k=k)
