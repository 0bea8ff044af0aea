"""The MCP server (official MCP Python SDK, `MCPServer` — formerly FastMCP): memory tools for assistants.

The scope of every tool call comes from configuration, never from the model's arguments:
* stdio (`memstrata mcp --user alice`): the user given on the command line;
* streamable HTTP (`/mcp` of `memstrata serve`): the bearer API key — its user if it is user-bound,
  else the `X-Memstrata-User` header configured in the MCP client (admin keys, or auth disabled).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from ipaddress import ip_address
from typing import Any, TypeVar

import anyio.to_thread
import pydantic_core
from fastapi import HTTPException
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from .. import __version__
from ..errors import BackendError, MemstrataError
from ..memory import Memory
from .auth import Principal
from .config import ServerConfig
from .deps import ServerState, authenticate
from .errors import problem
from .mcp_tools import SECTIONS, TOOLS, Binding, ToolSpec, read_section
from .roles import ROLE_PERMISSIONS, Permission, Role
from .shaping import lenient_model, may_withhold, receipt_type, shape

USER_HEADER = "x-memstrata-user"
AGENT_HEADER = "x-memstrata-agent"
PRINCIPAL_KEY = "memstrata.principal"

INSTRUCTIONS = (
    "Long-term memory about the user you are talking with. Search it before answering questions that may "
    "depend on the user's preferences, history or projects; store durable facts and preferences the user "
    "tells you; forget a memory when the user asks. The user is fixed by the server, not by these tools."
)


Resolver = Callable[[Context, Permission], Binding]
"""The binding of one tool call that needs a permission (the access rule applied: `Principal.check`)."""
PERMISSION_META = "memstrata/permission"
"""Tool `_meta` key naming the permission the tool needs (as `x-memstrata-permission` does on REST)."""
T = TypeVar("T")


def _mapped(fn: Callable[..., T]) -> Callable[..., T]:
    """Turn memstrata errors into tool errors the model can read (the MCP edge's one table)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except BackendError as exc:
            raise ToolError(f"memory backend unavailable, try again later ({type(exc).__name__})") from exc
        except MemstrataError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return wrapper


def _bound_tool(spec: ToolSpec, resolve: Resolver) -> Callable[..., Any]:
    """`spec.fn` as an MCP tool: its `Binding` parameter becomes the request context, resolved per call
    (every tool call passes here: the one place a per-tool permission rule belongs); the work runs on a
    worker thread so a slow store never blocks the server's event loop. A tool a key unable to read
    stored data may call answers through `shaping.shape` (ids and counts for such a key) and publishes
    the lenient output schema both shapes satisfy."""
    hints = typing.get_type_hints(spec.fn, include_extras=True)
    params = list(inspect.signature(spec.fn).parameters.values())[1:]
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    returned = hints["return"]
    withheld = may_withhold(spec.permission) and receipt_type(returned) != returned
    signature = inspect.Signature(
        [context, *(p.replace(annotation=hints[p.name]) for p in params)],
        return_annotation=lenient_model(returned) if withheld else returned,
    )
    work = _mapped(spec.fn)

    async def tool(ctx: Context, **arguments: Any) -> Any:
        bound = resolve(ctx, spec.permission)
        result = await anyio.to_thread.run_sync(functools.partial(work, bound, **arguments))
        return _shown(result, bound.principal.permissions) if withheld else result

    tool.__name__ = spec.fn.__name__
    tool.__doc__ = spec.fn.__doc__
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()} | {
        "return": signature.return_annotation
    }
    return tool


def _shown(result: BaseModel, permissions: frozenset[Permission]) -> CallToolResult:
    """A tool's result as the caller may see it (`shaping.shape`), as the SDK would have sent the model."""
    shown = shape(result, permissions)
    text = pydantic_core.to_json(shown, fallback=str, indent=2).decode()
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=shown.model_dump(mode="json")
    )


def _annotations(spec: ToolSpec) -> ToolAnnotations:
    return ToolAnnotations(
        title=spec.title,
        read_only_hint=spec.read_only,
        destructive_hint=spec.destructive,
        idempotent_hint=spec.idempotent,
        open_world_hint=False,
    )


def build_mcp_server(resolve: Resolver) -> MCPServer:
    """An MCPServer whose tools and resources act on the binding `resolve` returns for each request."""
    server: MCPServer = MCPServer("memstrata", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    for spec in TOOLS:
        server.add_tool(
            _bound_tool(spec, resolve),
            title=spec.title,
            description=inspect.cleandoc(spec.fn.__doc__ or ""),
            annotations=_annotations(spec),
            structured_output=True,
            meta={PERMISSION_META: spec.permission.value},
        )

    @server.resource(
        "memstrata://user/{section}",
        name="user",
        title="The user's memory",
        description="The current user's context block (section=context, as a prompt would get it), user "
        f"context object (profile), profile facts (facts) or entities; one of: {', '.join(SECTIONS)}.",
        mime_type="text/plain",
    )
    async def user_section(section: str, ctx: Context) -> str:
        bound = resolve(ctx, Permission.READ)
        return await anyio.to_thread.run_sync(_mapped(read_section), bound, section)

    return server


# -- stdio -------------------------------------------------------------------
def fixed_resolver(memory: Memory, *, tenant: str, user: str, agent: str | None = None) -> Resolver:
    """Every call acts on one configured user (stdio)."""
    principal = Principal(tenant=tenant, user=user, role=Role.USER, permissions=ROLE_PERMISSIONS[Role.USER])
    binding = Binding(memory, principal.scope(user, agent_id=agent), tenant, principal, user)

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
        return Binding(state.memory, scope, principal.tenant, principal, user)

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
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=config.max_body_bytes,
        transport_security=_transport_security(config),
    )
    return server, AuthenticatedEndpoint(app, get_state)
