"""Helpers shared by CLI commands: opening `Memory` from flags/env and printing results."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, is_dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..memory import Memory
from ..models import Scope
from ..settings import Settings
from ..storage import sqlite_path


def open_memory(args: argparse.Namespace, *, create: bool = False) -> Memory:
    """The `Memory` of `--store` / `$MEMSTRATA_STORE`. Only commands that write (`create=True`) may
    start a new SQLite file; the others refuse a missing one (`require_store`)."""
    settings = Settings()
    url = store_url(args, settings)
    if not create:
        require_store(url, source=store_source(args))
    return Memory(store=url, embedder=args.embedder or settings.embedder, settings=settings)


def store_url(args: argparse.Namespace, settings: Settings | None = None) -> str:
    return str(args.store or (settings or Settings()).store)


def store_source(args: argparse.Namespace) -> str:
    """Where the store URL came from, for error messages."""
    if args.store:
        return "--store"
    return "$MEMSTRATA_STORE" if os.environ.get("MEMSTRATA_STORE") else "the default store"


def require_store(url: str, *, source: str) -> None:
    """Refuse a SQLite store whose file does not exist: opening it would create an empty store, so a
    mistyped path would read as "no memories" (and leave a stray file). PostgreSQL URLs pass."""
    if url.startswith(("postgresql://", "postgres://")):
        return
    path = sqlite_path(url)
    if path != ":memory:" and not Path(path).exists():
        raise ConfigurationError(
            f"no store at {path} ({source} {url}): check the path; commands that write "
            "(add, learn, import, keys create, serve, mcp) create a new store"
        )


def add_scope_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", required=True, help="user id (required)")
    parser.add_argument("--agent", help="agent id")
    parser.add_argument("--session", help="session id")
    add_json_flag(parser)


def scope_of(args: argparse.Namespace) -> Scope:
    return Scope(user_id=args.user, agent_id=args.agent, session_id=args.session)


def to_jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: to_jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    return value


def print_json(value: Any) -> None:
    print(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def emit(args: argparse.Namespace, value: Any, text: Callable[[], str]) -> None:
    """Print `value` as JSON with `--json`, else the human-readable `text()`."""
    print_json(value) if args.json else print(text())


def counts_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items() if n) or "nothing"
