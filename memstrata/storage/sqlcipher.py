"""The SQLite store encrypted at rest with SQLCipher (`sqlcipher3`, a DB-API 2.0 driver with wheels).

When a key is configured — `MEMSTRATA_STORE_KEY` (a passphrase) or `MEMSTRATA_STORE_KEY_FILE` (a file
holding it) — the store is one SQLCipher file: every page of the database and of its write-ahead log is
encrypted (AES-256 in CBC mode with an HMAC-SHA512 per page, key derived with PBKDF2-HMAC-SHA512,
SQLCipher 4 defaults). The schema, keyword postings and every query are the same as the plain `SQLiteStore`'s:
this class only changes how the connection is opened.

* A wrong key, or a key for a plain file, is refused before SQLite opens any of the store's files
  (`StoreError`): the key is checked against the HMAC of the file's first page in Python, so a
  write-ahead log or rollback journal left by an unclean stop is neither recovered, checkpointed nor
  rolled back under a key that does not open it. The `.db`, `-wal`, `-shm` and `-journal` files keep
  every byte. Only then is the file opened read-write, with the key already derived.
* An encrypted file opened without a key is refused with a message naming the settings.
* `rekey()` writes a copy under the new key next to the file and swaps it in with one atomic rename, so
  an interruption leaves the old file whole; it also encrypts an existing plain store.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..errors import ConfigurationError, StoreError

SQLITE_HEADER = b"SQLite format 3\x00"
PAGE_CACHE_KIB = 65536

# The SQLCipher 4 defaults the store is written with (`PRAGMA cipher_default_*` are never changed):
# 4 KiB pages whose first 16 bytes (page 1 only) are the KDF salt, and whose last 80 reserved bytes
# hold a 16-byte IV and a 64-byte HMAC-SHA512 of the page's ciphertext, IV and page number.
CIPHER_PAGE_SIZE = 4096
SALT_BYTES = 16
KDF_ITERATIONS = 256_000
HMAC_KDF_ITERATIONS = 2
HMAC_SALT_MASK = 0x3A
RESERVE_BYTES = 80
IV_BYTES = 16
HMAC_BYTES = 64
KEY_BYTES = 32
WAL_HEADER_BYTES = 32
WAL_FRAME_HEADER_BYTES = 24
JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")
_RAW_KEY = re.compile(r"x'([0-9a-fA-F]{64})([0-9a-fA-F]{32})?'", re.IGNORECASE)
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
            "an encrypted store (MEMSTRATA_STORE_KEY) needs the sqlcipher3 driver: "
            "pip install 'memstrata-ai[encryption]'"
        ) from None
    return dbapi2


def open_encrypted(path: str, key: str, *, timeout: float = 5.0) -> Any:
    """A sqlcipher3 connection to `path` under `key`. An existing file's key is checked first without
    SQLite (`verified_key`: nothing is opened for writing until it matches), then the schema is read."""
    state = "missing" if path == ":memory:" else file_state(path)
    if state == "plain":
        raise StoreError(
            f"{path} is a plain (unencrypted) SQLite store; encrypt it first with "
            "`memstrata store rekey --new-key-file FILE` (run without MEMSTRATA_STORE_KEY)"
        )
    pragma_key = key if state == "missing" else verified_key(path, key)
    driver = _driver()
    conn = driver.connect(path, timeout=timeout, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA cipher_log_level = NONE")  # failures are reported as StoreError, not on stderr
    conn.execute(f"PRAGMA key = {_literal(pragma_key)}")
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except driver.DatabaseError as exc:
        conn.close()
        raise StoreError(f"cannot read encrypted SQLite store {path}: {exc}") from None
    # Pages are decrypted when they enter SQLite's page cache, so a cache that holds the working set
    # (64 MiB instead of SQLite's 2 MiB) pays the decryption once instead of on every search.
    conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
    return conn


def verified_key(path: str, key: str) -> str:
    """The raw-key form (`x'<key><salt>'`) of `key` for the SQLCipher file `path`, or `StoreError` when
    `key` opens no copy of the file's first page: the one in the file, or, after an unclean stop, one in
    its write-ahead log or rollback journal (the file's own copy may be half written then). Only reads.
    Passing the derived key on spares SQLCipher a second key derivation."""
    derived: dict[bytes, bytes | None] = {}  # by salt: the key derivation is the slow part
    for page in first_pages(path):
        salt = page[:SALT_BYTES]
        if salt not in derived:
            derived[salt] = derive_key(key, salt)
        raw = derived[salt]
        if raw is not None and page_signed_by(page, raw):
            return f"x'{raw.hex()}{salt.hex()}'"
    raise StoreError(
        f"cannot open encrypted SQLite store {path}: wrong key (it does not match the file's first page; "
        "the store's files were not opened for writing and are unchanged)"
    )


def first_pages(path: str) -> Iterator[bytes]:
    """Every stored image of page 1 of `path`: the file's, then the write-ahead log's and the rollback
    journal's (read only when the ones before did not match the key)."""
    with open(path, "rb") as handle:
        yield handle.read(CIPHER_PAGE_SIZE)
    yield from _wal_first_pages(f"{path}-wal")
    yield from _journal_first_pages(f"{path}-journal")


def _wal_first_pages(wal: str) -> Iterator[bytes]:
    try:
        with open(wal, "rb") as handle:
            header = handle.read(WAL_HEADER_BYTES)
            if len(header) < WAL_HEADER_BYTES or int.from_bytes(header[8:12], "big") != CIPHER_PAGE_SIZE:
                return
            yield from _pages_numbered_one(handle, WAL_HEADER_BYTES, WAL_FRAME_HEADER_BYTES, 0)
    except FileNotFoundError:
        return


def _journal_first_pages(journal: str) -> Iterator[bytes]:
    try:
        with open(journal, "rb") as handle:
            header = handle.read(28)
            if header[:8] != JOURNAL_MAGIC or int.from_bytes(header[24:28], "big") != CIPHER_PAGE_SIZE:
                return
            start = int.from_bytes(header[20:24], "big") or 512  # the header fills one sector
            yield from _pages_numbered_one(handle, start, 4, 4)  # page number, page, checksum
    except FileNotFoundError:
        return


def _pages_numbered_one(handle: BinaryIO, start: int, before: int, after: int) -> Iterator[bytes]:
    """The images of page 1 in a log of records `[before bytes starting with the page number][page][after]`."""
    offset = start
    while True:
        handle.seek(offset)
        header = handle.read(before)
        if len(header) < before:
            return
        if int.from_bytes(header[:4], "big") == 1:
            yield handle.read(CIPHER_PAGE_SIZE)
        offset += before + CIPHER_PAGE_SIZE + after


def page_key(page: bytes, key: str) -> bytes | None:
    """The 32-byte encryption key `key` gives for the SQLCipher 4 database whose first page is `page`,
    or None when the page's HMAC does not verify under it (wrong key, or not such a page). Pure."""
    if len(page) != CIPHER_PAGE_SIZE:
        return None
    derived = derive_key(key, page[:SALT_BYTES])
    return derived if derived is not None and page_signed_by(page, derived) else None


def derive_key(key: str, salt: bytes) -> bytes | None:
    """The encryption key of `key` for a file with `salt` (pure). `key` is a passphrase (PBKDF2-HMAC-SHA512
    with the salt) or SQLCipher's raw-key syntax `x'<64 hex digits>'`, optionally followed by 32 hex
    digits of salt: None when that salt is not the file's."""
    raw = _RAW_KEY.fullmatch(key)
    if raw is None:
        return hashlib.pbkdf2_hmac("sha512", key.encode("utf-8"), salt, KDF_ITERATIONS, KEY_BYTES)
    if raw.group(2) is not None and bytes.fromhex(raw.group(2)) != salt:
        return None
    return bytes.fromhex(raw.group(1))


def page_signed_by(page: bytes, derived: bytes) -> bool:
    """Whether the HMAC-SHA512 stored in first page `page` verifies under the encryption key `derived` (pure)."""
    if len(page) != CIPHER_PAGE_SIZE:
        return False
    salt = page[:SALT_BYTES]
    mac_salt = bytes(b ^ HMAC_SALT_MASK for b in salt)
    mac_key = hashlib.pbkdf2_hmac("sha512", derived, mac_salt, HMAC_KDF_ITERATIONS, KEY_BYTES)
    signed_end = CIPHER_PAGE_SIZE - RESERVE_BYTES + IV_BYTES  # ciphertext, then the IV
    expected = hmac.new(mac_key, page[SALT_BYTES:signed_end] + (1).to_bytes(4, "little"), hashlib.sha512).digest()
    return hmac.compare_digest(expected, page[signed_end : signed_end + HMAC_BYTES])


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
