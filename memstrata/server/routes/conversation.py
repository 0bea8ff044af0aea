"""Sessions (messages, recent turns, end), the user context object, and the assembled prompt context."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from ..deps import MemoryDep, Reader, Writer
from ..routing import ShapedRoute
from ..schemas import (
    ERROR_RESPONSES,
    AddMessagesRequest,
    ContextOut,
    ContextRequest,
    EndSessionOut,
    EndSessionRequest,
    PathId,
    SessionOut,
    TurnOut,
    UserContextOut,
)

router = APIRouter(prefix="/v1/users/{user_id}", responses=ERROR_RESPONSES, route_class=ShapedRoute)


def _user_context(value: dict[str, Any], user_id: str) -> UserContextOut:
    return UserContextOut(**{**value, "user_id": user_id})


@router.post(
    "/sessions/{session_id}/messages",
    tags=["sessions"],
    status_code=201,
    summary="Append messages to a session",
)
def add_messages(
    user_id: PathId, session_id: PathId, body: AddMessagesRequest, caller: Writer, memory: MemoryDep
) -> list[TurnOut]:
    scope = caller.scope(user_id, agent_id=body.agent_id, session_id=session_id)
    return [TurnOut.of(t) for t in memory.add_messages([m.to_dict() for m in body.messages], scope=scope)]


class SessionListItem(BaseModel):
    session_id: str
    episodes: int = Field(description="the session's current episodes (messages in the episode log)")
    first_at: datetime = Field(description="when its first episode was written")
    last_at: datetime = Field(description="when its last episode was written")


class SessionPage(BaseModel):
    items: list[SessionListItem]
    next_offset: int | None = Field(description="pass as `offset` to get the next page; null on the last page")


@router.get("/sessions", tags=["sessions"], summary="The user's sessions, most recently active first")
def list_sessions(
    user_id: PathId,
    caller: Reader,
    memory: MemoryDep,
    limit: Annotated[int, Query(ge=1, le=500, description="sessions per page")] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000, description="sessions to skip")] = 0,
) -> SessionPage:
    """Every session of the user's episode log, with its episode count and first/last times, from one
    grouped query (not from a page of episodes): a user with many episodes still sees every session."""
    scope = caller.scope(user_id)
    rows = memory.store.list_sessions(scope.user_id, limit=limit + 1, offset=offset)
    items = [
        SessionListItem(session_id=r.session_id, episodes=r.episodes, first_at=r.first_at, last_at=r.last_at)
        for r in rows[:limit]
    ]
    return SessionPage(items=items, next_offset=offset + limit if len(rows) > limit else None)


@router.get("/sessions/{session_id}", tags=["sessions"], summary="A session's recent turns and rolling summary")
def get_session(
    user_id: PathId,
    session_id: PathId,
    caller: Reader,
    memory: MemoryDep,
    n: Annotated[int | None, Query(ge=1, le=500, description="how many turns (default: the window)")] = None,
) -> SessionOut:
    scope = caller.scope(user_id, session_id=session_id)
    turns = memory.recent_turns(n, scope=scope)
    return SessionOut(turns=[TurnOut.of(t) for t in turns], summary=memory.session_summary(scope=scope))


@router.post(
    "/sessions/{session_id}/end",
    tags=["sessions"],
    summary="End a session; update the user context",
    responses={202: {"model": EndSessionOut, "description": "Queued (background=true)"}},
)
def end_session(
    user_id: PathId,
    session_id: PathId,
    body: EndSessionRequest,
    caller: Writer,
    memory: MemoryDep,
    response: Response,
) -> EndSessionOut:
    scope = caller.scope(user_id, agent_id=body.agent_id, session_id=session_id)
    if body.background:
        memory.end_session(background=True, scope=scope)
        response.status_code = 202
        return EndSessionOut(status="queued", user_context=None)
    updated = memory.end_session(scope=scope)
    assert isinstance(updated, dict)
    return EndSessionOut(status="ended", user_context=_user_context(updated, user_id))


@router.delete("/sessions/{session_id}", tags=["sessions"], status_code=204, summary="Clear a session's buffer")
def clear_session(user_id: PathId, session_id: PathId, caller: Writer, memory: MemoryDep) -> None:
    memory.clear_session(scope=caller.scope(user_id, session_id=session_id))


@router.get("/profile", tags=["profile"], summary="The user context object (updated when a session ends)")
def user_context(user_id: PathId, caller: Reader, memory: MemoryDep) -> UserContextOut:
    return _user_context(memory.user_context(scope=caller.scope(user_id)), user_id)


@router.post("/context", tags=["context"], summary="The prompt block from every layer, within a token budget")
def context(user_id: PathId, body: ContextRequest, caller: Reader, memory: MemoryDep) -> ContextOut:
    scope = caller.scope(user_id, agent_id=body.agent_id, session_id=body.session_id)
    return ContextOut.of(memory.context(body.query, body.max_tokens, include=body.include, scope=scope))
