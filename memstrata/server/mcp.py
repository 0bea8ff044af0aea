"""The MCP server (official MCP Python SDK, `MCPServer` — formerly FastMCP): memory tools for assistants.

The scope of every tool call comes from configuration, never from the model's arguments:
* stdio (`memstrata mcp --user alice`): the user given on the command line;
* streamable HTTP (`/mcp` of `memstrata serve`): the bearer API key — its user if it is user-bound,
  else the `X-Memstrata-User` header configured in the MCP client (admin keys, or auth disabled).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Any, TypeVar, cast

import anyio.to_thread
from fastapi import HTTPException
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from .. import __version__
from ..errors import BackendError, MemstrataError
from ..layers.semantic import Strategy
from ..memory import Memory
from ..models import MemoryKind, MemoryRecord, Scope
from .auth import Principal
from .config import ServerConfig
from .deps import ServerState, authenticate
from .errors import problem
from .roles import ROLE_PERMISSIONS, Permission, Role
from .tenancy import api_id

USER_HEADER = "x-memstrata-user"
AGENT_HEADER = "x-memstrata-agent"
PRINCIPAL_KEY = "memstrata.principal"

INSTRUCTIONS = (
    "Long-term memory about the user you are talking with. Search it before answering questions that may "
    "depend on the user's preferences, history or projects; store durable facts and preferences the user "
    "tells you; forget a memory when the user asks. The user is fixed by the server, not by these tools."
)


@dataclass(frozen=True, slots=True)
class Binding:
    """What one tool call acts on."""

    memory: Memory
    scope: Scope
    tenant: str


Resolver = Callable[[Context, Permission], Binding]
"""The binding of one tool call that needs a permission (the access rule applied: `Principal.check`)."""
PERMISSION_META = "memstrata/permission"
"""Tool `_meta` key naming the permission the tool needs (as `x-memstrata-permission` does on REST)."""


def needs(permission: Permission) -> dict[str, Any]:
    return {PERMISSION_META: permission.value}


F = TypeVar("F", bound=Callable[..., Any])


def _mapped(fn: F) -> F:
    """Turn memstrata errors into tool errors the model can read (the MCP edge's one table)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BackendError as exc:
            raise ToolError(f"memory backend unavailable, try again later ({type(exc).__name__})") from exc
        except MemstrataError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return cast(F, wrapper)


def _memory_json(record: MemoryRecord, tenant: str) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": record.kind.value,
        "content": record.content,
        "created_at": record.created_at.isoformat(),
        "agent_id": api_id(tenant, record.scope.agent_id),
        "metadata": record.metadata,
    }


def build_mcp_server(resolve: Resolver) -> MCPServer:
    """An MCPServer whose tools act on the scope `resolve` returns for each call."""
    server: MCPServer = MCPServer("memstrata", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(
        meta=needs(Permission.WRITE),
        description="Store a durable memory about the user (a fact, preference, event, note or task).",
    )
    @_mapped
    def add_memory(
        ctx: Context, content: str, kind: str = "fact", metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        bound = resolve(ctx, Permission.WRITE)
        record = bound.memory.add(content, scope=bound.scope, kind=MemoryKind.parse(kind), metadata=metadata)
        return _memory_json(record, bound.tenant)

    @server.tool(
        meta=needs(Permission.READ),
        description="Search the user's memories; returns the best matches with their scores.",
    )
    @_mapped
    def search_memories(ctx: Context, query: str, k: int = 5, strategy: str = "hybrid") -> dict[str, Any]:
        bound = resolve(ctx, Permission.READ)
        hits = bound.memory.search(query, scope=bound.scope, k=min(max(k, 1), 50), strategy=Strategy.parse(strategy))
        return {"hits": [{**_memory_json(h.memory, bound.tenant), "score": h.score, "scores": h.scores} for h in hits]}

    @server.tool(
        meta=needs(Permission.READ),
        description="Everything relevant about the user for the current task, as one prompt block within a "
        "token budget: profile, relevant memories with dates, entities, procedures, open items.",
    )
    @_mapped
    def get_context(ctx: Context, query: str | None = None, max_tokens: int = 1000) -> dict[str, Any]:
        bound = resolve(ctx, Permission.READ)
        assembled = bound.memory.context(query, min(max(max_tokens, 50), 8000), scope=bound.scope)
        return {
            "text": assembled.text,
            "tokens": assembled.tokens,
            "parts": [{"name": p.name, "tokens": p.tokens} for p in assembled.parts],
        }

    @server.tool(meta=needs(Permission.WRITE), description="Forget (delete) one of the user's memories by id.")
    @_mapped
    def forget_memory(ctx: Context, memory_id: str) -> dict[str, Any]:
        bound = resolve(ctx, Permission.WRITE)
        return {"id": memory_id, "forgotten": bound.memory.forget(memory_id, scope=bound.scope)}

    @server.tool(
        meta=needs(Permission.READ), description="Look up a person, project or place the user mentioned, by name."
    )
    @_mapped
    def lookup_entity(ctx: Context, name: str) -> dict[str, Any]:
        bound = resolve(ctx, Permission.READ)
        entity = bound.memory.entity(name, scope=bound.scope)
        return {
            "name": entity.name, "type": entity.type, "summary": entity.summary,
            "aliases": list(entity.aliases), "attributes": entity.attributes,
            "last_seen": entity.last_seen.isoformat(), "mention_count": entity.mention_count,
        }  # fmt: skip

    @server.tool(
        meta=needs(Permission.READ),
        description="The user's profile facts (key/value by category), optionally one category.",
    )
    @_mapped
    def get_profile(ctx: Context, category: str | None = None) -> dict[str, Any]:
        bound = resolve(ctx, Permission.READ)
        facts = bound.memory.facts(scope=bound.scope, category=category)
        return {"facts": [{"category": f.category, "key": f.key, "value": f.value} for f in facts]}

    return server


# -- stdio -------------------------------------------------------------------
def fixed_resolver(memory: Memory, *, tenant: str, user: str, agent: str | None = None) -> Resolver:
    """Every call acts on one configured user (stdio)."""
    principal = Principal(tenant=tenant, user=user, role=Role.USER, permissions=ROLE_PERMISSIONS[Role.USER])
    binding = Binding(memory, principal.scope(user, agent_id=agent), tenant)

    def resolve(ctx: Context, needed: Permission) -> Binding:
        principal.check(needed, user)
        return binding

    return _mapped(resolve)


# -- streamable HTTP inside `memstrata serve` ---------------------------------
def http_resolver(get_state: Callable[[], ServerState]) -> Resolver:
    def resolve(ctx: Context, needed: Permission) -> Binding:
        request = ctx.request_context.request
        principal = getattr(request, "scope", {}).get(PRINCIPAL_KEY)
        if request is None or not isinstance(principal, Principal):
            raise ToolError("unauthenticated MCP request")
        headers = request.headers
        user = principal.user or headers.get(USER_HEADER)
        if not user:
            raise ToolError(f"this key is not bound to a user: configure the {USER_HEADER!r} header in the client")
        principal.check(needed, user)
        scope = principal.scope(user, agent_id=headers.get(AGENT_HEADER))
        state = get_state()
        state.audit.on_access(principal, needed, f"MCP /mcp ({needed.value})", user)
        return Binding(state.memory, scope, principal.tenant)

    return _mapped(resolve)


class AuthenticatedEndpoint:
    """ASGI wrapper of the MCP app: authenticates the bearer key like the REST API (401 problem+json)."""

    def __init__(self, app: ASGIApp, get_state: Callable[[], ServerState]) -> None:
        self.app = app
        self.get_state = get_state

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        try:
            principal = await anyio.to_thread.run_sync(authenticate, self.get_state(), token or None)
        except HTTPException as exc:
            await problem(exc.status_code, str(exc.detail), headers=dict(exc.headers or {}))(scope, receive, send)
            return
        await self.app({**scope, PRINCIPAL_KEY: principal}, receive, send)


def _transport_security(config: ServerConfig) -> TransportSecuritySettings:
    """DNS-rebinding protection (Host/Origin checks) when bound to loopback or given allowed hosts."""
    hosts = list(config.allowed_hosts)
    if _is_loopback(config.host):
        hosts += ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    if not hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def build_http_endpoint(get_state: Callable[[], ServerState], config: ServerConfig) -> tuple[MCPServer, ASGIApp]:
    """The MCP server and the ASGI endpoint to route at /mcp (stateless streamable HTTP, JSON responses)."""
    server = build_mcp_server(http_resolver(get_state))
    app = server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True,
        max_request_body_size=config.max_body_bytes, transport_security=_transport_security(config),
    )  # fmt: skip
    return server, AuthenticatedEndpoint(app, get_state)
