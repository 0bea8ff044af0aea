"""Learning from messages (extraction → resolution → entities/profile), now or on the durable queue."""

from __future__ import annotations

from fastapi import APIRouter, Response

from ...shapes import JobStatusJSON
from ..deps import MemoryDep, Reader, Writer
from ..routing import ShapedRoute
from ..schemas import (
    ERROR_RESPONSES,
    LearnRequest,
    LearnResponse,
    PathId,
    QueueStatusOut,
    api_ids,
)
from ..tenancy import store_user_id
from .users import tenant_store_ids

router = APIRouter(tags=["learning"], responses=ERROR_RESPONSES, route_class=ShapedRoute)


@router.post(
    "/v1/users/{user_id}/learn",
    summary="Learn durable memories from messages (extract, resolve, store)",
    responses={202: {"model": LearnResponse, "description": "Queued (background=true): see job_id"}},
)
def learn(user_id: PathId, body: LearnRequest, caller: Writer, memory: MemoryDep, response: Response) -> LearnResponse:
    scope = caller.scope(user_id, agent_id=body.agent_id, session_id=body.session_id)
    messages = [m.to_dict() for m in body.messages]
    if body.background:
        response.status_code = 202
        return LearnResponse(operations=[], job_id=memory.learn_later(messages, scope=scope))
    result = memory.learn(messages, scope=scope, known_name=body.known_name, source_ids=body.source_ids)
    return LearnResponse.of(result, api_ids(caller.tenant))


@router.get("/v1/queue", summary="Background queue: job counts and failures (this tenant, or the key's user)")
def queue_status(caller: Reader, memory: MemoryDep) -> QueueStatusOut:
    if caller.user is not None:
        users = [store_user_id(caller.tenant, caller.user)]
    else:
        users = tenant_store_ids(memory, caller.tenant)
    status = memory.queue_status(users=users)
    return QueueStatusOut.of(status, api_ids(caller.tenant))


@router.get(
    "/v1/users/{user_id}/jobs/{job_id}",
    summary="One queued job (learn background=true's job_id): pending, done, failed, or expired after the retention",
)
def job_status(user_id: PathId, job_id: PathId, caller: Reader, memory: MemoryDep) -> JobStatusJSON:
    return JobStatusJSON.of(memory.job_status(job_id, scope=caller.scope(user_id)))
