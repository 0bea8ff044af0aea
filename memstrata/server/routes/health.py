"""Liveness/readiness, Prometheus metrics, and who the caller is."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from ... import __version__
from ...namespaces import SYSTEM_USER
from ..deps import CallerDep, StateDep
from ..routing import ShapedRoute
from ..schemas import ERROR_RESPONSES, Health, Problem, WhoAmI

router = APIRouter(tags=["health"], route_class=ShapedRoute)


@router.get(
    "/healthz",
    summary="Health: the store answers",
    responses={503: {"model": Problem, "description": "The store is unavailable"}},
)
def healthz(state: StateDep) -> Health:
    state.memory.store.get_item(SYSTEM_USER, "health", "ping")  # a store failure answers 503 (errors.py)
    return Health(status="ok", version=__version__)


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(state: StateDep) -> Response:
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.get("/v1/whoami", summary="The tenant and user the API key acts for", responses=ERROR_RESPONSES)
def whoami(caller: CallerDep) -> WhoAmI:
    return WhoAmI(
        tenant=caller.tenant,
        user=caller.user,
        admin=caller.admin,
        auth=caller.authenticated,
        key_id=caller.key_id,
        role=caller.role.value,
        permissions=sorted(p.value for p in caller.permissions),
    )
