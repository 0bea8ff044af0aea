"""`memstrata db distribute`: spread the PostgreSQL store's schema over a Citus cluster."""

from __future__ import annotations

import argparse
from typing import Any

import psycopg

from ..errors import StoreError, UsageError
from ..settings import Settings
from .common import add_json_flag, print_json


def register(commands: Any) -> None:
    db = commands.add_parser("db", help="database administration (PostgreSQL)")
    actions = db.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    distribute = actions.add_parser(
        "distribute",
        help="distribute the schema on Citus: user tables by user_id, meta as reference tables",
        description="Run once on the Citus coordinator, as the schema owner (--owner, $MEMSTRATA_STORE_OWNER, "
        "else --store), with the citus and vector extensions created on every node and the workers "
        "registered. Migrates first; idempotent. Later migrations distribute the tables they add.",
    )
    distribute.add_argument("--owner", help="owner connection URL (default: $MEMSTRATA_STORE_OWNER, else --store)")
    distribute.add_argument("--shards", type=int, default=32, help="shard count of the user tables (default 32)")
    add_json_flag(distribute)
    distribute.set_defaults(handler=cmd_distribute)


def cmd_distribute(args: argparse.Namespace) -> int:
    from ..storage.postgres.citus import distribute
    from ..storage.postgres.migrations import USER_TABLES, migrate
    from ..storage.postgres.urls import password_of, redact_url, scrub

    settings = Settings()
    url = args.owner or settings.store_owner or args.store or settings.store
    if not str(url).startswith(("postgresql://", "postgres://")):
        raise UsageError(f"db distribute needs a postgresql:// store URL, got {redact_url(str(url))}")
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            migrate(conn)
            done = distribute(conn, USER_TABLES, shard_count=args.shards)
    except psycopg.Error as exc:
        raise StoreError(f"cannot distribute {redact_url(url)}: {scrub(str(exc), password_of(url))}") from exc
    result = {"distributed": done.distributed, "reference": done.reference, "shard_count": done.shard_count}
    if args.json:
        print_json(result)
    else:
        print(
            f"distributed: {', '.join(done.distributed) or '(already)'}; "
            f"reference: {', '.join(done.reference) or '(already)'}; {done.shard_count} shards"
        )
    return 0
