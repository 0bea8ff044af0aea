"""Storage backends behind one `Store` protocol."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from ..errors import ConfigurationError, StoreError
from .base import Item, MemoryFilter, ScoredRow, Store


def open_store(url: str | Path, *, owner_url: str | None = None, key: str | None = None) -> Store:
    """Open a store from a URL: `sqlite:///path.db`, a plain file path, `:memory:`, or `postgresql://...`.

    SQLite paths follow SQLAlchemy: `sqlite:///rel.db` is relative to the working directory,
    `sqlite:////abs/path.db` absolute; a leading `~` is the home directory (`sqlite:///~/x.db`).
    With `key`, or `MEMSTRATA_STORE_KEY` / `MEMSTRATA_STORE_KEY_FILE` set, the file is encrypted with
    SQLCipher (`sqlcipher.py`); an encrypted file opened without a key is refused. A PostgreSQL store
    seals its payloads per user when `MEMSTRATA_MASTER_KEY` / `MEMSTRATA_MASTER_KEY_FILE` is set
    (crypto-shredding, `crypto.py`)."""
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        from .crypto import configured_key_provider
        from .postgres import PostgresStore

        return PostgresStore.open(text, owner_url=owner_url, key_provider=configured_key_provider())
    from .sqlcipher import configured_key, encrypted_store, file_state
    from .sqlite import SQLiteStore

    path = sqlite_path(text)
    key = key if key is not None else configured_key()
    if key is not None:
        return cast(Store, encrypted_store(path, key))
    if path != ":memory:" and file_state(path) == "encrypted":
        raise StoreError(
            f"{path} is not a plain SQLite file (an encrypted store?): set MEMSTRATA_STORE_KEY or "
            "MEMSTRATA_STORE_KEY_FILE to open it"
        )
    return SQLiteStore(path)


def sqlite_path(text: str) -> str:
    """The SQLite file (or `:memory:`) a store URL or plain path names; a clear error for anything else."""
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://").removeprefix("/") or ":memory:"
    elif "://" in text:
        raise ConfigurationError(
            f"unknown store URL scheme in {text.split('://')[0]!r}; use sqlite:/// or postgresql://"
        )
    elif text.lower().startswith("sqlite:") and text != ":memory:":
        rest = text[len("sqlite:") :]
        raise ConfigurationError(
            f"malformed store URL {text!r}: write sqlite:///{rest.lstrip('/')} for a file relative to the "
            f"working directory, or sqlite:////absolute/path.db"
        )
    return text if text == ":memory:" else str(Path(text).expanduser())


__all__ = ["Item", "MemoryFilter", "ScoredRow", "Store", "open_store", "sqlite_path"]
