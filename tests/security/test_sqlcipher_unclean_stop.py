"""An encrypted SQLite store after an unclean stop: a process writing to it is killed with SIGKILL in the
middle of a transaction, leaving a write-ahead log (or a hot rollback journal). Opening it with a wrong key
is refused and changes no byte of the `.db`, `-wal`, `-shm` or `-journal` files; the right key then
recovers every acknowledged write and none of the killed transaction."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata.errors import StoreError
from memstrata.storage import open_store
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlcipher import CIPHER_PAGE_SIZE, page_key

pytest.importorskip("sqlcipher3")

KEY = "correct horse battery staple"
ACKNOWLEDGED = 12

# The child writes through the store (WAL) or, for the rollback journal, through the driver with
# journal_mode=DELETE and a tiny page cache, so the open transaction spills pages into the file first.
WRITER = r"""
import sys
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.memory import Memory
from memstrata.storage import open_store

path, key, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
memory = Memory(store=open_store(path, key=key), embedder=HashingEmbedder(64), track_access=False)
if mode == "wal":
    for i in range(count):
        memory.add(f"acknowledged note {i}", scope="alice")
        print(f"ack {i}", flush=True)
    conn = memory.store._conn
else:
    memory.close()
    from sqlcipher3 import dbapi2
    from memstrata.storage.sqlcipher import _literal
    conn = dbapi2.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA key = {_literal(key)}")
    conn.execute("PRAGMA journal_mode = DELETE").fetchone()
    conn.execute("PRAGMA cache_size = 8")
    for i in range(count):
        conn.execute(
            "INSERT INTO items (user_id, namespace, key, value, updated_at) VALUES ('alice', 'acked', ?, '{}', 1)",
            (f"k{i}",),
        )
        print(f"ack {i}", flush=True)
conn.execute("BEGIN IMMEDIATE")
for i in range(3000):
    conn.execute(
        "INSERT INTO items (user_id, namespace, key, value, updated_at) VALUES ('alice', 'killed', ?, ?, 1)",
        (f"k{i}", "x" * 400),
    )
print("in the middle", flush=True)
import time
time.sleep(120)
"""


def kill_mid_transaction(db: Path, mode: str) -> int:
    """Run the writer, SIGKILL it inside its open transaction; return how many writes it acknowledged."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), KEY, mode, str(ACKNOWLEDGED)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    acknowledged = 0
    try:
        for line in child.stdout:
            if line.startswith("ack"):
                acknowledged += 1
            if line.startswith("in the middle"):
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    return acknowledged


def fingerprints(db: Path) -> dict[str, str]:
    siblings = [db, *(Path(f"{db}{suffix}") for suffix in ("-wal", "-shm", "-journal"))]
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in siblings if p.exists()}


@pytest.mark.parametrize("mode", ["wal", "journal"])
def test_a_wrong_key_after_an_unclean_stop_changes_no_byte(tmp_path: Path, mode: str) -> None:
    db = tmp_path / "m.db"
    acknowledged = kill_mid_transaction(db, mode)
    assert acknowledged == ACKNOWLEDGED
    before = fingerprints(db)
    left = {"wal": {"m.db-wal", "m.db-shm"}, "journal": {"m.db-journal"}}[mode]
    assert left <= set(before), f"the killed writer left {sorted(before)}"

    for wrong in ("not the key", "x'" + "ab" * 32 + "'"):
        with pytest.raises(StoreError, match="wrong key .*unchanged"):
            open_store(db, key=wrong)
        assert fingerprints(db) == before, "a refused open changed the store's files"

    store = open_store(db, key=KEY)
    try:
        if mode == "wal":
            contents = {r.content for r in store.list_memories("alice", MemoryFilter(), limit=100)}
            assert contents == {f"acknowledged note {i}" for i in range(ACKNOWLEDGED)}
        else:
            assert sorted(i.key for i in store.list_items("alice", "acked")) == sorted(
                f"k{i}" for i in range(ACKNOWLEDGED)
            )
        assert store.list_items("alice", "killed") == [], "the killed transaction was rolled back"
    finally:
        store.close()


def test_a_torn_first_page_opens_from_its_copy_in_the_log(tmp_path: Path) -> None:
    """After a crash in the middle of a checkpoint the file's own first page may be half written; the key
    check then finds page 1 in the write-ahead log, like SQLite itself does, instead of calling the right
    key wrong."""
    db = tmp_path / "m.db"
    kill_mid_transaction(db, "wal")
    with open(db, "rb") as handle:
        page = handle.read(CIPHER_PAGE_SIZE)
    assert page_key(page, KEY) is not None and page_key(page, "not the key") is None
    torn = page[: CIPHER_PAGE_SIZE // 2] + bytes(CIPHER_PAGE_SIZE // 2)
    with open(db, "r+b") as handle:
        handle.write(torn)
    assert page_key(torn, KEY) is None
    before = fingerprints(db)
    with pytest.raises(StoreError, match="wrong key"):
        open_store(db, key="not the key")
    assert fingerprints(db) == before
    store = open_store(db, key=KEY)
    try:
        assert len(store.list_memories("alice", MemoryFilter(), limit=100)) == ACKNOWLEDGED
    finally:
        store.close()


def test_page_key_accepts_the_raw_key_syntax(tmp_path: Path) -> None:
    """SQLCipher reads `x'<64 hex>'` (and `x'<64 hex><32 hex salt>'`) as a raw key; the check does too."""
    db = tmp_path / "m.db"
    open_store(db, key=KEY).close()
    with open(db, "rb") as handle:
        page = handle.read(CIPHER_PAGE_SIZE)
    derived = page_key(page, KEY)
    assert derived is not None
    salt = page[:16].hex()
    assert page_key(page, f"x'{derived.hex()}'") == derived
    assert page_key(page, f"X'{derived.hex()}{salt}'") == derived
    assert page_key(page, f"x'{derived.hex()}{'00' * 16}'") is None, "another salt is another key"
    open_store(db, key=f"x'{derived.hex()}'").close()
