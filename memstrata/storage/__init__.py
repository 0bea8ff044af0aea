"""Storage backends behind one `Store` protocol."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigurationError
from .base import Item, MemoryFilter, ScoredRow, Store


def open_store(url: str | Path, *, owner_url: str | None = None) -> Store:
    """Open a store from a URL: `sqlite:///path.db`, a plain file path, `:memory:`, or `postgresql://...`."""
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
    from .sqlite import SQLiteStore

    return SQLiteStore(text)


__all__ = ["Item", "MemoryFilter", "ScoredRow", "Store", "open_store"]
