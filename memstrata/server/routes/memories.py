"""Memories of one user: add, list, get, update, supersede, forget, history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from ...errors import MemoryNotFound
from ...export_format import MemoryJSON
from ..deps import MemoryDep, Reader, Writer
from ..routing import ShapedRoute
from ..schemas import (
    ERROR_RESPONSES,
    AddMemoryRequest,
    ForgetResult,
    HistoryEventOut,
    ListQuery,
    MemoryPage,
    PathId,
    SupersedeRequest,
    UpdateMemoryRequest,
    api_ids,
    memory_out,
)

router = APIRouter(
    prefix="/v1/users/{user_id}/memories", tags=["memories"], responses=ERROR_RESPONSES, route_class=ShapedRoute
)


@router.post("", status_code=status.HTTP_201_CREATED, summary="Store a memory verbatim")
def add_memory(user_id: PathId, body: AddMemoryRequest, caller: Writer, memory: MemoryDep) -> MemoryJSON:
    scope = caller.scope(user_id, agent_id=body.agent_id, session_id=body.session_id, claimed=body.claimed_users())
    record = memory.add(
        body.content,
        scope=scope,
        kind=body.kind,
        metadata=body.metadata,
        importance=body.importance,
        source_ids=body.source_ids,
        expires_at=body.expires_at,
        pinned=body.pinned,
    )
    return memory_out(record, caller.tenant)


@router.get("", summary="List memories, newest first")
def list_memories(
    user_id: PathId, query: Annotated[ListQuery, Query()], caller: Reader, memory: MemoryDep
) -> MemoryPage:
    scope = caller.scope(user_id, agent_id=query.agent_id, session_id=query.session_id)
    limit, offset = query.limit, query.offset
    records = memory.list(scope=scope, filters=query.search_filter(), limit=limit + 1, offset=offset)
    return MemoryPage.page(records, limit=limit, offset=offset, rename=api_ids(caller.tenant))


@router.get("/{memory_id}", summary="Get one memory")
def get_memory(user_id: PathId, memory_id: PathId, caller: Reader, memory: MemoryDep) -> MemoryJSON:
    return memory_out(memory.get(memory_id, scope=caller.scope(user_id)), caller.tenant)


@router.patch("/{memory_id}", summary="Change a memory in place (its history keeps the old text)")
def update_memory(
    user_id: PathId, memory_id: PathId, body: UpdateMemoryRequest, caller: Writer, memory: MemoryDep
) -> MemoryJSON:
    scope = caller.scope(user_id, claimed=body.claimed_users())
    record = memory.update(
        memory_id,
        scope=scope,
        content=body.content,
        metadata=body.metadata,
        importance=body.importance,
        expires_at=body.expires_at,
        pinned=body.pinned,
    )
    return memory_out(record, caller.tenant)


@router.post(
    "/{memory_id}/supersede",
    status_code=status.HTTP_201_CREATED,
    summary="Replace an outdated memory; the old one keeps valid_to and a link to its successor",
)
def supersede_memory(
    user_id: PathId, memory_id: PathId, body: SupersedeRequest, caller: Writer, memory: MemoryDep
) -> MemoryJSON:
    record = memory.supersede(memory_id, body.content, scope=caller.scope(user_id), reason=body.reason)
    return memory_out(record, caller.tenant)


@router.delete("/{memory_id}", summary="Forget a memory: delete it and scrub its text from history")
def forget_memory(user_id: PathId, memory_id: PathId, caller: Writer, memory: MemoryDep) -> ForgetResult:
    forgotten = memory.forget(memory_id, scope=caller.scope(user_id))
    if not forgotten:
        raise MemoryNotFound(memory_id)
    return ForgetResult(id=memory_id, forgotten=True)


@router.get("/{memory_id}/history", summary="Every change of a memory, oldest first")
def memory_history(user_id: PathId, memory_id: PathId, caller: Reader, memory: MemoryDep) -> list[HistoryEventOut]:
    return [HistoryEventOut.of(e) for e in memory.history(memory_id, scope=caller.scope(user_id))]
