"""The one test clock: a settable "now" that every time-dependent part of memstrata accepts.

`Memory(clock=...)`, the layers and the in-process buffer read time only through it, so tests move
time forward with `advance()` instead of sleeping.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


class Clock:
    """A callable returning a fixed, timezone-aware "now" that tests move explicitly."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        """Move now forward by `timedelta(**delta)` (e.g. `advance(hours=2)`)."""
        self.now += timedelta(**delta)
