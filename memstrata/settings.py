"""Settings read from the environment (MEMSTRATA_*) when an application starts — never at import."""

from __future__ import annotations

from pydantic import SecretStr
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
    context_vector_weight: float = 0.0
    """How much a memory's `context` (a turn's previous turns) pulls its stored vector: the vector is
    normalize(v(content) + w * v(context)); 0 (default) embeds the content alone (docs/search.md)."""
    window_size: int = 10
    summary_threshold: int = 8
    buffer_ttl_seconds: int = 3600

    # -- lifecycle (docs/privacy.md) ---------------------------------------------------------
    ttl_days: dict[str, float] = {}
    """Default time to live per memory kind, e.g. {"event": 365}; counted from `created_at`."""
    episode_retention_days: float | None = None
    session_retention_days: float | None = None
    consolidate_older_than_days: float = 30.0
    consolidate_min_count: int = 10
    consolidate_every_turns: int | None = 20
    consolidate_interval_hours: float | None = None
    consolidate_kinds: tuple[str, ...] = ("fact", "event", "note")
    consolidate_window: str = "topic"
    consolidate_max_group: int = 20
    consolidate_max_chars: int = 1500
    job_retention_days: float = 7.0
    """How long a done background job's record is kept after it finished (a lookup of an older job
    answers `expired`; failed jobs are kept), docs/server.md."""
    receipt_secret: SecretStr | None = None
    """Mixed into erasure-receipt hashes so that a guessed user id cannot be tested against them."""
    redact_pii: bool | None = None
    """Replace emails, phone numbers, card numbers, IBANs... before text reaches an LLM/embedder.
    Unset: on for every LLM or embedding API on another machine (not localhost), off for local ones."""
