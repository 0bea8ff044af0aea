"""`memstrata store rekey`: re-encrypt the SQLite store under a new key, or encrypt a plain one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..settings import Settings


def register(commands: Any) -> None:
    store = commands.add_parser("store", help="maintenance of the embedded SQLite store (encryption at rest)")
    actions = store.add_subparsers(dest="store_action", required=True, metavar="ACTION")
    rekey = actions.add_parser(
        "rekey",
        help="re-encrypt the store under a new key (current key from MEMSTRATA_STORE_KEY / _FILE; "
        "without one, encrypt a plain store); stop the server first",
    )
    rekey.add_argument("--new-key-file", type=Path, required=True, help="file holding the new key (first line)")
    rekey.set_defaults(handler=cmd_rekey)


def cmd_rekey(args: argparse.Namespace) -> int:
    from ..storage.sqlcipher import configured_key, read_key_file, rekey

    url = args.store or Settings().store
    if not url.startswith("sqlite://") and "://" in url:
        raise UsageError(f"store rekey works on SQLite stores only, not {url.split('://')[0]}")
    path = url.removeprefix("sqlite://").removeprefix("/")
    old_key = configured_key()
    rekey(path, old_key=old_key, new_key=read_key_file(args.new_key_file))
    done = "re-encrypted" if old_key is not None else "encrypted"
    print(f"{done} {path} under the key in {args.new_key_file}; set MEMSTRATA_STORE_KEY_FILE to it", file=sys.stderr)
    return 0
