"""FastAPI dependencies: the server state, the caller's `Principal`, the `Memory`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from ..errors import InvalidInput
from ..memory import Memory
from .audit import AuditLog
from .auth import KeyRing, Principal
from .config import ServerConfig
from .metrics import Metrics
from .roles import Permission

bearer_scheme = HTTPBearer(auto_error=False, description="an API key made with `memstrata keys create`")


@dataclass(slots=True)
class ServerState:
    memory: Memory
    keys: KeyRing
    config: ServerConfig
    metrics: Metrics
    audit: AuditLog


def server_state(request: Request) -> ServerState:
    state: ServerState = request.app.state.memstrata
    return state


def authenticate(state: ServerState, token: str | None) -> Principal:
    """The principal for a bearer token; HTTP 401 if it is missing, unknown or revoked."""
    if not state.config.auth_enabled:
        return Principal(tenant=state.config.tenant, authenticated=False)
    if not token:
        raise HTTPException(401, "missing API key: send 'Authorization: Bearer <key>'", {"WWW-Authenticate": "Bearer"})
    key = state.keys.check(token)
    if key is None:
        raise HTTPException(401, "unknown or revoked API key", {"WWW-Authenticate": "Bearer"})
    return Principal.of(key)


def current_principal(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]
) -> Principal:
    return authenticate(server_state(request), credentials.credentials if credentials else None)


_KEY_DEPENDENCIES: dict[Any, Permission | None] = {}
"""Every dependency that authenticates a key → the permission it requires (None: any valid key)."""


def is_key(dependency: Any) -> bool:
    return dependency in _KEY_DEPENDENCIES


def permission_of(dependency: Any) -> Permission | None:
    """The permission a key dependency (`requires(p)`, `current_principal`) requires."""
    return _KEY_DEPENDENCIES[dependency]


def requires(permission: Permission) -> Any:
    """The dependency of a route that needs `permission`: authenticates the key and applies the access
    rule to the route's `{user_id}` (if any). The permission is the route's OpenAPI security scope."""

    def authorized(
        request: Request,
        credentials: HTTPAuthorizationCredentials | None = Security(bearer_scheme, scopes=[permission.value]),  # noqa: B008
    ) -> Principal:
        state = server_state(request)
        principal = authenticate(state, credentials.credentials if credentials else None)
        user = request.path_params.get("user_id")
        principal.check(permission, user)
        route = request.scope.get("route")
        state.audit.on_access(
            principal, permission, f"{request.method} {getattr(route, 'path', request.url.path)}", user
        )
        return principal

    _KEY_DEPENDENCIES[authorized] = permission
    return authorized


_KEY_DEPENDENCIES[current_principal] = None


def reject_unknown_query(request: Request) -> None:
    """Refuse query parameters the route does not declare: a typo (`?kinds=`) must not be silently ignored."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    if dependant is None or not request.query_params:
        return
    known: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        for param in current.query_params:
            model = param.field_info.annotation
            is_model = isinstance(model, type) and issubclass(model, BaseModel)
            known |= set(model.model_fields) if is_model else {param.alias}  # a query model: its fields
        pending += current.dependencies
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        raise InvalidInput(f"unknown query parameter(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def current_memory(request: Request) -> Memory:
    return server_state(request).memory


CallerDep = Annotated[Principal, Depends(current_principal)]
"""Any valid key (no permission needed)."""
Reader = Annotated[Principal, Depends(requires(Permission.READ))]
Writer = Annotated[Principal, Depends(requires(Permission.WRITE))]
Exporter = Annotated[Principal, Depends(requires(Permission.EXPORT))]
Eraser = Annotated[Principal, Depends(requires(Permission.ERASE))]
TenantAdmin = Annotated[Principal, Depends(requires(Permission.ADMIN))]
MemoryDep = Annotated[Memory, Depends(current_memory)]
StateDep = Annotated[ServerState, Depends(server_state)]
