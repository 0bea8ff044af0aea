"""Profile facts, entities and procedures of one user."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ...errors import NotFound
from ..deps import MemoryDep, Reader, Writer
from ..routing import ShapedRoute
from ..schemas import (
    ERROR_RESPONSES,
    ID_PATTERN,
    AddProcedureRequest,
    EntitiesResponse,
    EntityName,
    EntityOut,
    FactName,
    FactOut,
    FactsResponse,
    PathId,
    ProcedureOut,
    ProceduresResponse,
    SetFactRequest,
    UpsertEntityRequest,
    api_ids,
)

router = APIRouter(prefix="/v1/users/{user_id}", responses=ERROR_RESPONSES, route_class=ShapedRoute)

Name = Annotated[str, Query(min_length=1, max_length=64)]


# -- profile facts ------------------------------------------------------------
@router.get("/profile/facts", tags=["profile"], summary="Profile facts (key/value by category)")
def list_facts(
    user_id: PathId,
    caller: Reader,
    memory: MemoryDep,
    category: Annotated[str | None, Query(max_length=64)] = None,
) -> FactsResponse:
    return FactsResponse(facts=[FactOut.of(f) for f in memory.facts(scope=caller.scope(user_id), category=category)])


@router.put("/profile/facts/{category}/{key}", tags=["profile"], summary="Set a profile fact (keeps the old value)")
def set_fact(
    user_id: PathId, category: FactName, key: FactName, body: SetFactRequest, caller: Writer, memory: MemoryDep
) -> FactOut:
    fact = memory.set_fact(category, key, body.value, scope=caller.scope(user_id), source=body.source)
    return FactOut.of(fact)


@router.delete("/profile/facts/{category}/{key}", tags=["profile"], status_code=204, summary="Delete a profile fact")
def delete_fact(user_id: PathId, category: FactName, key: FactName, caller: Writer, memory: MemoryDep) -> None:
    if not memory.delete_fact(category, key, scope=caller.scope(user_id)):
        raise NotFound(f"profile fact {category}/{key} not found")


# -- entities -----------------------------------------------------------------
@router.get("/entities", tags=["entities"], summary="Entities the user mentioned")
def list_entities(user_id: PathId, caller: Reader, memory: MemoryDep) -> EntitiesResponse:
    return EntitiesResponse(entities=[EntityOut.of(e) for e in memory.entities(scope=caller.scope(user_id))])


@router.get("/entities/{name}", tags=["entities"], summary="One entity by (any spelling of) its name")
def get_entity(user_id: PathId, name: EntityName, caller: Reader, memory: MemoryDep) -> EntityOut:
    return EntityOut.of(memory.entity(name, scope=caller.scope(user_id)))


@router.put("/entities/{name}", tags=["entities"], summary="Create or merge an entity")
def upsert_entity(
    user_id: PathId, name: EntityName, body: UpsertEntityRequest, caller: Writer, memory: MemoryDep
) -> EntityOut:
    entity = memory.upsert_entity(
        name,
        scope=caller.scope(user_id),
        type=body.type,
        summary=body.summary,
        attributes=body.attributes,
        aliases=body.aliases,
        memory_id=body.memory_id,
    )
    return EntityOut.of(entity)


# -- procedures ---------------------------------------------------------------
@router.post("/procedures", tags=["procedures"], status_code=201, summary="Store an instruction or a few-shot example")
def add_procedure(user_id: PathId, body: AddProcedureRequest, caller: Writer, memory: MemoryDep) -> ProcedureOut:
    if body.agent_wide:
        caller.require_admin()
    procedure = memory.add_procedure(
        body.task,
        scope=caller.scope(user_id, agent_id=body.agent_id),
        instruction=body.instruction,
        example_input=body.example_input,
        example_output=body.example_output,
        agent_wide=body.agent_wide,
    )
    return ProcedureOut.of(procedure, api_ids(caller.tenant))


@router.get("/procedures", tags=["procedures"], summary="The procedures most similar to a task")
def find_procedures(
    user_id: PathId,
    caller: Reader,
    memory: MemoryDep,
    task: Annotated[str, Query(min_length=1, max_length=500)],
    agent_id: Annotated[str | None, Query(min_length=1, max_length=128, pattern=ID_PATTERN)] = None,
    k: Annotated[int, Query(ge=1, le=50)] = 3,
) -> ProceduresResponse:
    found = memory.procedures(task, scope=caller.scope(user_id, agent_id=agent_id), k=k)
    return ProceduresResponse(procedures=[ProcedureOut.of(p, api_ids(caller.tenant)) for p in found])
