"""`memstrata erase | export | import | sweep | consolidate`: lifecycle and privacy commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..layers.lifecycle import ConsolidationOptions, ConsolidationReport
from .common import add_json_flag, counts_text, emit, open_memory, print_json
from .progress import add_progress_flags, progress_bar
from .value_flags import add_value_flags, value_from_args


def register(commands: Any) -> None:
    erase = commands.add_parser(
        "erase",
        help="erase everything about a user (GDPR Art. 17) and print the receipt",
        description="Removes the user's memories, vectors, full text, episodes, summaries, entities, "
        "profile, procedures, queue items, history and buffer keys, then prints the stored, content-free "
        "receipt.",
    )
    erase.add_argument("--user", required=True, help="user id (a user of the server: TENANT:USER, e.g. default:alice)")
    erase.add_argument("--yes", action="store_true", help="confirm: nothing can be recovered afterwards")
    add_json_flag(erase)
    erase.set_defaults(handler=cmd_erase)

    export = commands.add_parser("export", help="export everything about a user as JSON (GDPR Art. 15/20)")
    export.add_argument("--user", required=True, help="user id")
    export.add_argument("--out", help="write to this file instead of stdout")
    export.add_argument("--json", action="store_true", help="with --out, print what was written as JSON")
    export.set_defaults(handler=cmd_export)

    import_ = commands.add_parser("import", help="restore a user from an export document (idempotent)")
    import_.add_argument("file", help="export document (JSON); '-' reads stdin")
    import_.add_argument("--user", help="import under this user id instead of the document's")
    add_json_flag(import_)
    add_progress_flags(import_)
    import_.set_defaults(handler=cmd_import)

    compact = commands.add_parser(
        "compact",
        help="rewrite the store's files so that erased or deleted text is physically gone",
        description="SQLite: merge the full-text index, VACUUM and truncate the WAL. PostgreSQL: VACUUM "
        "(FULL) every user table through the owner URL (exclusive table locks while it runs), then "
        "CHECKPOINT so the WAL holding erased rows can be recycled. Run after erasures when the bytes "
        "must be gone from the files, not only from every query.",
    )
    compact.set_defaults(handler=cmd_compact)

    sweep = commands.add_parser("sweep", help="delete expired memories and data past its retention")
    sweep.add_argument("--user", help="sweep one user (default: every user)")
    add_json_flag(sweep)
    sweep.set_defaults(handler=cmd_sweep)

    consolidate = commands.add_parser("consolidate", help="compress a user's old memories into summaries")
    consolidate.add_argument("--user", required=True, help="user id")
    add_value_flags(consolidate, ConsolidationOptions)
    add_json_flag(consolidate)
    add_progress_flags(consolidate)
    consolidate.set_defaults(handler=cmd_consolidate)


def cmd_erase(args: argparse.Namespace) -> int:
    if not args.yes:
        raise InvalidInput(f"erasing {args.user!r} cannot be undone; add --yes to confirm")
    from ..server.audit import record_erasure

    with open_memory(args) as memory:
        receipt = memory.erase_user(scope=args.user)  # also applies the audit log's erasure rule
        record_erasure(memory.store, args.user, receipt, operation="cli: memstrata erase")  # names the CLI
    emit(
        args,
        receipt,
        lambda: (
            f"erased: {counts_text(receipt.counts)} in {receipt.duration_ms:.0f} ms\n"
            f"receipt {receipt.request_id} at {receipt.erased_at:%Y-%m-%d %H:%M:%S} UTC\n"
            f"user hash {receipt.algorithm} {receipt.user_hash} (salt {receipt.salt})"
        ),
    )
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        print_json(memory.store.compact())
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        document = memory.export_user(scope=args.user)
    text = document.to_json()
    if not args.out:
        print(text)  # the document is JSON already (with or without --json)
        return 0
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    if args.json:
        print_json({"out": args.out, "counts": document.counts})
    else:
        print(f"exported {counts_text(document.counts)} to {args.out}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    try:
        raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {args.file}: {exc.strerror}") from None
    with open_memory(args, create=True) as memory, progress_bar(args, "import", "memories") as progress:
        report = memory.import_user(raw, scope=args.user, progress=progress)
    emit(
        args,
        report,
        lambda: (
            f"imported into {report.user_id}: {report.memories_written} memories written, "
            f"{report.memories_unchanged} unchanged, {report.events_written} history events, "
            f"{report.items_written} items written ({report.items_unchanged} unchanged, "
            f"{report.items_skipped} skipped); "
            f"embedded with {report.embedder}"
        ),
    )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        report = memory.sweep(scope=args.user)
    emit(
        args,
        report,
        lambda: (
            f"swept {report.users} user(s): {report.expired} expired, {report.retention} past retention, "
            f"{report.sessions} old session item(s) removed"
        ),
    )
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    with open_memory(args) as memory, progress_bar(args, "consolidate", "groups") as progress:
        options = value_from_args(args, ConsolidationOptions)
        report = memory.consolidate(scope=args.user, options=options, progress=progress)
    emit(args, report, lambda: _consolidation_text(report))
    return 0


def _consolidation_text(report: ConsolidationReport) -> str:
    head = f"{report.eligible} eligible, {report.compressed} compressed into {len(report.summaries)} summaries"
    lines = [head + (f" ({report.skipped})" if report.skipped else f", {report.method}")]
    lines += [f"  {g['period']}  {g['kind']}: {g['replaces']} memories -> {g['id']}" for g in report.groups]
    return "\n".join(lines)
