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
from dataclasses import dataclass, replace
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
_COUNTS = frozenset("a an one two three four five six seven eight nine ten eleven twelve few several couple".split())
_UNITS = frozenset("days weeks months years hours decades".split())
_PREPOSITIONS = frozenset("in since during early late mid by until".split())
_UNIT_SINGULAR = frozenset("day week month year hour decade".split())
_PAIR_WORDS = _MODIFIERS | _UNITS | _UNIT_SINGULAR | _MONTHS | {"may"}
"""One of the two words of every pair `_states_time_pair` accepts."""
_TOKEN = re.compile(r"[a-z]+|\d+")
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)?")
_DAY_OF_MONTH = re.compile(r"\bon the [0-3]?\d(?:st|nd|rd|th)\b")
_ASKS_WHEN = re.compile(
    r"\b(?:when|what (?:date|day|time|year|month)|which (?:date|day|year|month|week)"
    r"|how long (?:ago|has|have|had|did|was)"
    r"|how many (?:days|weeks|months|years|hours))\b",
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

    @property
    def span(self) -> tuple[int, int]: ...


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
    if mention.granularity == "season":
        return _add_months(start, 3)
    return start + timedelta(days=1)


def _add_months(when: datetime, months: int) -> datetime:
    """The first of the month `months` after `when`'s month (seasons and months start on the first)."""
    index = when.year * 12 + when.month - 1 + months
    return when.replace(year=index // 12, month=index % 12 + 1, day=1)


def is_calendar_date(text: str) -> bool:
    """Whether a date expression names its day on the calendar ("8 May 2023", "May 8", "2023-05-08") rather
    than by its distance from now ("two months ago", "last Friday")."""
    tokens = _TOKEN.findall(text.casefold())
    return any(t in _MONTHS or t == "may" or _is_year(t) for t in tokens)


def mention_window(mention: Mention, now: datetime) -> TimeWindow:
    """The window of one resolved date expression (see the module docstring for the tolerances)."""
    end = _period_end(mention)
    if mention.granularity in ("day", "minute"):
        distance = abs(now - mention.start)
        slack = DAY_SLACK if is_calendar_date(mention.text) else max(DAY_SLACK, distance * DISTANCE_SLACK)
        return TimeWindow(mention.start.replace(hour=0, minute=0), end, slack, mention.text)
    return TimeWindow(mention.start, end, PERIOD_SLACK, mention.text)


def query_windows(mentions: Sequence[Mention], now: datetime) -> list[TimeWindow]:
    """The windows of the date expressions found in a query (resolved against `now`, in the past tense
    by default: "what did I buy on Friday" = the last Friday). Windows after `now` are kept: a search
    for plans ("next week") matches memories dated then."""
    return [mention_window(m, now) for m in mentions]


_UNIT_DAYS = {"day": 1, "week": 7, "weekend": 7, "fortnight": 14, "month": 30, "year": 365}
_COUNT_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "few": 3,
    "several": 3,
}
_RELATIVE_TO = re.compile(
    r"(?:\b(?P<count>\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|several)"
    r"|\b(?:the|that|last))?\s*\b(?P<unit>day|week|weekend|fortnight|month|year)s?\s+"
    r"(?P<relation>before|after|prior to|following|of)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
"""The words before a date that place a period relative to it: "the week before", "two days after",
"the weekend of"."""
_PLACED = re.compile(r"^\s*(?:before|after|prior to|following)\s+(?:the\s+)?$", re.IGNORECASE)
_BETWEEN = re.compile(r"\b(?:between|from)\s+(?:the\s+)?$", re.IGNORECASE)
_AND = re.compile(r"^\s*(?:and|to|until|till|through|-|–)\s*(?:the\s+)?$", re.IGNORECASE)
_SEASON_YEAR = re.compile(
    r"\b(?P<season>spring|summer|fall|autumn|winter)(?:,?\s+of)?,?\s+(?P<year>(?:19|20)\d\d)\b", re.IGNORECASE
)
_BARE_YEAR = re.compile(r"(?<![\w-])(?:19|20)\d\d(?![\w-])")
_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def read_windows(query: str, mentions: Sequence[Mention], now: datetime) -> list[TimeWindow]:
    """The periods a query names: its resolved date expressions (`mentions`, with their spans in `query`)
    read as English relates them, resolved against `now`.

    * a season or a year named on its own ("in the summer of 2022", "in 2021") is that season or year;
    * a period placed relative to a date ("the week before 16 November", "two days after May 3", "the
      weekend of 24 June") is that period: the unit just before or after the date (or around it, for
      "of"), or, with a count, the day that many units away, give or take `DISTANCE_SLACK` of the distance;
    * "between X and Y" / "from X to Y" is the one period from X to the end of Y."""
    if not query:
        return query_windows(mentions, now)
    spans = _named_spans(query, [(*m.span, mention_window(m, now)) for m in mentions], now)
    windows: list[TimeWindow] = []
    skip = -1
    for n, (at, until, window) in enumerate(spans):
        if n <= skip:
            continue
        following = query[until : spans[n + 1][0]] if n + 1 < len(spans) else ""
        if following and _BETWEEN.search(query[:at]) and _AND.match(following):
            after = spans[n + 1][2]
            first = _in_year_of(window, after)
            text = query[at : spans[n + 1][1]]
            windows.append(TimeWindow(first.start, max(first.end, after.end), first.slack, text))
            skip = n + 1
            continue
        if following and _PLACED.match(following) and not is_calendar_date(window.text):
            continue  # "last weekend before April 10": the next date, placed by these words, is the period
        windows.append(relative_window(query[max(0, at - 40) : at], window))
    return windows


Span = tuple[int, int, TimeWindow]


def _named_spans(query: str, spans: list[Span], now: datetime) -> list[Span]:
    """The resolved expressions' spans plus the seasons of a named year and the bare years of `query`, in
    reading order."""
    zone = now.tzinfo
    for match in _SEASON_YEAR.finditer(query):  # the year written decides the season ("the summer of 2021")
        spans = [item for item in spans if _free(match.span(), [item[:2]])]
        begins = datetime(int(match["year"]), _SEASON_START[match["season"].casefold()], 1, tzinfo=zone)
        spans.append((*match.span(), TimeWindow(begins, _add_months(begins, 3), PERIOD_SLACK, match[0])))
    taken = [(at, until) for at, until, _ in spans]
    for match in _BARE_YEAR.finditer(query):
        if _free(match.span(), taken):
            begins = datetime(int(match[0]), 1, 1, tzinfo=zone)
            ends = begins.replace(year=begins.year + 1)
            spans.append((*match.span(), TimeWindow(begins, ends, PERIOD_SLACK, match[0])))
    return sorted(spans, key=lambda item: item[0])


def _in_year_of(window: TimeWindow, other: TimeWindow) -> TimeWindow:
    """`window` moved into `other`'s year when its own text names no year ("between August 11 and August 15
    2023": the year written once stands for both)."""
    if any(_is_year(t) for t in _TOKEN.findall(window.text)) or not any(
        _is_year(t) for t in _TOKEN.findall(other.text)
    ):
        return window
    shift = other.start.year - window.start.year
    try:
        return replace(
            window,
            start=window.start.replace(year=window.start.year + shift),
            end=window.end.replace(year=window.end.year + shift),
        )
    except ValueError:  # 29 February
        return window


def _free(span: tuple[int, int], taken: Sequence[tuple[int, int]]) -> bool:
    return all(span[1] <= start or span[0] >= end for start, end in taken)


def relative_window(before: str, window: TimeWindow) -> TimeWindow:
    """`window` as placed by the words `before` it ("the week before", "two days after"; see
    `read_windows`), or `window` itself when they place nothing."""
    match = _RELATIVE_TO.search(before)
    if match is None:
        return window
    unit = match["unit"].casefold()
    relation = match["relation"].casefold()
    text = f"{match[0].strip()} {window.text}"
    length = timedelta(days=_UNIT_DAYS[unit])
    count = match["count"]
    if count is not None:
        number = int(count) if count.isdigit() else _COUNT_WORDS[count.casefold()]
        distance = length * number
        day = window.start - distance if relation in ("before", "prior to") else window.end + distance
        if relation == "of":
            return window
        return TimeWindow(day, day + timedelta(days=1), max(DAY_SLACK, distance * DISTANCE_SLACK), text)
    if relation == "of":
        middle = window.start + (window.end - window.start) / 2
        return TimeWindow(middle - length / 2, middle + length / 2, PERIOD_SLACK, text)
    if relation in ("before", "prior to"):
        return TimeWindow(window.start - length, window.start, PERIOD_SLACK, text)
    return TimeWindow(window.end, window.end + length, PERIOD_SLACK, text)


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
    if second in _UNITS or second in _UNIT_SINGULAR:
        return first in _COUNTS or first.isdigit()
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
