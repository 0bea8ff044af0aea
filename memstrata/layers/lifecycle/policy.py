"""`LifecyclePolicy`: retention and consolidation settings, read from `Settings` when an app starts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ... import namespaces
from ...core.compress import DEFAULT_KINDS, Window
from ...models import MemoryKind

LIFECYCLE = namespaces.LIFECYCLE


@dataclass(frozen=True, slots=True)
class LifecyclePolicy:
    ttl_days: Mapping[MemoryKind, float] = field(default_factory=dict)
    """Default time to live per kind, counted from `created_at`."""
    episode_retention_days: float | None = None
    """How long episodes (the transcript) are kept; None keeps them."""
    session_retention_days: float | None = None
    """How long session state (rolling summaries) is kept after its last update; None keeps it."""
    consolidate_older_than_days: float = 30.0
    consolidate_min_count: int = 10
    consolidate_every_turns: int | None = 20
    """Queue a consolidation of the user every this many turns (a long chat is compressed as it goes);
    None or 0 disables."""
    consolidate_interval_hours: float | None = None
    """`maintain()` consolidates each user at most this often; None leaves it to the turn policy."""
    consolidate_kinds: tuple[MemoryKind, ...] = DEFAULT_KINDS
    consolidate_window: Window = Window.TOPIC
    consolidate_max_group: int = 20
    """At most this many memories per summary. Smaller groups keep retrieval sharper; larger ones
    compress more (LoCoMo trade-off table: docs/privacy.md)."""
    consolidate_max_chars: int = 1500
    receipt_secret: str | None = None
    """Optional deployment secret mixed into receipt hashes: without it, no one can test a guessed id."""

    @classmethod
    def from_settings(cls, settings: Any) -> LifecyclePolicy:
        """The lifecycle fields of `settings`; fields it does not have keep their defaults."""
        defaults = cls()

        def get(name: str) -> Any:
            return getattr(settings, name, getattr(defaults, name))

        secret = get("receipt_secret")
        if hasattr(secret, "get_secret_value"):
            secret = secret.get_secret_value()
        every = get("consolidate_every_turns")
        return cls(
            ttl_days={MemoryKind.parse(k): float(v) for k, v in dict(get("ttl_days") or {}).items()},
            episode_retention_days=_days(get("episode_retention_days")),
            session_retention_days=_days(get("session_retention_days")),
            consolidate_older_than_days=float(get("consolidate_older_than_days")),
            consolidate_min_count=int(get("consolidate_min_count")),
            consolidate_every_turns=int(every) if every else None,
            consolidate_interval_hours=_days(get("consolidate_interval_hours")),
            consolidate_kinds=tuple(MemoryKind.parse(k) for k in get("consolidate_kinds")),
            consolidate_window=Window.parse(get("consolidate_window")),
            consolidate_max_group=int(get("consolidate_max_group")),
            consolidate_max_chars=int(get("consolidate_max_chars")),
            receipt_secret=secret or None,
        )

    def retention(self) -> dict[MemoryKind, timedelta]:
        """Kinds with a maximum age: `ttl_days`, and episodes' retention (the shorter one wins)."""
        ages = {kind: timedelta(days=days) for kind, days in self.ttl_days.items()}
        if self.episode_retention_days is not None:
            episode = timedelta(days=self.episode_retention_days)
            ages[MemoryKind.EPISODE] = min(ages.get(MemoryKind.EPISODE, episode), episode)
        return ages

    def default_expiry(self, kind: MemoryKind, created_at: datetime) -> datetime | None:
        """The `expires_at` a new memory of `kind` gets when its writer sets none."""
        age = self.retention().get(kind)
        return None if age is None else created_at + age


def _days(value: Any) -> float | None:
    return None if value is None else float(value)
