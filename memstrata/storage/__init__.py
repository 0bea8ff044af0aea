"""Storage backends behind one `Store` protocol."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from ..errors import ConfigurationError, StoreError
from .base import Item, MemoryFilter, ScoredRow, Store


def open_store(url: str | Path, *, owner_url: str | None = None, key: str | None = None) -> Store:
    """Open a store from a URL: `sqlite:///path.db`, a plain file path, `:memory:`, or `postgresql://...`.

    SQLite: with `key`, or `MEMSTRATA_STORE_KEY` / `MEMSTRATA_STORE_KEY_FILE` set, the file is encrypted
    with SQLCipher (`sqlcipher.py`); an encrypted file opened without a key is refused."""
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore.open(text, owner_url=owner_url)
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://").removeprefix("/") or ":memory:"
    elif "://" in text:
        raise ConfigurationError(
            f"unknown store URL scheme in {text.split('://')[0]!r}; use sqlite:/// or postgresql://"
        )
    from .sqlcipher import configured_key, encrypted_store, file_state
    from .sqlite import SQLiteStore

    key = key if key is not None else configured_key()
    if key is not None:
        return cast(Store, encrypted_store(text, key))
    if text != ":memory:" and file_state(text) == "encrypted":
        raise StoreError(
            f"{text} is not a plain SQLite file (an encrypted store?): set MEMSTRATA_STORE_KEY or "
            "MEMSTRATA_STORE_KEY_FILE to open it"
        )
    return SQLiteStore(text)


__all__ = ["Item", "MemoryFilter", "ScoredRow", "Store", "open_store"]
