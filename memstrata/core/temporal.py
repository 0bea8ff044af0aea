"""Time-aware ranking: the periods a query speaks of, and how well a memory's time matches them (pure).

A search happens at a time `now` (the `as_of` of the search, or the Memory's clock). Date expressions in
the query are resolved against it by the caller, with the resolver the extractor uses
(`extraction.dates.find_dates`): relative ("last week", "two months ago", "yesterday") and absolute
("in May 2023", "on 8 May"). Each resolved mention (its start and granularity) becomes a `TimeWindow`:
the period it names, widened by a tolerance, because people date things loosely and talk about an
event a little after it happened:

* a named period (a week, weekend, month, year) is the period itself, plus `PERIOD_SLACK` either side;
* a day ("yesterday", "10 days ago", "on 8 May") is that day, plus `DAY_SLACK` or, for days further
  from `now`, `DISTANCE_SLACK` of the distance ("two months ago" is about two months ago, give or take
  a week or two).

A memory's time is its event time: `created_at` (when it was said or happened). `window_match` is 1
inside a window and falls linearly to 0 at the edge of the tolerance.
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

DAY_SLACK = timedelta(days=2)
PERIOD_SLACK = timedelta(days=3)
DISTANCE_SLACK = 0.2
"""Share of the distance between `now` and a day that is tolerated around that day."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A period a query speaks of: `[start, end)`, matched fully inside and partly up to `slack` outside."""

    start: datetime
    end: datetime
    slack: timedelta
    text: str = ""


class Mention(Protocol):
    """A resolved date expression (`extraction.dates.DateMention` is one)."""

    @property
    def text(self) -> str: ...

    @property
    def start(self) -> datetime: ...

    @property
    def granularity(self) -> str: ...


def _period_end(mention: Mention) -> datetime:
    start = mention.start
    if mention.granularity == "week":
        return start + timedelta(days=7)
    if mention.granularity == "weekend":
        return start + timedelta(days=2)
    if mention.granularity == "month":
        days = calendar.monthrange(start.year, start.month)[1]
        return start + timedelta(days=days)
    if mention.granularity == "year":
        return start.replace(year=start.year + 1)
    return start + timedelta(days=1)


def mention_window(mention: Mention, now: datetime) -> TimeWindow:
    """The window of one resolved date expression (see the module docstring for the tolerances)."""
    end = _period_end(mention)
    if mention.granularity in ("day", "minute"):
        distance = abs(now - mention.start)
        slack = max(DAY_SLACK, distance * DISTANCE_SLACK)
        return TimeWindow(mention.start.replace(hour=0, minute=0), end, slack, mention.text)
    return TimeWindow(mention.start, end, PERIOD_SLACK, mention.text)


def query_windows(mentions: Sequence[Mention], now: datetime) -> list[TimeWindow]:
    """The windows of the date expressions found in a query (resolved against `now`, in the past tense
    by default: "what did I buy on Friday" = the last Friday). Windows after `now` are kept: a search
    for plans ("next week") matches memories dated then."""
    return [mention_window(m, now) for m in mentions]


def window_match(when: datetime, window: TimeWindow) -> float:
    """1.0 inside the window, falling linearly to 0.0 at `slack` outside it."""
    if window.start <= when < window.end:
        return 1.0
    outside = window.start - when if when < window.start else when - window.end
    if window.slack.total_seconds() <= 0:
        return 0.0
    return max(0.0, 1.0 - outside / window.slack)


def time_match(when: datetime | None, windows: Sequence[TimeWindow]) -> float:
    """The best match of `when` with any of the windows (0.0 without a time or without windows)."""
    if when is None or not windows:
        return 0.0
    return max(window_match(when, w) for w in windows)


def boost_in_windows(
    scores: Mapping[str, float], time_of: Mapping[str, datetime | None], windows: Sequence[TimeWindow], boost: float
) -> dict[str, float]:
    """Multiply every score by `1 + boost * time_match(...)`: candidates from the periods the query names
    rise, the others keep their score (a date in the query is a hint, not a filter)."""
    if not windows or boost == 0:
        return dict(scores)
    return {i: s * (1.0 + boost * time_match(time_of.get(i), windows)) for i, s in scores.items()}
