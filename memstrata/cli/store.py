"""`memstrata store rekey`: re-encrypt the SQLite store under a new key, or encrypt a plain one.
`memstrata store rotate-master-key`: rewrap the PostgreSQL store's per-user data keys under a new master key."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..settings import Settings


def register(commands: Any) -> None:
    store = commands.add_parser("store", help="maintenance of the store's encryption at rest (keys)")
    actions = store.add_subparsers(dest="store_action", required=True, metavar="ACTION")
    rekey = actions.add_parser(
        "rekey",
        help="re-encrypt the store under a new key (current key from MEMSTRATA_STORE_KEY / _FILE; "
        "without one, encrypt a plain store); stop the server first",
    )
    rekey.add_argument("--new-key-file", type=Path, required=True, help="file holding the new key (first line)")
    rekey.set_defaults(handler=cmd_rekey)
    rotate = actions.add_parser(
        "rotate-master-key",
        help="PostgreSQL: rewrap every user's data key under a new master key (current key from "
        "MEMSTRATA_MASTER_KEY / _FILE); stop the servers first",
    )
    rotate.add_argument("--new-key-file", type=Path, required=True, help="file holding the new master key (first line)")
    rotate.add_argument(
        "--new-key-dir", type=Path, help="an empty directory for the users' key files (MEMSTRATA_USER_KEY_DIR next)"
    )
    rotate.set_defaults(handler=cmd_rotate_master_key)


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


def cmd_rotate_master_key(args: argparse.Namespace) -> int:
    from ..storage.crypto import configured_key_provider, key_provider, read_key_file
    from ..storage.postgres import PostgresStore

    settings = Settings()
    url = args.store or settings.store
    if not url.startswith(("postgresql://", "postgres://")):
        raise UsageError("store rotate-master-key works on PostgreSQL stores only (SQLite: store rekey)")
    old = configured_key_provider()
    if old is None:
        raise UsageError("set MEMSTRATA_MASTER_KEY or MEMSTRATA_MASTER_KEY_FILE to the current master key")
    new = key_provider(
        read_key_file(args.new_key_file), args.new_key_dir, source=f"master key file {args.new_key_file}"
    )
    count = PostgresStore.rotate_master_key(url, owner_url=settings.store_owner, old=old, new=new)
    where = "" if args.new_key_dir is None else f" and MEMSTRATA_USER_KEY_DIR to {args.new_key_dir}"
    print(
        f"rewrapped {count} data keys under the master key in {args.new_key_file}; set MEMSTRATA_MASTER_KEY_FILE to "
        f"it{where}, then destroy the old key (and the old user key directory, if any)",
        file=sys.stderr,
    )
    return 0
