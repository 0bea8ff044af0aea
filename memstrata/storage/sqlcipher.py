"""The SQLite store encrypted at rest with SQLCipher (`sqlcipher3`, a DB-API 2.0 driver with wheels).

When a key is configured — `MEMSTRATA_STORE_KEY` (a passphrase) or `MEMSTRATA_STORE_KEY_FILE` (a file
holding it) — the store is one SQLCipher file: every page of the database and of its write-ahead log is
encrypted (AES-256 in CBC mode with an HMAC-SHA512 per page, key derived with PBKDF2-HMAC-SHA512,
SQLCipher 4 defaults). The schema, keyword postings and every query are the same as the plain `SQLiteStore`'s:
this class only changes how the connection is opened.

* A wrong key, or a key for a plain file, is refused before anything is written (`StoreError`).
* An encrypted file opened without a key is refused with a message naming the settings.
* `rekey()` writes a copy under the new key next to the file and swaps it in with one atomic rename, so
  an interruption leaves the old file whole; it also encrypts an existing plain store.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..errors import ConfigurationError, StoreError

SQLITE_HEADER = b"SQLite format 3\x00"
PAGE_CACHE_KIB = 65536
FileState = Literal["missing", "plain", "encrypted"]


class StoreKeySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMSTRATA_", extra="ignore")

    store_key: SecretStr | None = None
    """Passphrase of the encrypted SQLite store."""
    store_key_file: Path | None = None
    """A file holding the passphrase (its first line); keeps the key out of the environment."""


def configured_key(settings: StoreKeySettings | None = None) -> str | None:
    """The store key from the environment or the key file, or None when neither is set."""
    settings = settings or StoreKeySettings()
    if settings.store_key is not None and settings.store_key_file is not None:
        raise ConfigurationError("set MEMSTRATA_STORE_KEY or MEMSTRATA_STORE_KEY_FILE, not both")
    if settings.store_key_file is not None:
        return read_key_file(settings.store_key_file)
    if settings.store_key is not None:
        return check_key(settings.store_key.get_secret_value(), "MEMSTRATA_STORE_KEY")
    return None


def read_key_file(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot read the store key file {path}: {exc.strerror}") from None
    return check_key(text.splitlines()[0] if text.strip() else "", f"key file {path}")


def check_key(key: str, source: str) -> str:
    if not key.strip():
        raise ConfigurationError(f"{source} is empty: an encrypted store needs a non-empty key")
    return key


def file_state(path: str | Path) -> FileState:
    """Whether `path` is absent/empty, a plain SQLite file, or anything else (taken as encrypted)."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return "missing"
    if not header:
        return "missing"
    return "plain" if header == SQLITE_HEADER else "encrypted"


def _literal(key: str) -> str:
    return "'" + key.replace("'", "''") + "'"


def _driver() -> Any:
    try:
        from sqlcipher3 import dbapi2
    except ImportError:
        raise ConfigurationError(
            "an encrypted store (MEMSTRATA_STORE_KEY) needs the sqlcipher3 driver: pip install 'memstrata[encryption]'"
        ) from None
    return dbapi2


def open_encrypted(path: str, key: str, *, timeout: float = 5.0) -> Any:
    """A sqlcipher3 connection to `path` under `key`, checked by reading the schema (nothing written)."""
    if path != ":memory:" and file_state(path) == "plain":
        raise StoreError(
            f"{path} is a plain (unencrypted) SQLite store; encrypt it first with "
            "`memstrata store rekey --new-key-file FILE` (run without MEMSTRATA_STORE_KEY)"
        )
    driver = _driver()
    conn = driver.connect(path, timeout=timeout, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA cipher_log_level = NONE")  # a wrong key is reported as StoreError, not on stderr
    conn.execute(f"PRAGMA key = {_literal(key)}")
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except driver.DatabaseError:
        conn.close()
        raise StoreError(f"cannot open encrypted SQLite store {path}: wrong key (the file is unchanged)") from None
    # Pages are decrypted when they enter SQLite's page cache, so a cache that holds the working set
    # (64 MiB instead of SQLite's 2 MiB) pays the decryption once instead of on every search.
    conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
    return conn


def _sqlite_store_class() -> type:
    from .sqlite import SQLiteStore

    class SQLCipherStore(SQLiteStore):
        """`SQLiteStore` over one SQLCipher-encrypted file."""

        driver_errors = (*SQLiteStore.driver_errors, _driver().Error)

        def __init__(self, path: str | Path, *, key: str, **options: Any) -> None:
            self._key = check_key(key, "the store key")
            super().__init__(path, **options)
            self.url = f"sqlite:///{self.path} (encrypted)"

        def _connect(self, timeout: float) -> Any:
            return open_encrypted(self.path, self._key, timeout=timeout)

    return SQLCipherStore


def encrypted_store(path: str | Path, key: str, **options: Any) -> Any:
    """Open (or create) the encrypted store at `path`."""
    return _sqlite_store_class()(path, key=key, **options)


def rekey(path: str | Path, *, old_key: str | None, new_key: str) -> None:
    """Re-encrypt the store at `path` under `new_key` (`old_key` None: encrypt a plain store).

    Exports every table into `<path>.rekey` under the new key (`sqlcipher_export`, schema version kept),
    then renames it over the original. The store must not be open elsewhere (its write-ahead log must be
    gone once this connection closes), else nothing is replaced."""
    path = str(path)
    check_key(new_key, "the new key")
    state = file_state(path)
    if state == "missing":
        raise StoreError(f"no store at {path}")
    if old_key is None and state == "encrypted":
        raise StoreError(f"{path} is encrypted: give its current key (MEMSTRATA_STORE_KEY or MEMSTRATA_STORE_KEY_FILE)")
    target = f"{path}.rekey"
    Path(target).unlink(missing_ok=True)
    conn = open_encrypted(path, old_key) if old_key is not None else _driver().connect(path, isolation_level=None)
    try:
        version = cast(int, conn.execute("PRAGMA user_version").fetchone()[0])
        conn.execute(f"ATTACH DATABASE ? AS rekeyed KEY {_literal(new_key)}", (target,))
        conn.execute("SELECT sqlcipher_export('rekeyed')")
        conn.execute(f"PRAGMA rekeyed.user_version = {int(version)}")
        conn.execute("DETACH DATABASE rekeyed")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    if os.path.exists(f"{path}-wal") and os.path.getsize(f"{path}-wal") > 0:
        Path(target).unlink(missing_ok=True)
        raise StoreError(f"{path} is open in another process (its write-ahead log is in use): stop it and retry")
    for stale in (f"{path}-wal", f"{path}-shm"):
        Path(stale).unlink(missing_ok=True)
    os.replace(target, path)
