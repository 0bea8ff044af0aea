"""Procedural memory: instructions and few-shot examples, retrieved by similarity to the current task.

Procedures are memories of kind PROCEDURE. They belong to a user (optionally narrowed to an agent),
or to an agent as a whole ("global for an agent": stored under a reserved scope no user can address).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import InvalidInput
from ..models import MemoryKind, MemoryRecord, Scope, SearchHit, reserved_scope
from ..storage.base import MemoryFilter
from .semantic import NewMemory, QueryVectors, SemanticMemory, Strategy

ProcedureType = Literal["instruction", "example"]


def agent_scope(agent_id: str) -> Scope:
    """The reserved scope holding an agent's procedures shared by all its users."""
    return reserved_scope(f"agent.{agent_id}", agent_id=agent_id)


@dataclass(frozen=True, slots=True)
class Procedure:
    memory: MemoryRecord

    @property
    def type(self) -> str:
        return str(self.memory.metadata.get("procedure_type", "instruction"))

    @property
    def task(self) -> str:
        return str(self.memory.metadata.get("task", ""))

    def render(self) -> str:
        meta = self.memory.metadata
        if self.type == "example":
            return f"Example ({self.task}):\nInput: {meta.get('input', '')}\nOutput: {meta.get('output', '')}"
        return f"- {self.memory.content}"


def procedure_text(
    task: str, type_: ProcedureType, instruction: str | None, example_input: str | None, example_output: str | None
) -> tuple[str, dict[str, str]]:
    """The text to index and the metadata of a procedure (pure)."""
    if type_ == "instruction":
        if not instruction:
            raise InvalidInput("an instruction procedure needs `instruction` text")
        return f"{task}: {instruction}", {"procedure_type": "instruction", "task": task}
    if type_ == "example":
        if not example_input or not example_output:
            raise InvalidInput("an example procedure needs `example_input` and `example_output`")
        return (
            f"{task}: {example_input}",
            {"procedure_type": "example", "task": task, "input": example_input, "output": example_output},
        )
    raise InvalidInput(f"unknown procedure type {type_!r}; use 'instruction' or 'example'")


class ProceduralMemory:
    def __init__(self, *, semantic: SemanticMemory) -> None:
        self.semantic = semantic

    def add(
        self,
        scope: Scope,
        task: str,
        *,
        instruction: str | None = None,
        example_input: str | None = None,
        example_output: str | None = None,
        agent_wide: bool = False,
    ) -> Procedure:
        if not task or not task.strip():
            raise InvalidInput("procedure task is empty")
        type_: ProcedureType = "example" if example_input is not None or example_output is not None else "instruction"
        text, metadata = procedure_text(task.strip(), type_, instruction, example_input, example_output)
        target = self._target(scope, agent_wide)
        [record] = self.semantic.add_many(target, [NewMemory(text, kind=MemoryKind.PROCEDURE, metadata=metadata)])
        return Procedure(record)

    def _target(self, scope: Scope, agent_wide: bool) -> Scope:
        if not agent_wide:
            return Scope(scope.user_id, agent_id=scope.agent_id)
        if scope.agent_id is None:
            raise InvalidInput("an agent-wide procedure needs a scope with an agent_id")
        return agent_scope(scope.agent_id)

    def for_task(
        self,
        scope: Scope,
        task: str,
        *,
        k: int = 3,
        query_vectors: QueryVectors | None = None,
        owner_names: tuple[str, ...] | None = None,
    ) -> list[Procedure]:
        """The k procedures most similar to `task`: the user's own and, when the scope names an agent,
        the agent-wide ones (user's first on ties). `query_vectors`: see `SemanticMemory.search`;
        `owner_names`: the user's known names, as there (the agent-wide search reads its own)."""
        where = MemoryFilter(kinds=(MemoryKind.PROCEDURE,))
        embed = query_vectors or self.semantic.query_vectors()
        targets = [Scope(scope.user_id, agent_id=scope.agent_id)]
        if scope.agent_id is not None:
            targets.append(agent_scope(scope.agent_id))
        hits: list[SearchHit] = []
        for target in targets:
            names = owner_names if target.user_id == scope.user_id else None
            hits += self.semantic.search(
                target,
                task,
                k=k,
                strategy=Strategy.HYBRID_WEIGHTED,
                where=where,
                query_vectors=embed,
                owner_names=names,
            )
        hits.sort(key=lambda h: -h.score)
        return [Procedure(h.memory) for h in hits[:k]]

    def all(self, scope: Scope, *, agent_wide: bool = False, limit: int = 100) -> list[Procedure]:
        target = self._target(scope, agent_wide)
        records = self.semantic.store.list_memories(
            target.user_id, MemoryFilter(kinds=(MemoryKind.PROCEDURE,), agent_id=target.agent_id), limit=limit
        )
        return [Procedure(r) for r in records]
