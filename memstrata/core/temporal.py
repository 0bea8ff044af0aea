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

A memory's time is its event time: `created_at` (when it was said or happened), and also the periods
its own text names ("I went to the UK last Friday", said on 17 November, happened on 10 November):
`text_windows` are those periods, resolved against the memory's time. `window_match` is 1 inside a
window and falls linearly to 0 at the edge of the tolerance; `overlap_match` does the same for a period.

A question that asks when something happened ("When did Jon get mentored?", "How long ago did I ...?")
names no period, but its answer is a sentence that states a time ("I got mentored yesterday"):
`asks_when` recognizes such questions and `states_time` such sentences (a cheap test, also used to
skip resolving dates in texts that have none).
"""

from __future__ import annotations

import calendar
import heapq
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

DAY_SLACK = timedelta(days=2)
PERIOD_SLACK = timedelta(days=3)
DISTANCE_SLACK = 0.2
"""Share of the distance between `now` and a day that is tolerated around that day."""
TEXT_DEPTH = 50
"""The periods a candidate's text names are read for the best `TEXT_DEPTH` candidates only: reading them
costs time per candidate, and a candidate further down rarely rises into the first ten."""
WHEN_DEPTH = 30
"""For "when" questions, whether a text states a time is tested for the best `WHEN_DEPTH` candidates."""
SAID_HORIZON = timedelta(days=730)
"""How far after its own time a text's dates are looked for: people name the past and the next year or so
("next summer"), so a query's period that starts later than this after a memory was said is not read for."""

_MONTHS = frozenset(
    "january february march april june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
"""Month names, without "may" (mostly a verb: it counts only before a day number or after "in")."""
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_TIME_WORDS = frozenset("yesterday today tonight tomorrow recently ago fortnight".split()) | _WEEKDAYS
"""Words that state a time on their own; a month name counts in a pair ("in March", "March 3")."""
_PERIODS = frozenset("week weekend month year night morning evening summer winter spring fall autumn".split())
_MODIFIERS = frozenset("last next this past previous coming".split())
_COUNTS = frozenset("one two three few".split())
_UNITS = frozenset("days weeks months years".split())
_PREPOSITIONS = frozenset("in since during early late mid by until".split())
_PAIR_WORDS = _MODIFIERS | _UNITS | _MONTHS | {"may"}
"""One of the two words of every pair `_states_time_pair` accepts."""
_TOKEN = re.compile(r"[a-z]+|\d+")
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)?")
_DAY_OF_MONTH = re.compile(r"\bon the [0-3]?\d(?:st|nd|rd|th)\b")
_ASKS_WHEN = re.compile(
    r"\b(?:when|what (?:date|day|time|year|month)|which (?:date|day|year|month|week)"
    r"|how long (?:ago|has|have|had|did|was)"
    r"|how many (?:days|weeks|months|years) (?:ago|before|after|had|have|has|did|passed|between|since|was|were))\b",
    re.IGNORECASE,
)


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


def asks_when(query: str) -> bool:
    """Whether the query asks when something happened or how long ago ("When did ...?", "How many days ago
    ...?", "In which month ...?")."""
    return bool(_ASKS_WHEN.search(query))


def states_time(text: str) -> bool:
    """Whether the text states when something happened ("yesterday", "last Friday", "two weeks ago",
    "in May", "May 8", "on the 15th", "2022"): a fast test over its words, true for the texts a date resolver
    finds a date in and for some it does not ("recently", "the other day")."""
    folded = text.casefold()
    tokens = _TOKEN.findall(folded)
    numbers = _NUMBER.findall(folded)
    if not _TIME_WORDS.isdisjoint(tokens) or any(map(_is_year, numbers)) or "the other day" in folded:
        return True
    if not all(n.isdigit() for n in numbers) and _DAY_OF_MONTH.search(folded):  # "on the 15th"
        return True
    if _PAIR_WORDS.isdisjoint(tokens):
        return False
    pairs = [i for i, token in enumerate(tokens) if token in _PAIR_WORDS]
    return any(
        (i > 0 and _states_time_pair(tokens[i - 1], tokens[i]))
        or (i + 1 < len(tokens) and _states_time_pair(tokens[i], tokens[i + 1]))
        for i in pairs
    )


def _is_year(number: str) -> bool:
    return len(number) == 4 and number[:2] in ("19", "20") and number.isdigit()


def _states_time_pair(first: str, second: str) -> bool:
    """Two words that state a time together: "last week", "few days", "in May", "May 8"."""
    if second in _PERIODS:
        return first in _MODIFIERS
    if second in _UNITS:
        return first in _COUNTS
    if second.isdigit():
        return first in _MONTHS or first == "may"
    return (second in _MONTHS or second == "may") and first in _PREPOSITIONS


def overlap_match(period: TimeWindow, window: TimeWindow) -> float:
    """1.0 when `period` overlaps `window`, falling linearly to 0.0 at `window.slack` between them."""
    if period.start < window.end and window.start < period.end:
        return 1.0
    gap = window.start - period.end if period.end <= window.start else period.start - window.end
    if window.slack.total_seconds() <= 0:
        return 0.0
    return max(0.0, 1.0 - gap / window.slack)


def event_match(when: datetime | None, periods: Sequence[TimeWindow], windows: Sequence[TimeWindow]) -> float:
    """The best match of a memory with the query's windows: by its own time, or by a period its text names."""
    best = time_match(when, windows)
    for period in periods:
        if best >= 1.0:
            break
        best = max([best, *(overlap_match(period, w) for w in windows)])
    return best


def best_ids(scores: Mapping[str, float], depth: int = TEXT_DEPTH) -> set[str]:
    """The ids of the `depth` highest scores."""
    return set(heapq.nlargest(depth, scores, key=scores.__getitem__))


def window_matches(
    scores: Mapping[str, float],
    time_of: Mapping[str, datetime | None],
    windows: Sequence[TimeWindow],
    periods_of: Mapping[str, Sequence[TimeWindow]] | None = None,
) -> dict[str, float]:
    """How well each candidate matches the query's windows (`event_match`): by its time, and, among the best
    `TEXT_DEPTH` by score that do not match fully by time, also by the periods its text names (`periods_of`),
    when a window starts within `SAID_HORIZON` after the candidate's time. Empty without windows."""
    if not windows:
        return {}
    named = best_ids(scores) if periods_of is not None else set()
    earliest = min(w.start for w in windows)

    def match(memory_id: str) -> float:
        when = time_of.get(memory_id)
        by_time = time_match(when, windows)
        if when is None or periods_of is None or by_time >= 1.0 or memory_id not in named:
            return by_time
        if earliest > when + SAID_HORIZON:  # texts name the past and the near future
            return by_time
        return event_match(when, periods_of.get(memory_id, ()), windows)

    return {i: match(i) for i in scores}


def boost_matches(scores: Mapping[str, float], matches: Mapping[str, float], boost: float) -> dict[str, float]:
    """Multiply every score by `1 + boost * match` (a date in the query is a hint, not a filter)."""
    return {i: s * (1.0 + boost * matches.get(i, 0.0)) for i, s in scores.items()}


def boost_in_windows(
    scores: Mapping[str, float],
    time_of: Mapping[str, datetime | None],
    windows: Sequence[TimeWindow],
    boost: float,
    periods_of: Mapping[str, Sequence[TimeWindow]] | None = None,
) -> dict[str, float]:
    """Candidates from the periods the query names rise (`window_matches`, `boost_matches`), the others keep
    their score."""
    if not windows or boost == 0:
        return dict(scores)
    return boost_matches(scores, window_matches(scores, time_of, windows, periods_of), boost)


def boost_timed(scores: Mapping[str, float], timed: Mapping[str, bool], boost: float) -> dict[str, float]:
    """Multiply the score of each of the best `WHEN_DEPTH` candidates whose text states a time (`timed`)
    by `1 + boost`."""
    if boost == 0:
        return dict(scores)
    best = best_ids(scores, WHEN_DEPTH)
    return {i: s * (1.0 + boost) if i in best and timed.get(i) else s for i, s in scores.items()}
