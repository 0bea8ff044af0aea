"""Crypto-shredding that reaches database backups: with a user key directory (`DirectoryKeyProvider`,
`MEMSTRATA_USER_KEY_DIR`), a `pg_dump` taken before an erasure and restored into a fresh database after it
reveals nothing of the erased user with what the operator still holds (the master key and the key
directory), while every other user's data opens. With the master key alone, the same restored dump still
opens the erased user (the reason the directory exists): both are run.
"""

from __future__ import annotations

import base64
import json
import secrets
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memstrata import Memory, StoreError
from memstrata.cli import main
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import ConfigurationError
from memstrata.namespaces import SYSTEM_USER
from memstrata.storage.base import MemoryFilter
from memstrata.storage.crypto import (
    DataKey,
    DirectoryKeyProvider,
    KeyProvider,
    LocalKeyProvider,
    _aesgcm,
    _kek_label,
    _open,
    _Unopenable,
    _wrap_label,
    new_data_key,
)
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.user_keys import _CHECK_LABEL
from tests.lifecycle.test_erasure import Markers
from tests.security.test_crypto_shredding import sealed_values, write_everything, written
from tests.support.pg import admin_url, connect_admin, database_of, postgres_urls

pytestmark = pytest.mark.postgres


def pg_dump(app_url: str) -> str:
    conninfo = make_conninfo(admin_url(), dbname=database_of(app_url))
    done = subprocess.run(["pg_dump", "-d", conninfo], check=True, capture_output=True, timeout=120)
    return done.stdout.decode("utf-8")


@contextmanager
def restored(dump: str, app_url: str, owner_url: str) -> Iterator[tuple[str, str]]:
    """The dump restored with `psql` into a fresh database (same owner and app roles); (app_url, owner_url)."""
    name = f"memstrata_restored_{secrets.token_hex(4)}"
    owner = str(conninfo_to_dict(owner_url)["user"])
    with connect_admin() as admin:
        admin.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(owner)))
        try:
            psql = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", make_conninfo(admin_url(), dbname=name)]
            subprocess.run(psql, input=dump.encode("utf-8"), check=True, capture_output=True, timeout=120)
            yield make_conninfo(app_url, dbname=name), make_conninfo(owner_url, dbname=name)
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def key_rows(database: str) -> dict[str, bytes]:
    with connect_admin(database) as admin:
        return {u: bytes(w) for u, w in admin.execute("SELECT user_id, wrapped FROM user_keys").fetchall()}


def exported(memory: Memory, user: str) -> bytes:
    """The user's export, without when and from which store (database) it was made."""
    document = memory.export_user(scope=user).model_dump(mode="json")
    document.pop("exported_at")
    document.pop("source")
    return json.dumps(document).encode()


@pytest.mark.parametrize("keys", ["master key only", "user key directory"])
def test_a_backup_restored_after_an_erasure_opens_for_everyone_but_the_erased_user(keys: str, tmp_path: Path) -> None:
    master = new_data_key()
    directory = tmp_path / "user-keys"
    directory.mkdir(mode=0o700)
    provider: KeyProvider = (
        LocalKeyProvider(master) if keys == "master key only" else DirectoryKeyProvider(master, directory)
    )
    alice, bob = Markers(f"u{secrets.token_hex(4)}"), Markers(f"o{secrets.token_hex(4)}")
    with postgres_urls() as (app_url, owner_url):
        with PostgresStore.open(app_url, owner_url=owner_url, key_provider=provider) as store:
            memory = write_everything(store, [alice, bob])
            before = exported(memory, bob.user)
            dump = pg_dump(app_url)  # the backup, taken before the erasure
            memory.erase_user(scope=alice.user)
        sealed = sealed_values(dump, alice.user)
        assert len(sealed) > 50, "the backup holds the erased user's sealed rows"

        # What the operator holds now: the master key, and the user key directory after the erasure.
        with (
            restored(dump, app_url, owner_url) as (restored_app, restored_owner),
            PostgresStore.open(restored_app, owner_url=restored_owner, key_provider=provider) as store,
        ):
            memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
            assert exported(memory, bob.user) == before, "every other user's data opens from the backup"
            rows = key_rows(database_of(restored_app))
            assert alice.user in rows and bob.user in rows, "the backup holds both users' wrapped keys"
            if keys == "master key only":
                assert alice.found_in(exported(memory, alice.user)) >= written(alice) - alice.removed
                return
            assert memory.list(scope=alice.user) == [], "the erased user reads as having no data"
            assert memory.search(sorted(written(alice))[0], scope=alice.user) == []
            with pytest.raises(StoreError, match="erased .*restored from a backup: erase the user again"):
                memory.add("alice is back", scope=alice.user)
            assert_nothing_held_opens(master, directory, rows, alice.user, sealed)

            memory.erase_user(scope=alice.user)  # erasing again after a restore removes the rows too
            with connect_admin(database_of(restored_app)) as admin:
                left = admin.execute("SELECT count(*) FROM memories WHERE user_id = %s", [alice.user]).fetchone()
            assert left == (0,) and alice.user not in key_rows(database_of(restored_app))
            assert exported(memory, bob.user) == before
            assert [r.content for r in memory.list(scope=alice.user)] == []
            memory.add("alice is back", scope=alice.user)
            assert [r.content for r in memory.list(scope=alice.user)] == ["alice is back"]


def assert_nothing_held_opens(
    master: bytes, directory: Path, rows: dict[str, bytes], erased: str, sealed: list[tuple[bytes, bytes]]
) -> None:
    """Every key the operator can derive (each key file of the directory opened with the master key, each
    data key those open, the master key itself) fails on the erased user's wrapped key and sealed values."""
    provider = DirectoryKeyProvider(master, directory)
    files = DirectoryKeyProvider(master, directory)._files
    assert not provider._path(erased).exists()
    labels = [label for label in [*rows, SYSTEM_USER, _CHECK_LABEL] if provider._path(label).exists()]
    assert len(labels) == provider.labels_held(), "every key file of the directory is tried"
    keks = [_open(files, base64.b64decode(provider._path(label).read_text()), _kek_label(label)) for label in labels]
    for kek in [*keks, master]:
        with pytest.raises(_Unopenable):
            _open(_aesgcm()(kek), rows[erased], _wrap_label(erased))
    data_keys = [DataKey.of(erased, provider.unwrap(w, label=u), w) for u, w in rows.items() if u != erased]
    for key in [*data_keys, *(DataKey.of(erased, k, b"") for k in [*keks, master])]:
        for raw, aad in sealed[:40]:
            with pytest.raises(StoreError, match="does not open"):
                key.open(raw, aad)


def test_rotating_into_a_user_key_directory_with_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store sealed with the master key alone moves to a user key directory with `store rotate-master-key
    --new-key-dir`; the same directory, or one already holding key files, is refused."""
    old_master, new_master = new_data_key(), new_data_key()
    directory = tmp_path / "keys"
    directory.mkdir()
    key_file = tmp_path / "new.key"
    key_file.write_text(new_master.hex() + "\n")
    with postgres_urls() as (app_url, owner_url):
        with PostgresStore.open(app_url, owner_url=owner_url, key_provider=LocalKeyProvider(old_master)) as store:
            memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
            for user in ("alice", "bob"):
                memory.add(f"{user} keeps bees in Qzvhive", scope=user)
        monkeypatch.setenv("MEMSTRATA_MASTER_KEY", old_master.hex())
        monkeypatch.setenv("MEMSTRATA_STORE_OWNER", owner_url)
        rotate = ["--store", app_url, "store", "rotate-master-key", "--new-key-file", str(key_file)]
        assert main([*rotate, "--new-key-dir", str(directory)]) == 0
        new = DirectoryKeyProvider(new_master, directory)
        assert new.labels_held() == 3  # alice, bob and the master key check
        with pytest.raises(StoreError, match="wrong master key"):
            PostgresStore.open(app_url, owner_url=owner_url, key_provider=LocalKeyProvider(new_master))
        with PostgresStore.open(app_url, owner_url=owner_url, key_provider=new) as store:
            memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
            assert [r.content for r in memory.list(scope="bob")] == ["bob keeps bees in Qzvhive"]
            memory.erase_user(scope="alice")
            assert new.labels_held() == 3  # alice's file gone, the receipt user `_system` got one
            assert not new._path("alice").exists()

        monkeypatch.delenv("MEMSTRATA_MASTER_KEY")
        monkeypatch.setenv("MEMSTRATA_MASTER_KEY_FILE", str(key_file))
        monkeypatch.setenv("MEMSTRATA_USER_KEY_DIR", str(directory))
        with pytest.raises(StoreError, match="another, empty user key directory"):
            PostgresStore.rotate_master_key(app_url, owner_url=owner_url, old=new, new=new)
        with pytest.raises(StoreError, match="already holds key files"):
            other = tmp_path / "other"
            other.mkdir()
            (other / "x.key").write_text("x")
            (other / "memstrata-user-keys").write_text("abcd\n")
            PostgresStore.rotate_master_key(
                app_url, owner_url=owner_url, old=new, new=DirectoryKeyProvider(new_master, other)
            )
        with PostgresStore.open(app_url, owner_url=owner_url, key_provider=new) as store:
            contents = [r.content for r in store.list_memories("bob", MemoryFilter())]
        assert contents == ["bob keeps bees in Qzvhive"]


def test_another_key_directory_is_refused_as_a_wrong_key(tmp_path: Path) -> None:
    master = new_data_key()
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    with postgres_urls() as (app_url, owner_url):
        with PostgresStore.open(
            app_url, owner_url=owner_url, key_provider=DirectoryKeyProvider(master, first)
        ) as store:
            Memory(store=store, embedder=HashingEmbedder(64), track_access=False).add("hello", scope="alice")
        with pytest.raises(StoreError, match="wrong master key"):
            PostgresStore.open(app_url, owner_url=owner_url, key_provider=DirectoryKeyProvider(master, second))


def test_concurrent_first_keys_agree_and_a_missing_directory_is_a_configuration_error(tmp_path: Path) -> None:
    master = new_data_key()
    with pytest.raises(ConfigurationError, match="does not exist"):
        DirectoryKeyProvider(master, tmp_path / "absent")
    providers = [DirectoryKeyProvider(master, tmp_path) for _ in range(8)]
    wrapped: list[bytes] = []
    data_key = new_data_key()
    barrier = threading.Barrier(len(providers))

    def first_write(provider: DirectoryKeyProvider) -> None:
        barrier.wait()
        wrapped.append(provider.wrap(data_key, label="alice"))

    threads = [threading.Thread(target=first_write, args=(p,)) for p in providers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert providers[0].labels_held() == 1 and not list(tmp_path.glob(".*"))
    assert all(p.unwrap(w, label="alice") == data_key for p in providers for w in wrapped)
    providers[0].wrap(data_key, label="bob")
    with pytest.raises(StoreError, match="does not open with its key file"):
        providers[0].unwrap(wrapped[0], label="bob")
    providers[0].destroy("alice")
    with pytest.raises(StoreError, match="shredded"):
        providers[1].unwrap(wrapped[0], label="alice")
    carol = providers[0].wrap(data_key, label="carol")
    with pytest.raises(StoreError, match="not the store's key directory and master key"):
        DirectoryKeyProvider(new_data_key(), tmp_path).unwrap(carol, label="carol")  # file names are keyed too
    providers[0]._path("carol").write_text(providers[0]._path("bob").read_text())
    with pytest.raises(StoreError, match="key file of 'carol' .* does not open with the configured master key"):
        providers[0].unwrap(carol, label="carol")
