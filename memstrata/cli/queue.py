"""`memstrata queue status | work`: the durable background queue."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_json_flag, open_memory, print_json


def register(commands: Any) -> None:
    queue = commands.add_parser("queue", help="background learning queue")
    actions = queue.add_subparsers(dest="action", required=True, metavar="ACTION")
    status = actions.add_parser("status", help="counts per status and the failures with their errors")
    add_json_flag(status)
    status.set_defaults(handler=cmd_status)
    work = actions.add_parser("work", help="run pending jobs now")
    work.add_argument("--limit", type=int, default=100, help="at most this many jobs (default 100)")
    add_json_flag(work)
    work.set_defaults(handler=cmd_work)


def cmd_status(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        status = memory.queue_status()
    if args.json:
        print_json({"counts": status.counts, "failures": status.failures})
    else:
        print("  ".join(f"{k}: {v}" for k, v in status.counts.items()))
        for failure in status.failures:
            print(
                f"{failure['status']:8} {failure['user_id']} {failure['id']} attempts={failure['attempts']} "
                f"{failure['error']}"
            )
    return 1 if status.counts.get("failed") else 0


def cmd_work(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        ran = memory.process_queue(limit=args.limit)
        status = memory.queue_status()
    print_json({"ran": ran, "counts": status.counts}) if args.json else print(f"ran {ran} job(s); {status.counts}")
    return 0
