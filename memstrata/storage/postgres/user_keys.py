"""Per-user data keys of the PostgreSQL store (crypto-shredding): the `user_keys` table, the in-process
cache of unwrapped keys, and the store's record of which master key it was encrypted with.

A key row holds only the data key wrapped by the master key (or, with a user key directory, by the user's
own key-encryption key kept outside the database: `crypto.DirectoryKeyProvider`). It is created by the
user's first write, inside that write's transaction (under the user's advisory lock, like every write),
and deleted by the user's erasure in the erasure's transaction; a provider that keeps a key per user
apart destroys it there too (`shred`), before the commit, under the user's exclusive lock, so no write can
wrap a new key under the key being destroyed. A cached key is used only while the row it was read from
is unchanged: every transaction compares the stored wrapped bytes with the cached ones, so a key that
another process destroyed (erasure) is never used to write or read again. The payloads opened with a key
(`crypto.OpenedCache`) are dropped with it: on erasure, and when a read finds the key row gone or changed.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import psycopg

from ...errors import StoreError
from ..crypto import (
    DataKey,
    DirectoryKeyProvider,
    KeyCache,
    KeyProvider,
    OpenedCache,
    ShreddingKeyProvider,
    new_data_key,
)

SELECT_KEY = "SELECT wrapped FROM user_keys WHERE user_id = %s"
INSERT_KEY = "INSERT INTO user_keys (user_id, wrapped) VALUES (%s, %s) ON CONFLICT (user_id) DO NOTHING"
DELETE_KEY = "DELETE FROM user_keys WHERE user_id = %s"

ENCRYPTION_META = "encryption"
"""`meta` key recording that the store is sealed, with which master key (its id and a wrapped check value)."""
_CHECK_LABEL = "memstrata master key check"
_CHECK_VALUE = b"memstrata master key check value"


class UserKeys:
    """The data keys of one store: read, created, cached and forgotten through the store's cursors."""

    def __init__(self, provider: KeyProvider, *, cache_size: int = 1024, opened_cache_size: int = 10_000) -> None:
        self.provider = provider
        self.cache = KeyCache(cache_size)
        self.opened = OpenedCache(opened_cache_size)
        """Memory payloads already opened, shared by every read of the store (`crypto.OpenedCache`)."""

    def cached(self, user_id: str) -> DataKey | None:
        return self.cache.get(user_id)

    def from_wrapped(self, user_id: str, wrapped: bytes | None) -> DataKey | None:
        """The key a read found (None: the user has no key, hence no data), reusing the cached unwrap
        while the wrapped bytes are unchanged."""
        cached = self.cache.get(user_id)
        if cached is not None and cached.wrapped == wrapped:
            return cached
        if cached is not None:  # destroyed (erased elsewhere) or replaced: nothing opened with it is kept
            self.forget(user_id)
        if wrapped is None or self.shredded(user_id):
            return None
        key = DataKey.of(user_id, self.provider.unwrap(wrapped, label=user_id), wrapped)
        self.cache.put(key)
        return key

    def read(self, cur: psycopg.Cursor[Any], user_id: str) -> DataKey | None:
        return self.from_wrapped(user_id, _stored(cur, user_id))

    def read_or_create(self, cur: psycopg.Cursor[Any], user_id: str) -> DataKey:
        """The user's key, created (random, stored wrapped) when the user has none yet. Concurrent
        first writes agree on one key: the insert of the second does nothing and it reads the first's."""
        wrapped = _stored(cur, user_id)
        if wrapped is not None and self.shredded(user_id):
            raise StoreError(
                f"user {user_id!r} was erased (its key is shredded), but its key row is back, restored from a "
                "backup: erase the user again before writing (`memstrata erase --user …`)"
            )
        key = self.from_wrapped(user_id, wrapped)
        if key is not None:
            return key
        cur.execute(INSERT_KEY, [user_id, self.provider.wrap(new_data_key(), label=user_id)])
        key = self.read(cur, user_id)
        if key is None:  # pragma: no cover - the row was inserted just above in this transaction
            raise StoreError(f"the data key of user {user_id!r} could not be stored")
        return key

    def shredded(self, user_id: str) -> bool:
        """Whether the provider destroyed what it kept of the user (erased): a key row for such a user is
        a copy restored from a backup, and the user reads as having no data."""
        return isinstance(self.provider, ShreddingKeyProvider) and not self.provider.holds(user_id)

    def shred(self, user_id: str) -> None:
        """Destroy what the provider keeps of the user outside the database (nothing for a master key
        alone). Called by erasure after deleting the key row, before its commit: if the commit then fails,
        the user's rows are left unreadable, and erasing again completes the erasure."""
        if isinstance(self.provider, ShreddingKeyProvider):
            self.provider.destroy(user_id)

    def forget(self, user_id: str) -> None:
        """Drop the user's key and every payload opened with it (erasure)."""
        key = self.cache.get(user_id)
        self.cache.drop(user_id)
        if key is not None:
            self.opened.drop(key)


def _stored(cur: psycopg.Cursor[Any], user_id: str) -> bytes | None:
    cur.execute(SELECT_KEY, [user_id])
    row = cur.fetchone()
    return None if row is None else bytes(row[0])


def check_encryption(conn: psycopg.Connection[Any], provider: KeyProvider | None, where: str) -> None:
    """Refuse to open a store with the wrong master key, without one when its rows are sealed, or with
    one when it already holds plain rows; record the master key on a store's first encrypted open.
    Runs as the owner (it may write `meta`), after the migrations."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || 'memstrata.encryption'))")
        cur.execute("SELECT value FROM meta WHERE key = %s", [ENCRYPTION_META])
        row = cur.fetchone()
        if row is not None:
            _check_recorded(str(row[0]), provider, where)
            return
        if provider is None:
            return
        cur.execute("SELECT EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM items)")
        held = cur.fetchone()
        if held is not None and held[0]:
            raise StoreError(
                f"{where} holds unencrypted memories, so a master key cannot be used with it: export the "
                "users and import them into a new store opened with the master key, or unset MEMSTRATA_MASTER_KEY"
            )
        cur.execute("INSERT INTO meta (key, value) VALUES (%s, %s)", [ENCRYPTION_META, _record(provider)])


def rotate_master_key(conn: psycopg.Connection[Any], old: KeyProvider, new: KeyProvider, where: str) -> int:
    """Rewrap every data key under `new` (the data keys and the sealed rows stay as they are) and record
    `new` as the store's master key, in one transaction, as the owner; return how many keys were rewrapped.
    Copies of `user_keys` made before (WAL, backups, dead rows until `compact`) stay wrapped under `old`:
    once `old` is destroyed, a data key erased before the rotation opens from none of them."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || 'memstrata.encryption'))")
        cur.execute("LOCK TABLE user_keys IN EXCLUSIVE MODE")  # no first write may wrap a key under `old` meanwhile
        cur.execute("SELECT value FROM meta WHERE key = %s", [ENCRYPTION_META])
        row = cur.fetchone()
        if row is None:
            raise StoreError(f"{where} is not encrypted: there is no master key to rotate")
        _check_recorded(str(row[0]), old, where)
        _check_rotation(old, new)
        cur.execute("SELECT user_id, wrapped FROM user_keys")
        rewrapped = [
            (new.wrap(old.unwrap(bytes(wrapped), label=user), label=user), user) for user, wrapped in cur.fetchall()
        ]
        cur.executemany("UPDATE user_keys SET wrapped = %s WHERE user_id = %s", rewrapped)
        cur.execute("UPDATE meta SET value = %s WHERE key = %s", [_record(new), ENCRYPTION_META])
    return len(rewrapped)


def _check_rotation(old: KeyProvider, new: KeyProvider) -> None:
    """A user key directory is rotated into another, new directory: the old one (and its backups) is
    then destroyed whole, and with it every key file of a user erased before the rotation."""
    if not isinstance(new, DirectoryKeyProvider):
        return
    if isinstance(old, DirectoryKeyProvider) and old.directory.resolve() == new.directory.resolve():
        raise StoreError(f"rotate into another, empty user key directory, not {new.directory} itself")
    if new.labels_held():
        raise StoreError(f"the new user key directory {new.directory} already holds key files: give an empty one")


def _record(provider: KeyProvider) -> str:
    check = base64.b64encode(provider.wrap(_CHECK_VALUE, label=_CHECK_LABEL)).decode("ascii")
    return f"aes-256-gcm:{provider.key_id}:{check}"


def _check_recorded(recorded: str, provider: KeyProvider | None, where: str) -> None:
    _, key_id, check = (recorded.split(":", 2) + ["", ""])[:3]
    if provider is None:
        raise StoreError(
            f"{where} is encrypted (master key id {key_id}): set MEMSTRATA_MASTER_KEY or MEMSTRATA_MASTER_KEY_FILE "
            "to open it"
        )
    try:
        wrapped = base64.b64decode(check, validate=True)
        opened = provider.unwrap(wrapped, label=_CHECK_LABEL)
    except (ValueError, binascii.Error, StoreError):
        opened = b""
    if opened != _CHECK_VALUE:
        raise StoreError(
            f"wrong master key for {where}: it was encrypted with master key id {key_id}, the configured key "
            f"has id {provider.key_id} (nothing was read or written)"
        )
