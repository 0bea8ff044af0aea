"""`memstrata add | search | get | list | forget | history`."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import InvalidInput
from ..filters import SearchFilter
from ..layers.semantic import Strategy
from ..models import MemoryKind
from ..shapes import MemoryListJSON, SearchHitJSON, SearchResultJSON, to_json
from .common import add_scope_arguments, open_memory, print_json, scope_of
from .value_flags import add_value_flags, value_from_args


def register(commands: Any) -> None:
    add = commands.add_parser("add", help="store a memory verbatim")
    add.add_argument("content", help="the text to store")
    add.add_argument("--kind", default="fact", help="memory kind: " + ", ".join(MemoryKind) + " (default fact)")
    add.add_argument("--metadata", help="JSON object")
    add.add_argument("--importance", type=float, default=0.5, help="how much the memory matters, 0 to 1 (default 0.5)")
    add_scope_arguments(add)
    add.set_defaults(handler=cmd_add)

    search = commands.add_parser("search", help="search memories")
    search.add_argument("query", help="what to look for")
    search.add_argument("-k", type=int, default=10, help="how many hits (default 10)")
    search.add_argument(
        "--strategy",
        default=Strategy.HYBRID.value,
        choices=[s.value for s in Strategy],
        help="retrieval (default hybrid)",
    )
    search.add_argument("--threshold", type=float, help="leave out hits scoring below this")
    add_value_flags(search, SearchFilter)
    add_scope_arguments(search)
    search.set_defaults(handler=cmd_search)

    get = commands.add_parser("get", help="show one memory")
    get.add_argument("memory_id", help="the memory's id")
    add_scope_arguments(get)
    get.set_defaults(handler=cmd_get)

    list_ = commands.add_parser("list", help="list memories")
    list_.add_argument("--limit", type=int, default=50, help="how many, newest first (default 50)")
    list_.add_argument("--offset", type=int, default=0, help="skip this many (a page's next_offset)")
    add_value_flags(list_, SearchFilter)
    add_scope_arguments(list_)
    list_.set_defaults(handler=cmd_list)

    forget = commands.add_parser("forget", help="delete a memory and scrub its text from history")
    forget.add_argument("memory_id", help="the memory's id")
    add_scope_arguments(forget)
    forget.set_defaults(handler=cmd_forget)

    learn = commands.add_parser("learn", help="extract what is worth remembering from a message and store it")
    learn.add_argument("message", help="a message of the user, as said")
    add_scope_arguments(learn)
    learn.set_defaults(handler=cmd_learn)

    context = commands.add_parser("context", help="the prompt block for a query, within a token budget")
    context.add_argument("query", help="what the prompt is about")
    context.add_argument("--max-tokens", type=int, default=1000, help="token budget of the block (default 1000)")
    add_scope_arguments(context)
    context.set_defaults(handler=cmd_context)

    history = commands.add_parser("history", help="show the change history of a memory")
    history.add_argument("memory_id", help="the memory's id")
    add_scope_arguments(history)
    history.set_defaults(handler=cmd_history)


def _metadata(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--metadata is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InvalidInput("--metadata must be a JSON object")
    return value


def cmd_add(args: argparse.Namespace) -> int:
    with open_memory(args, create=True) as memory:
        record = memory.add(
            args.content,
            scope=scope_of(args),
            kind=args.kind,
            metadata=_metadata(args.metadata),
            importance=args.importance,
        )
    print_json(to_json(record)) if args.json else print(record.id)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        hits = memory.search(
            args.query,
            scope=scope_of(args),
            k=args.k,
            strategy=args.strategy,
            threshold=args.threshold,
            filters=value_from_args(args, SearchFilter),
        )
    if args.json:
        print_json(SearchResultJSON(hits=[SearchHitJSON.of(h) for h in hits]).model_dump(mode="json"))
    else:
        for hit in hits:
            print(f"{hit.score:8.4f}  {hit.memory.id}  [{hit.memory.kind.value}] {hit.memory.content}")
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        record = memory.get(args.memory_id, scope=scope_of(args))
    print_json(to_json(record)) if args.json else print(f"{record.id} [{record.kind.value}] {record.content}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        records = memory.list(
            scope=scope_of(args), filters=value_from_args(args, SearchFilter), limit=args.limit + 1, offset=args.offset
        )
    if args.json:
        print_json(MemoryListJSON.page(records, limit=args.limit, offset=args.offset).model_dump(mode="json"))
    else:
        for record in records[: args.limit]:
            print(f"{record.id}  {record.created_at:%Y-%m-%d}  [{record.kind.value}] {record.content}")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        removed = memory.forget(args.memory_id, scope=scope_of(args))
    print_json({"id": args.memory_id, "forgotten": removed}) if args.json else print(
        "forgotten" if removed else "not found"
    )
    return 0 if removed else 3


def cmd_history(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        events = memory.history(args.memory_id, scope=scope_of(args))
    if args.json:
        print_json(to_json(events))
    else:
        for event in events:
            print(f"{event.at:%Y-%m-%d %H:%M:%S}  {event.event.value:9}  {event.before!r} -> {event.after!r}")
    return 0


def cmd_learn(args: argparse.Namespace) -> int:
    with open_memory(args, create=True) as memory:
        result = memory.learn(args.message, scope=scope_of(args))
    if args.json:
        print_json(to_json(result))
    else:
        for op in result.operations:
            replaced = f" (replaces {', '.join(op.replaced_ids)})" if op.replaced_ids else ""
            print(f"{op.event.value:9} {op.memory.id}  {op.memory.content}{replaced}")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        context = memory.context(args.query, max_tokens=args.max_tokens, scope=scope_of(args))
    print_json(to_json(context)) if args.json else print(context.text)
    return 0
