"""`memstrata erase | export | import | sweep | consolidate`: lifecycle and privacy commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from .common import open_memory, print_json


def register(commands: Any) -> None:
    erase = commands.add_parser(
        "erase", help="erase everything about a user (GDPR Art. 17) and print the receipt",
        description="Removes the user's memories, vectors, full text, episodes, summaries, entities, "
        "profile, procedures, queue items, history and buffer keys, then prints the stored, content-free "
        "receipt.",
    )  # fmt: skip
    erase.add_argument("--user", required=True, help="user id")
    erase.add_argument("--yes", action="store_true", help="confirm: nothing can be recovered afterwards")
    erase.set_defaults(handler=cmd_erase)

    export = commands.add_parser("export", help="export everything about a user as JSON (GDPR Art. 15/20)")
    export.add_argument("--user", required=True, help="user id")
    export.add_argument("--out", help="write to this file instead of stdout")
    export.set_defaults(handler=cmd_export)

    import_ = commands.add_parser("import", help="restore a user from an export document (idempotent)")
    import_.add_argument("file", help="export document (JSON); '-' reads stdin")
    import_.add_argument("--user", help="import under this user id instead of the document's")
    import_.set_defaults(handler=cmd_import)

    compact = commands.add_parser(
        "compact", help="rewrite the store's files so that erased or deleted text is physically gone",
        description="SQLite: merge the full-text index, VACUUM and truncate the WAL. PostgreSQL: VACUUM "
        "(FULL) every user table through the owner URL (exclusive table locks while it runs), then "
        "CHECKPOINT so the WAL holding erased rows can be recycled. Run after erasures when the bytes "
        "must be gone from the files, not only from every query.",
    )  # fmt: skip
    compact.set_defaults(handler=cmd_compact)

    sweep = commands.add_parser("sweep", help="delete expired memories and data past its retention")
    sweep.add_argument("--user", help="sweep one user (default: every user)")
    sweep.set_defaults(handler=cmd_sweep)

    consolidate = commands.add_parser("consolidate", help="compress a user's old memories into summaries")
    consolidate.add_argument("--user", required=True, help="user id")
    consolidate.add_argument("--older-than-days", type=float, help="age in days (default: settings, 30)")
    consolidate.add_argument("--min-count", type=int, help="least number of old memories (default: settings, 10)")
    consolidate.add_argument("--kind", action="append", dest="kinds", help="kind to compress (repeatable)")
    consolidate.add_argument("--window", choices=["day", "week", "month"], help="grouping window")
    consolidate.add_argument("--no-llm", action="store_true", help="offline extractive summary even with an LLM")
    consolidate.add_argument("--dry-run", action="store_true", help="show the groups, change nothing")
    consolidate.set_defaults(handler=cmd_consolidate)


def cmd_erase(args: argparse.Namespace) -> int:
    if not args.yes:
        raise InvalidInput(f"erasing {args.user!r} cannot be undone; add --yes to confirm")
    with open_memory(args) as memory:
        receipt = memory.erase_user(scope=args.user)
    print_json(receipt)
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        compact = getattr(memory.store, "compact", None)
        if compact is None:
            raise InvalidInput(f"the store {memory.store.url} cannot be compacted")
        print_json(compact())
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        document = memory.export_user(scope=args.user)
    text = document.to_json()
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        print(f"exported {document.counts} to {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    try:
        raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {args.file}: {exc.strerror}") from None
    with open_memory(args) as memory:
        report = memory.import_user(raw, scope=args.user)
    print_json(report)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        report = memory.sweep(scope=args.user)
    print_json(report)
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        report = memory.consolidate(
            scope=args.user, older_than=args.older_than_days, min_count=args.min_count, kinds=args.kinds,
            window=args.window, use_llm=False if args.no_llm else None, dry_run=args.dry_run,
        )  # fmt: skip
    print_json(report)
    return 0
