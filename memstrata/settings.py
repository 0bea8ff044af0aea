"""Settings read from the environment (MEMSTRATA_*) when an application starts — never at import."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_STORE = "sqlite:///.memstrata/memstrata.db"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMSTRATA_", extra="ignore")

    store: str = DEFAULT_STORE
    """`sqlite:///path.db` (default, embedded) or `postgresql://user@host/db`."""
    store_owner: str | None = None
    """Postgres only: URL of the owner role that runs migrations (the app role cannot)."""
    embedder: str = "static"
    """`static` (default, ships in the package), `e5`, `hashing[:DIM]`, `openai:MODEL`."""
    buffer: str = "memory://"
    """`memory://` (in-process) or `redis://host:6379/0`."""
    llm: str | None = None
    """Optional: `openai:MODEL`, `ollama:MODEL`, `anthropic:MODEL`."""
    window_size: int = 10
    summary_threshold: int = 8
    buffer_ttl_seconds: int = 3600
