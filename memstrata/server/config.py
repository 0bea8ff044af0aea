"""Server settings (MEMSTRATA_* environment variables), read when the server starts — never at import."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .tenancy import DEFAULT_TENANT

MiB = 1024 * 1024


class ServerConfig(BaseSettings):
    """How `memstrata serve` listens, authenticates and limits requests.

    The store, embedder and other layers come from `memstrata.settings.Settings` (same env prefix).
    """

    model_config = SettingsConfigDict(env_prefix="MEMSTRATA_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8420, ge=0, le=65535)
    auth: bool = True
    """`MEMSTRATA_AUTH=off` (or `--insecure-no-auth`) disables API keys: development only, and loud."""
    tenant: str = DEFAULT_TENANT
    """The tenant every request acts for when auth is off."""
    max_body_bytes: int = Field(default=1 * MiB, ge=1024)
    """Largest request body accepted (413 above it), except for imports."""
    max_import_bytes: int = Field(default=64 * MiB, ge=1024)
    """Largest body accepted by `POST /v1/users/{user}/import`."""
    ui: bool = True
    """Serve the Web UI at /ui."""
    mcp: bool = True
    """Serve the MCP streamable-HTTP endpoint at /mcp."""
    worker: bool = True
    """Process the background learning queue in this process."""
    worker_interval: float = Field(default=1.0, gt=0)
    """Seconds between queue polls."""
    rate_limit: str = "1200/minute"
    """Requests per API key (429 with Retry-After above it); `limits` notation, e.g. `20/second`."""
    auth_failure_limit: str = "20/minute"
    """Failed authentications (401) per client address before that address gets 429 on /v1 and /mcp."""
    allowed_hosts: list[str] = Field(default_factory=list)
    """Extra Host header values accepted by /mcp (DNS-rebinding protection) when not on loopback."""
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Reverse proxies whose `X-Forwarded-For` names the client (addresses or CIDR networks, comma
    separated in `MEMSTRATA_TRUSTED_PROXIES`); none by default: the header is ignored (`proxies.py`)."""

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value

    @property
    def auth_enabled(self) -> bool:
        return self.auth
