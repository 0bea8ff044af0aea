"""Keys and the authenticated cipher of crypto-shredding (the PostgreSQL store's encryption at rest).

* A **master key** (32 random bytes) comes from a `KeyProvider`: `LocalKeyProvider` reads it from
  `MEMSTRATA_MASTER_KEY` or from the file `MEMSTRATA_MASTER_KEY_FILE` names (64 hex digits or base64 of
  32 bytes, on the first line). A key-management service fits the same two methods, `wrap`/`unwrap`.
* With `MEMSTRATA_USER_KEY_DIR` as well, `DirectoryKeyProvider` wraps each user's data key under a key of
  that user alone (a *key-encryption key*), kept in a file of that directory, outside the database and
  its backups, and sealed by the master key. Erasure deletes the file (`ShreddingKeyProvider.destroy`):
  a database backup restored later holds the user's wrapped key, but nothing the operator still holds
  opens it, while every other user's key does.
* Each store user gets a random 256-bit **data key**, stored only wrapped by the master key
  (AES-256-GCM, the user id as associated data: a wrapped key copied to another user does not open).
* Payloads are sealed with the data key: AES-256-GCM, a random 96-bit nonce per value, and associated
  data naming the table, the user and the row, so a ciphertext moved to another row or user fails to open.
* Keyword-index terms and equality-filter values become keyed hashes (HMAC-SHA256 truncated to 80 bits)
  under a per-user key derived from the data key (HKDF-SHA256): searchable by equality, unreadable,
  and unlinkable once the data key is destroyed.

Everything here is pure apart from reading the key settings; a wrong key is a `StoreError`, never garbage.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from threading import Lock
from typing import Any, Protocol, runtime_checkable

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..errors import ConfigurationError, StoreError

KEY_BYTES = 32
NONCE_BYTES = 12
SEALED_VERSION = b"\x01"
"""First byte of every sealed value: the format (AES-256-GCM, 96-bit nonce, 128-bit tag)."""
TOKEN_BYTES = 9
"""Index tokens and blind values keep 72 bits of the HMAC (12 characters of base64): a collision among one
user's 10^6 distinct terms has a chance of about 10^-10."""
_TERM_INFO = b"memstrata keyword index v1"


def _aesgcm() -> Any:
    return _cipher_classes()[0]


@cache
def _cipher_classes() -> tuple[Any, type[Exception]]:
    """`cryptography`'s AESGCM and InvalidTag, imported once (opening a value is on every read's path)."""
    try:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as exc:  # pragma: no cover - part of memstrata-ai[encryption]
        raise ConfigurationError(
            "an encrypted PostgreSQL store (MEMSTRATA_MASTER_KEY) needs the cryptography package: "
            "pip install 'memstrata-ai[encryption]'"
        ) from exc
    return AESGCM, InvalidTag


@runtime_checkable
class KeyProvider(Protocol):
    """Wraps and unwraps data keys under a master key the provider keeps.

    `label` names what the key belongs to (a user id) and is bound to the wrapped bytes: unwrapping
    under another label fails. `unwrap` raises `StoreError` when the wrapped key does not open
    (another master key, or bytes changed)."""

    key_id: str
    """A non-secret name of the master key (for messages and the store's record of it)."""

    def wrap(self, data_key: bytes, *, label: str) -> bytes: ...

    def unwrap(self, wrapped: bytes, *, label: str) -> bytes: ...


@runtime_checkable
class ShreddingKeyProvider(KeyProvider, Protocol):
    """A provider that keeps something of each label apart from the database and can destroy it: after
    `destroy(label)`, no wrapped key of that label opens again, from any copy of the database."""

    def destroy(self, label: str) -> None: ...

    def holds(self, label: str) -> bool:
        """False once `destroy(label)` ran (and before the label's first `wrap`)."""
        ...


class LocalKeyProvider:
    """The master key held in this process (read from the environment or a local file)."""

    def __init__(self, master_key: bytes, *, source: str = "master key") -> None:
        if len(master_key) != KEY_BYTES:
            raise ConfigurationError(f"{source} must be {KEY_BYTES} bytes, got {len(master_key)}")
        self._cipher = _aesgcm()(master_key)
        self.source = source
        self.key_id = self.key_id_of(master_key)

    @staticmethod
    def key_id_of(master_key: bytes) -> str:
        return hashlib.sha256(b"memstrata key id\x00" + master_key).hexdigest()[:16]

    @classmethod
    def from_text(cls, text: str, *, source: str) -> LocalKeyProvider:
        """A key written as 64 hex digits or as base64 of 32 bytes."""
        return cls(parse_key(text, source), source=source)

    @classmethod
    def from_file(cls, path: Path) -> LocalKeyProvider:
        return cls(read_key_file(path), source=f"master key file {path}")

    def wrap(self, data_key: bytes, *, label: str) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return SEALED_VERSION + nonce + self._cipher.encrypt(nonce, data_key, _wrap_label(label))

    def unwrap(self, wrapped: bytes, *, label: str) -> bytes:
        try:
            return _open(self._cipher, wrapped, _wrap_label(label))
        except _Unopenable:
            raise StoreError(
                f"a data key does not open with the configured master key ({self.source}, id {self.key_id}): "
                "wrong master key, or the key row was altered"
            ) from None


USER_KEY_DIR_ID = "memstrata-user-keys"
"""The file naming a key directory (a random id): tells one directory from another in `key_id`."""
_KEK_FILE_INFO = b"memstrata key directory: files"
_KEK_NAME_INFO = b"memstrata key directory: names"


class DirectoryKeyProvider:
    """Data keys wrapped under per-user key-encryption keys kept in `directory`, each file sealed by the
    master key (AES-256-GCM, the user id as associated data) and named by a keyed hash of the user id
    (the listing shows no ids). The directory lives apart from the database, on a disk of its own, and is
    backed up on a schedule of its own (docs/privacy.md): a database backup holds no key that opens.

    `destroy(label)` (erasure, in the erasure's transaction, under the user's lock) deletes the user's file;
    the user's next first write creates a new one. Files are created with a hard link, so two processes
    creating a user's first key at once agree on one file. Nothing is cached: every unwrap reads the file,
    so a file destroyed by another process is never used again."""

    def __init__(self, master_key: bytes, directory: Path, *, source: str = "master key") -> None:
        if len(master_key) != KEY_BYTES:
            raise ConfigurationError(f"{source} must be {KEY_BYTES} bytes, got {len(master_key)}")
        if not directory.is_dir():
            raise ConfigurationError(
                f"the user key directory {directory} does not exist: create it (mode 700) on storage kept "
                "apart from the database and its backups"
            )
        self.directory = directory
        self.source = f"{source} with user key directory {directory}"
        self._files = _aesgcm()(_hkdf(master_key, _KEK_FILE_INFO))
        self._names = hmac.new(_hkdf(master_key, _KEK_NAME_INFO), digestmod=hashlib.sha256)
        master_id = LocalKeyProvider.key_id_of(master_key)
        self.key_id = f"{master_id}.{_directory_id(directory)}"

    def wrap(self, data_key: bytes, *, label: str) -> bytes:
        kek = self._kek(label, create=True)
        if kek is None:  # pragma: no cover - created just above when missing
            raise StoreError(f"the key file of {label!r} could not be created in {self.directory}")
        nonce = os.urandom(NONCE_BYTES)
        return SEALED_VERSION + nonce + _aesgcm()(kek).encrypt(nonce, data_key, _wrap_label(label))

    def unwrap(self, wrapped: bytes, *, label: str) -> bytes:
        kek = self._kek(label, create=False)
        if kek is None:
            raise StoreError(
                f"the data key of {label!r} is shredded: its key file is not in the user key directory "
                f"{self.directory} (the user was erased, or these are not the store's key directory and master key)"
            )
        try:
            return _open(_aesgcm()(kek), wrapped, _wrap_label(label))
        except _Unopenable:
            raise StoreError(
                f"a data key of {label!r} does not open with its key file in {self.directory} (the key row "
                "was altered, or it was wrapped before the user was erased and written again)"
            ) from None

    def destroy(self, label: str) -> None:
        """Delete the label's key file (nothing when there is none) and make the deletion durable."""
        try:
            self._path(label).unlink()
        except FileNotFoundError:
            return
        _fsync_directory(self.directory)

    def holds(self, label: str) -> bool:
        return self._path(label).exists()

    def labels_held(self) -> int:
        """How many key files the directory holds."""
        return sum(1 for _ in self.directory.glob("*.key"))

    def _path(self, label: str) -> Path:
        mac = self._names.copy()
        mac.update(label.encode("utf-8"))
        return self.directory / f"{mac.hexdigest()[:32]}.key"

    def _kek(self, label: str, *, create: bool) -> bytes | None:
        path = self._path(label)
        try:
            text = path.read_text(encoding="ascii")
        except FileNotFoundError:
            if not create:
                return None
            text = self._create(path, label)
        try:
            return _open(self._files, base64.b64decode(text.strip(), validate=True), _kek_label(label))
        except (_Unopenable, ValueError, binascii.Error):
            raise StoreError(
                f"the key file of {label!r} in {self.directory} does not open with the configured master key "
                f"({self.source}): wrong master key, or the file was altered"
            ) from None

    def _create(self, path: Path, label: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        sealed = SEALED_VERSION + nonce + self._files.encrypt(nonce, new_data_key(), _kek_label(label))
        text = base64.b64encode(sealed).decode("ascii") + "\n"
        pending = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        descriptor = os.open(pending, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(descriptor, text.encode("ascii"))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        try:
            os.link(pending, path)  # fails when another process created the file first: use theirs
        except FileExistsError:
            text = path.read_text(encoding="ascii")
        finally:
            pending.unlink()
        _fsync_directory(self.directory)
        return text


def _kek_label(label: str) -> bytes:
    return b"memstrata user key file\x00" + label.encode("utf-8")


def _directory_id(directory: Path) -> str:
    """The directory's random id, written on first use (with O_EXCL: concurrent first uses agree)."""
    marker = directory / USER_KEY_DIR_ID
    try:
        descriptor = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = marker.read_text(encoding="ascii").strip()
        if not text:
            raise ConfigurationError(f"{marker} is empty: not a memstrata user key directory") from None
        return text
    except OSError as exc:
        raise ConfigurationError(f"cannot use the user key directory {directory}: {exc.strerror}") from None
    if any(directory.glob("*.key")):
        os.close(descriptor)
        marker.unlink()
        raise ConfigurationError(f"{directory} holds key files but no {USER_KEY_DIR_ID}: not usable as a new one")
    identifier = secrets.token_hex(4)
    try:
        os.write(descriptor, f"{identifier}\n".encode("ascii"))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    _fsync_directory(directory)
    return identifier


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _wrap_label(label: str) -> bytes:
    return b"memstrata data key\x00" + label.encode("utf-8")


def parse_key(text: str, source: str) -> bytes:
    """32 key bytes from 64 hex digits or base64; a `ConfigurationError` naming `source` otherwise."""
    text = text.strip()
    if not text:
        raise ConfigurationError(f"{source} is empty")
    try:
        raw = bytes.fromhex(text) if len(text) == 2 * KEY_BYTES else base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise ConfigurationError(
            f"{source} must be {KEY_BYTES} random bytes written as 64 hex digits or base64 "
            '(make one with: python -c "import secrets; print(secrets.token_hex(32))")'
        )
    return raw


class MasterKeySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMSTRATA_", extra="ignore")

    master_key: SecretStr | None = None
    """The PostgreSQL store's master key (64 hex digits or base64 of 32 bytes)."""
    master_key_file: Path | None = None
    """A file holding the master key on its first line; keeps it out of the environment."""
    user_key_dir: Path | None = None
    """A directory, kept apart from the database and its backups, holding each user's key-encryption key
    (`DirectoryKeyProvider`): erased users cannot be read back from an older database backup."""


def configured_key_provider(settings: MasterKeySettings | None = None) -> KeyProvider | None:
    """The master key from the environment or the key file (with the user key directory when one is
    set), or None when no master key is set."""
    settings = settings or MasterKeySettings()
    if settings.master_key is not None and settings.master_key_file is not None:
        raise ConfigurationError("set MEMSTRATA_MASTER_KEY or MEMSTRATA_MASTER_KEY_FILE, not both")
    if settings.master_key_file is not None:
        master = read_key_file(settings.master_key_file)
        source = f"master key file {settings.master_key_file}"
    elif settings.master_key is not None:
        master = parse_key(settings.master_key.get_secret_value(), "MEMSTRATA_MASTER_KEY")
        source = "MEMSTRATA_MASTER_KEY"
    elif settings.user_key_dir is not None:
        raise ConfigurationError("MEMSTRATA_USER_KEY_DIR needs a master key: set MEMSTRATA_MASTER_KEY(_FILE) too")
    else:
        return None
    return key_provider(master, settings.user_key_dir, source=source)


def key_provider(master_key: bytes, user_key_dir: Path | None, *, source: str) -> KeyProvider:
    """The master key alone (`LocalKeyProvider`), or with a user key directory (`DirectoryKeyProvider`)."""
    if user_key_dir is None:
        return LocalKeyProvider(master_key, source=source)
    return DirectoryKeyProvider(master_key, user_key_dir, source=source)


def read_key_file(path: Path) -> bytes:
    """The master key on the first line of `path`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot read the master key file {path}: {exc.strerror}") from None
    return parse_key(text.splitlines()[0] if text.strip() else "", f"master key file {path}")


def new_data_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


class _Unopenable(Exception):
    """A sealed value that does not open (internal; callers see `StoreError`)."""


def _open(cipher: Any, sealed: bytes, aad: bytes) -> bytes:
    if len(sealed) < 1 + NONCE_BYTES + 16 or sealed[:1] != SEALED_VERSION:
        raise _Unopenable
    try:
        return bytes(cipher.decrypt(sealed[1 : 1 + NONCE_BYTES], sealed[1 + NONCE_BYTES :], aad))
    except _cipher_classes()[1]:
        raise _Unopenable from None


@dataclass(frozen=True, slots=True, eq=False)
class DataKey:
    """One user's unwrapped data key: seals payloads and hashes index terms for that user only."""

    user_id: str
    wrapped: bytes
    """The wrapped form it was read as (a changed row means another key: the cache compares it)."""
    _cipher: Any
    _term_mac: Any
    """HMAC-SHA256 keyed with the user's term key, copied for each hash."""

    @classmethod
    def of(cls, user_id: str, raw: bytes, wrapped: bytes) -> DataKey:
        return cls(user_id, wrapped, _aesgcm()(raw), hmac.new(_hkdf(raw, _TERM_INFO), digestmod=hashlib.sha256))

    def seal(self, plaintext: bytes, aad: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return SEALED_VERSION + nonce + self._cipher.encrypt(nonce, plaintext, aad)

    def open(self, sealed: bytes, aad: bytes) -> bytes:
        """The plaintext, or `StoreError` when `sealed` was not made by this key for this `aad`."""
        try:
            return _open(self._cipher, sealed, aad)
        except _Unopenable:
            raise StoreError(
                f"a stored value of user {self.user_id!r} does not open with the user's data key "
                "(altered, moved from another row, or written under another key)"
            ) from None

    def seal_text(self, text: str, aad: bytes) -> str:
        return base64.b64encode(self.seal(text.encode("utf-8"), aad)).decode("ascii")

    def open_text(self, sealed: str, aad: bytes) -> str:
        try:
            raw = binascii.a2b_base64(sealed, strict_mode=True)  # = b64decode(validate=True), one call less
        except (ValueError, binascii.Error):
            raise StoreError(
                f"a stored value of user {self.user_id!r} is not sealed: the store holds plain rows "
                "although a master key is configured"
            ) from None
        return self.open(raw, aad).decode("utf-8")

    def seal_json(self, value: Any, aad: bytes) -> str:
        return self.seal_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")), aad)

    def open_json(self, sealed: str, aad: bytes) -> Any:
        return json.loads(self.open_text(sealed, aad))

    def token(self, term: str) -> str:
        """The keyword-index token of one term: 12 characters of URL-safe base64 (short keys keep the GIN
        index and the per-term statistics as small as with plain words)."""
        return self._hash(b"t\x00" + term.encode("utf-8"))

    def blind(self, kind: str, value: str) -> str:
        """A keyed hash of an exact value (metadata keys and values, content hashes, item keys)."""
        return self._hash(kind.encode() + b"\x00" + value.encode("utf-8"))

    def _hash(self, message: bytes) -> str:
        mac = self._term_mac.copy()
        mac.update(message)
        return base64.urlsafe_b64encode(mac.digest()[:TOKEN_BYTES]).decode("ascii")


def _hkdf(key: bytes, info: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(key)


class KeyCache:
    """Unwrapped data keys by user, at most `size` (least recently used dropped first). Thread-safe."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._keys: OrderedDict[str, DataKey] = OrderedDict()
        self._lock = Lock()

    def get(self, user_id: str) -> DataKey | None:
        with self._lock:
            key = self._keys.get(user_id)
            if key is not None:
                self._keys.move_to_end(user_id)
            return key

    def put(self, key: DataKey) -> None:
        with self._lock:
            self._keys[key.user_id] = key
            self._keys.move_to_end(key.user_id)
            while len(self._keys) > self._size:
                self._keys.popitem(last=False)

    def drop(self, user_id: str) -> None:
        with self._lock:
            self._keys.pop(user_id, None)

    def __len__(self) -> int:
        return len(self._keys)


class OpenedCache:
    """What sealed values opened to, by (data key, associated data, sealed value): at most `size` (least
    recently used dropped first; 0 keeps nothing). Thread-safe.

    A memo of decryption, not a copy of the store: an entry is found only by the exact sealed value (its
    random nonce and tag make it unique) that the database returned for that row, under the key that
    sealed it. So a read gets nothing from here that its own statement did not return, in a transaction
    that found the user's key row unchanged: a deleted row, an erased user or a rewritten value is never
    served. `drop(key)` forgets every value opened with a key (erasure, or a key row that changed)."""

    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._values: OrderedDict[tuple[bytes, bytes, str], Any] = OrderedDict()
        self._lock = Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: DataKey, aad: bytes, sealed: str) -> Any | None:
        with self._lock:
            value = self._values.get((key.wrapped, aad, sealed))
            if value is None:
                self.misses += 1
                return None
            self._values.move_to_end((key.wrapped, aad, sealed))
            self.hits += 1
            return value

    def put(self, key: DataKey, aad: bytes, sealed: str, value: Any) -> None:
        if self._size <= 0:
            return
        with self._lock:
            self._values[key.wrapped, aad, sealed] = value
            while len(self._values) > self._size:
                self._values.popitem(last=False)

    def drop(self, key: DataKey) -> None:
        with self._lock:
            for entry in [e for e in self._values if e[0] == key.wrapped]:
                del self._values[entry]

    def __len__(self) -> int:
        return len(self._values)
