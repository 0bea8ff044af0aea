"""Small pure helpers the prompt builders share: dates, turns, numbered lists."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Protocol

from ..errors import InvalidInput


class Turn(Protocol):
    """Anything with a role and content (buffer turns, extraction messages, chat messages).

    An `at` (datetime) and a `speaker` (name) attribute are used when present.
    """

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


def day(value: date) -> str:
    """'2024-05-12 (Sunday)': the weekday helps models resolve "last Saturday"."""
    if not isinstance(value, date):
        raise InvalidInput(f"expected a date, got {type(value).__name__}")
    the_day = value.date() if isinstance(value, datetime) else value
    return f"{the_day.isoformat()} ({the_day:%A})"


def turn_line(turn: Turn) -> str:
    """'2024-05-12 (Sunday) user (Alice): text' — date and speaker only when known."""
    at = getattr(turn, "at", None)
    speaker = getattr(turn, "speaker", None)
    head = f"{day(at)} " if isinstance(at, date) else ""
    who = f"{turn.role} ({speaker})" if speaker else turn.role
    return f"{head}{who}: {' '.join(turn.content.split())}"


def numbered(lines: Sequence[str], *, empty: str = "(none)") -> str:
    """'0. first\\n1. second' — indexes the model answers with, never stored ids."""
    if not lines:
        return empty
    return "\n".join(f"{index}. {' '.join(line.split())}" for index, line in enumerate(lines))


def require_turns(turns: Sequence[Turn], what: str) -> None:
    if not turns:
        raise InvalidInput(f"{what} needs at least one turn")
