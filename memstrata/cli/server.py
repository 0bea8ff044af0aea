"""`memstrata serve | mcp | keys`: the memory server, the stdio MCP server, and API key management."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from ..errors import InvalidInput
from ..settings import Settings
from .common import add_json_flag, print_json, require_store, store_source


def register(commands: Any) -> None:
    serve = commands.add_parser("serve", help="run the memory server (REST API, MCP at /mcp, Web UI at /ui)")
    serve.add_argument("--host", help="bind address (default: $MEMSTRATA_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: $MEMSTRATA_PORT or 8420)")
    serve.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="DEVELOPMENT ONLY: accept requests without API keys (same as MEMSTRATA_AUTH=off)",
    )
    serve.add_argument("--tenant", help="tenant of the bootstrap key, and of every request without auth")
    serve.add_argument("--no-ui", action="store_true", help="do not serve the Web UI")
    serve.add_argument("--no-mcp", action="store_true", help="do not serve MCP at /mcp")
    serve.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="log level (default info)"
    )
    serve.set_defaults(handler=cmd_serve)

    mcp = commands.add_parser("mcp", help="run an MCP server on stdio for one user")
    mcp.add_argument("--user", help="the user every tool call acts on (required)")
    mcp.add_argument("--tenant", default=None, help="tenant of the user (default: $MEMSTRATA_TENANT or 'default')")
    mcp.add_argument("--agent", help="agent id to scope memories to")
    mcp.set_defaults(handler=cmd_mcp)

    keys = commands.add_parser("keys", help="create, list and revoke API keys of the server")
    actions = keys.add_subparsers(dest="keys_action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create a key (the token is printed once; only its hash is stored)")
    create.add_argument(
        "--tenant", help="tenant id: 1-32 of a-z 0-9 - (default: $MEMSTRATA_TENANT or 'default', as `serve` uses)"
    )
    create.add_argument("--user", help="bind the key to this one user (omit for the tenant's admin key)")
    create.add_argument("--name", default="", help="a label to recognise the key by")
    create.add_argument(
        "--role",
        choices=["admin", "user", "read-only", "ingest-only", "privacy"],
        help="what the key may do (default: admin without --user, user with it); see docs/server.md",
    )
    create.add_argument(
        "--grant",
        action="append",
        default=[],
        choices=["export", "erase"],
        help="add a permission to the role (repeatable): export = export/import a user, erase = erase a user",
    )
    create.set_defaults(handler=cmd_keys_create)
    list_ = actions.add_parser("list", help="list keys (never their tokens)")
    list_.add_argument("--tenant", help="only this tenant")
    list_.add_argument("--all", action="store_true", help="include revoked keys")
    list_.set_defaults(handler=cmd_keys_list)
    revoke = actions.add_parser("revoke", help="revoke a key by id (refused from the next request on)")
    revoke.add_argument("key_id", help="the key's id (from keys list)")
    revoke.add_argument("--tenant", help="only match a key of this tenant")
    revoke.set_defaults(handler=cmd_keys_revoke)
    for action in (create, list_, revoke):
        add_json_flag(action)
    register_audit(commands)


def register_audit(commands: Any) -> None:
    audit = commands.add_parser("audit", help="the server's audit log of a tenant (exports, erasures, imports...)")
    audit.add_argument("--tenant", required=True, help="tenant id")
    audit.add_argument("--limit", type=int, default=100, help="how many entries, newest first")
    audit.set_defaults(handler=cmd_audit)
    add_json_flag(audit)


def cmd_audit(args: argparse.Namespace) -> int:
    from ..server.audit import AuditLog
    from ..storage import open_store

    settings = _settings(args)
    require_store(settings.store, source=store_source(args))
    store = open_store(settings.store, owner_url=settings.store_owner)
    try:
        entries = AuditLog(store).entries(args.tenant, limit=max(args.limit, 1))
    finally:
        store.close()
    if args.json:
        print_json(
            [
                {
                    "at": e.at,
                    "action": e.action.value,
                    "key_id": e.key_id,
                    "role": e.role,
                    "user": e.user,
                    "receipt": e.receipt,
                    "operation": e.operation,
                }
                for e in entries
            ]
        )
        return 0
    for e in entries:
        target = f"user={e.user}" if e.user else f"receipt={e.receipt}"
        print(f"{e.at:%Y-%m-%d %H:%M:%S}  {e.action.value:<11}  key={e.key_id}  role={e.role}  {target}  {e.operation}")
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {"store": args.store, "embedder": args.embedder}
    return Settings(**{k: v for k, v in overrides.items() if v})


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..memory import Memory
    from ..server.app import UVICORN_OPTIONS, create_app
    from ..server.auth import KeyRing
    from ..server.config import ServerConfig
    from ..server.tenancy import validate_tenant

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    overrides = {
        "host": args.host,
        "port": args.port,
        "tenant": args.tenant,
        "auth": False if args.insecure_no_auth else None,
        "ui": False if args.no_ui else None,
        "mcp": False if args.no_mcp else None,
    }
    config = ServerConfig(**{k: v for k, v in overrides.items() if v is not None})
    validate_tenant(config.tenant)
    settings = _settings(args)
    with Memory(settings=settings) as memory:
        if config.auth_enabled:
            _bootstrap_key(KeyRing(memory.store), config.tenant)
        else:
            print(_INSECURE_BANNER, file=sys.stderr)
        app = create_app(settings, memory=memory, config=config)
        print(f"memstrata: store {memory.store.url}", file=sys.stderr)
        print(
            f"memstrata: http://{config.host}:{config.port}/ui  (API docs at /docs, MCP at /mcp)",
            file=sys.stderr,
        )
        uvicorn.run(
            app, host=config.host, port=config.port, log_level=args.log_level, access_log=False, **UVICORN_OPTIONS
        )
    return 0


def _bootstrap_key(ring: Any, tenant: str) -> None:
    """On the very first start (no key at all), make an admin key so the server is usable at once."""
    if not ring.empty():
        return
    key, token = ring.create(tenant, name="bootstrap admin key")
    print(
        f"memstrata: no API keys existed; created an admin key for tenant {tenant!r} (id {key.id}).\n"
        f"           It is shown only now (only its hash is stored):\n\n    {token}\n\n"
        f"           Use it as 'Authorization: Bearer <key>' or paste it into the Web UI.\n"
        f"           Revoke it with: memstrata keys revoke {key.id}",
        file=sys.stderr,
    )


_INSECURE_BANNER = """
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
!!  memstrata: AUTHENTICATION IS DISABLED (--insecure-no-auth / MEMSTRATA_AUTH=off)
!!  Every request acts as the tenant's admin. Development only: never expose
!!  this server beyond your machine.
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
"""


MCP_NEEDS_USER = (
    "memstrata mcp needs --user USER_ID: the user every tool call acts on (the model never chooses it). "
    'In an MCP client\'s configuration: "command": "memstrata", "args": ["mcp", "--user", "alice"]'
)


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..memory import Memory
    from ..server.config import ServerConfig
    from ..server.mcp import build_mcp_server, fixed_resolver

    if not args.user:  # checked here, before stdio starts: an MCP client shows only "connection closed"
        raise InvalidInput(MCP_NEEDS_USER)
    logging.basicConfig(level="WARNING", stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    tenant = args.tenant or ServerConfig().tenant
    with Memory(settings=_settings(args)) as memory:
        server = build_mcp_server(fixed_resolver(memory, tenant=tenant, user=args.user, agent=args.agent))
        server.run("stdio")
    return 0


def _key_ring(args: argparse.Namespace, *, create: bool = False) -> Any:
    """The server's key ring in the store; only `keys create` may start a new store."""
    from ..server.auth import KeyRing
    from ..storage import open_store

    settings = _settings(args)
    if not create:
        require_store(settings.store, source=store_source(args))
    return KeyRing(open_store(settings.store, owner_url=settings.store_owner))


def _key_json(key: Any, token: str | None = None) -> dict[str, Any]:
    value = {
        "id": key.id,
        "tenant": key.tenant,
        "user": key.user,
        "name": key.name,
        "role": key.role.value,
        "grants": sorted(g.value for g in key.grants),
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
    }
    return value if token is None else {**value, "token": token}


def cmd_keys_create(args: argparse.Namespace) -> int:
    from ..server.config import ServerConfig

    ring = _key_ring(args, create=True)
    try:
        key, token = ring.create(
            args.tenant or ServerConfig().tenant, user=args.user, name=args.name, role=args.role, grants=args.grant
        )
    finally:
        ring.store.close()
    bound = f"user {key.user!r}" if key.user else "every user of the tenant"
    allowed = ", ".join(sorted(p.value for p in key.permissions))
    print(
        f"created {key.role.value} key {key.id} for tenant {key.tenant!r}, {bound} ({allowed}); "
        "the token is shown only now:",
        file=sys.stderr,
    )
    print_json(_key_json(key, token)) if args.json else print(token)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    ring = _key_ring(args)
    try:
        keys = ring.list(args.tenant, include_revoked=args.all)
    finally:
        ring.store.close()
    if args.json:
        print_json([_key_json(k) for k in keys])
        return 0
    for key in keys:
        state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
        who = f"user={key.user}" if key.user else "all-users"
        grants = "".join(f"+{g.value}" for g in sorted(key.grants))
        created = f"{key.created_at:%Y-%m-%d %H:%M}"
        role = f"role={key.role.value}{grants}"
        print(f"{key.id}  tenant={key.tenant}  {role}  {who}  {state}  created {created}  {key.name}")
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    ring = _key_ring(args)
    try:
        key = ring.revoke(args.key_id, tenant=args.tenant)
    finally:
        ring.store.close()
    print_json(_key_json(key)) if args.json else print(f"revoked key {key.id} (tenant {key.tenant!r})")
    return 0
