"""PostgreSQL backend: pgvector HNSW, tsvector/GIN full text, row-level security per user.

Needs the `postgres` extra (`psycopg[binary,pool]`, `pgvector`). See docs/postgres.md.
"""

from __future__ import annotations

from .store import PostgresStore
from .urls import redact_url

__all__ = ["PostgresStore", "redact_url"]
