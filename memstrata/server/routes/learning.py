"""Learning from messages (extraction → resolution → entities/profile), now or on the durable queue."""

from __future__ import annotations

from fastapi import APIRouter, Response

from ..deps import MemoryDep, Reader, Writer
from ..routing import ShapedRoute
from ..schemas import (
    ERROR_RESPONSES,
    LearnRequest,
    LearnResponse,
    OperationOut,
    PathId,
    QueueFailure,
    QueueStatusOut,
    memory_out,
)
from ..tenancy import api_id, store_user_id
from .users import tenant_store_ids

router = APIRouter(tags=["learning"], responses=ERROR_RESPONSES, route_class=ShapedRoute)


@router.post(
    "/v1/users/{user_id}/learn", summary="Learn durable memories from messages (extract, resolve, store)",
    responses={202: {"model": LearnResponse, "description": "Queued (background=true): see job_id"}},
)  # fmt: skip
def learn(user_id: PathId, body: LearnRequest, caller: Writer, memory: MemoryDep, response: Response) -> LearnResponse:
    scope = caller.scope(user_id, agent_id=body.agent_id, session_id=body.session_id)
    messages = [m.to_dict() for m in body.messages]
    if body.background:
        response.status_code = 202
        return LearnResponse(operations=[], job_id=memory.learn_later(messages, scope=scope))
    result = memory.learn(messages, scope=scope, known_name=body.known_name, source_ids=body.source_ids)
    return LearnResponse(
        operations=[
            OperationOut(
                event=str(op.event.value),
                memory=memory_out(op.memory, caller.tenant),
                replaced_ids=list(op.replaced_ids),
                reason=op.reason,
            )  # fmt: skip
            for op in result.operations
        ],
        extractor=result.extractor,
        fallback_reason=result.fallback_reason,
    )


@router.get("/v1/queue", summary="Background queue: job counts and failures (this tenant, or the key's user)")
def queue_status(caller: Reader, memory: MemoryDep) -> QueueStatusOut:
    if caller.user is not None:
        users = [store_user_id(caller.tenant, caller.user)]
    else:
        users = tenant_store_ids(memory, caller.tenant)
    status = memory.queue_status(users=users)
    failures = [
        QueueFailure(
            id=str(f["id"]),
            user_id=api_id(caller.tenant, f.get("user_id")),
            status=str(f["status"]),
            attempts=int(f.get("attempts", 0)),
            error=f.get("error"),
            created_at=f.get("created_at"),
        )  # fmt: skip
        for f in status.failures
    ]
    return QueueStatusOut(counts=status.counts, failures=failures)
