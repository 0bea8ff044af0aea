"""The SQLite store encrypted at rest (SQLCipher): marker strings written through every layer never appear
in the database file, its write-ahead log or shared-memory file; wrong, missing or misplaced keys are
refused without touching the file; rekey and encrypting a plain store keep every row."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memstrata.cli import main as cli_main
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import ConfigurationError, StoreError
from memstrata.memory import Memory
from memstrata.storage import open_store
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlcipher import file_state

KEY = "correct horse battery staple"
MARKERS = {
    "memory": "QUOKKA-MEMORY-4411",
    "superseded": "QUOKKA-OLDJOB-4412",
    "metadata": "QUOKKA-META-4413",
    "fact": "QUOKKA-FACT-4414",
    "entity": "QUOKKA-ENTITY-4415",
    "procedure": "QUOKKA-PROC-4416",
    "queued": "QUOKKA-QUEUE-4417",
}


def write_every_layer(memory: Memory) -> None:
    scope = "acme:alice"
    memory.add(f"Alice's locker code is {MARKERS['memory']}", scope=scope, metadata={"tag": MARKERS["metadata"]})
    job = memory.add(f"Alice works at {MARKERS['superseded']}", scope=scope)
    memory.supersede(job.id, "Alice works at Globex", scope=scope, reason="new job")  # old text stays in history
    memory.set_fact("work", "badge", MARKERS["fact"], scope=scope)
    memory.upsert_entity("Bob", scope=scope, type="person", summary=f"Alice's friend {MARKERS['entity']}")
    memory.add_procedure("greeting", scope=scope, instruction=f"Say {MARKERS['procedure']} first")
    memory.learn_later([{"role": "user", "content": f"I collect {MARKERS['queued']} stamps"}], scope=scope)


def files_of(db: Path) -> list[Path]:
    return [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]


def occurrences(db: Path) -> dict[str, int]:
    blobs = [p.read_bytes() for p in files_of(db)]
    return {name: sum(b.count(marker.encode()) for b in blobs) for name, marker in MARKERS.items()}


def open_memory(db: Path, key: str | None) -> Memory:
    return Memory(store=open_store(db, key=key) if key else f"sqlite:///{db}", embedder=HashingEmbedder(64))


def test_no_marker_in_the_encrypted_files_open_or_closed(tmp_path: Path) -> None:
    plain, encrypted = tmp_path / "plain.db", tmp_path / "encrypted.db"
    for db, key in ((plain, None), (encrypted, KEY)):
        memory = open_memory(db, key)
        try:
            write_every_layer(memory)
            open_counts = occurrences(db)  # while open: the write-ahead log holds the newest pages
            assert any(p.name.endswith("-wal") for p in files_of(db))
        finally:
            memory.close()
        closed_counts = occurrences(db)
        if key is None:  # the same writes in the plain store are readable: the scan would see them
            assert all(n > 0 for n in open_counts.values()), open_counts
        else:
            assert open_counts == dict.fromkeys(MARKERS, 0) and closed_counts == dict.fromkeys(MARKERS, 0)
    assert file_state(encrypted) == "encrypted" and file_state(plain) == "plain"


def test_retrieval_and_fts_work_encrypted(tmp_path: Path) -> None:
    memory = open_memory(tmp_path / "m.db", KEY)
    try:
        write_every_layer(memory)
        hits = memory.search("locker code", scope="acme:alice", k=3, strategy="keyword")
        assert MARKERS["memory"] in hits[0].memory.content
        assert memory.facts(scope="acme:alice")[0].value == MARKERS["fact"]
    finally:
        memory.close()


def test_wrong_missing_and_misplaced_keys_are_refused_and_change_nothing(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    memory = open_memory(db, KEY)
    write_every_layer(memory)
    memory.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    with pytest.raises(StoreError, match="wrong key"):
        open_store(db, key="not the key")
    with pytest.raises(StoreError, match="MEMSTRATA_STORE_KEY"):
        open_store(db)
    with pytest.raises(ConfigurationError, match="empty"):
        open_store(db, key=" ")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before and not Path(f"{db}-wal").exists()
    plain = tmp_path / "plain.db"
    open_memory(plain, None).close()
    with pytest.raises(StoreError, match="plain .unencrypted. SQLite store"):
        open_store(plain, key=KEY)


def test_key_file_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = tmp_path / "store.key"
    key_file.write_text(KEY + "\n")
    db = tmp_path / "m.db"
    monkeypatch.setenv("MEMSTRATA_STORE_KEY_FILE", str(key_file))
    store = open_store(f"sqlite:///{db}")
    store.close()
    assert file_state(db) == "encrypted"
    open_store(db, key=KEY).close()  # the file's first line is the key
    monkeypatch.setenv("MEMSTRATA_STORE_KEY", KEY)
    with pytest.raises(ConfigurationError, match="not both"):
        open_store(db)


def test_rekey_and_encrypt_a_plain_store_with_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "m.db"
    memory = open_memory(db, None)
    write_every_layer(memory)
    memory.close()
    first, second = tmp_path / "first.key", tmp_path / "second.key"
    first.write_text("first key\n")
    second.write_text("second key\n")
    monkeypatch.delenv("MEMSTRATA_STORE_KEY", raising=False)
    assert cli_main(["--store", f"sqlite:///{db}", "store", "rekey", "--new-key-file", str(first)]) == 0
    assert occurrences(db) == dict.fromkeys(MARKERS, 0)
    monkeypatch.setenv("MEMSTRATA_STORE_KEY_FILE", str(first))
    assert cli_main(["--store", f"sqlite:///{db}", "store", "rekey", "--new-key-file", str(second)]) == 0
    with pytest.raises(StoreError, match="wrong key"):
        open_store(db, key="first key")
    store = open_store(db, key="second key")
    try:
        contents = [r.content for r in store.list_memories("acme:alice", MemoryFilter(), limit=100)]
        history = store.all_history("acme:alice")
    finally:
        store.close()
    assert any(MARKERS["memory"] in c for c in contents)
    assert any(MARKERS["superseded"] in (e.before or "") for e in history)
    assert not Path(f"{db}.rekey").exists()
