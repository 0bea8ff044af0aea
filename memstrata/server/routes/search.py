"""Search a user's memories; every hit carries its component scores."""

from __future__ import annotations

from fastapi import APIRouter

from ..deps import MemoryDep, Reader
from ..routing import ShapedRoute
from ..schemas import ERROR_RESPONSES, PathId, SearchHitOut, SearchRequest, SearchResponse, api_ids

router = APIRouter(prefix="/v1/users/{user_id}", tags=["search"], responses=ERROR_RESPONSES, route_class=ShapedRoute)


@router.post("/search", summary="Search memories (semantic, keyword, hybrid, time-weighted)")
def search(user_id: PathId, body: SearchRequest, caller: Reader, memory: MemoryDep) -> SearchResponse:
    scope = caller.scope(user_id, agent_id=body.agent_id, session_id=body.session_id, claimed=body.claimed_users())
    hits = memory.search(
        body.query,
        scope=scope,
        k=body.k,
        strategy=body.strategy,
        threshold=body.threshold,
        filters=body.filters.search_filter(),
        decay_rate=body.decay_rate,
    )
    return SearchResponse(hits=[SearchHitOut.of(h, api_ids(caller.tenant)) for h in hits])
