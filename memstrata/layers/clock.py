"""`Clock`: what every layer reads the time from (a function returning an aware `datetime`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

Clock = Callable[[], datetime]

__all__ = ["Clock"]
