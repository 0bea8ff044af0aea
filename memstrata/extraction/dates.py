"""Resolve relative date expressions against the time a message was written (pure).

"last Saturday" said on Sunday 2025-07-13 means 2025-07-12, whatever day the memory is
processed on: every function here takes `now` explicitly and never reads the clock.

Conventions (weeks start on Monday; results are midnight of the day in `now`'s time zone,
or the start of the period for weeks, weekends, months and years):

- "next Friday" / "coming Friday": the first Friday strictly after today.
- "last Friday" / "this past Friday": the last Friday strictly before today.
- "this Friday": Friday on or after today (on or before when `prefer="past"`).
- a bare "on Friday": after today, or before today when `prefer="past"`.
- "next week" / "last week" / "this week": Monday of that week; "this weekend": Saturday of this
  week; "next month": the 1st of next month; "next year": 1 January.
- "May 5" without a year: this year, moved a year forward (`prefer="future"`) or back
  (`prefer="past"`) when it would otherwise fall on the wrong side of today.
- "in 3 days", "two weeks ago", "in a month": calendar arithmetic (month ends clamped).
- seasons, when asked for (`seasons=True`; meteorological, northern hemisphere: spring is March-May,
  winter starts in December): "last summer" is the summer before the current or most recent one,
  "next spring" the first spring that starts after today, "this winter" / "in the fall" the current or
  nearest one (the past one when `prefer="past"`). A season is dated by its first day.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal

Prefer = Literal["future", "past"]
Granularity = Literal["minute", "day", "week", "weekend", "month", "year", "season"]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_ABBREVIATIONS = {name[:3]: index + 1 for index, name in enumerate(MONTHS)} | {"sept": 9}
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "couple of": 2,
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
}


@dataclass(frozen=True, slots=True)
class DateMention:
    """A date expression found in text and the absolute time it stands for."""

    text: str
    start: datetime
    granularity: Granularity
    span: tuple[int, int]


# --- calendar helpers -------------------------------------------------------------------------


def _midnight(day: date, like: datetime) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=like.tzinfo)


def add_months(day: date, months: int) -> date:
    """`day` moved by whole months, the day clamped to the target month's length."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def week_start(day: date) -> date:
    """Monday of the week holding `day`."""
    return day - timedelta(days=day.weekday())


def weekday_after(day: date, weekday: int, *, inclusive: bool = False) -> date:
    """The first `weekday` (0 = Monday) after `day` (or on it when `inclusive`)."""
    ahead = (weekday - day.weekday()) % 7
    if ahead == 0 and not inclusive:
        ahead = 7
    return day + timedelta(days=ahead)


def weekday_before(day: date, weekday: int, *, inclusive: bool = False) -> date:
    """The last `weekday` (0 = Monday) before `day` (or on it when `inclusive`)."""
    back = (day.weekday() - weekday) % 7
    if back == 0 and not inclusive:
        back = 7
    return day - timedelta(days=back)


def _shift_year(candidate: date, today: date, prefer: Prefer | None) -> date:
    if prefer == "future" and candidate < today:
        return _replace_year(candidate, candidate.year + 1)
    if prefer == "past" and candidate > today:
        return _replace_year(candidate, candidate.year - 1)
    return candidate


def _replace_year(day: date, year: int) -> date:
    last = calendar.monthrange(year, day.month)[1]
    return date(year, day.month, min(day.day, last))


def _month_number(word: str) -> int | None:
    if word == "may":
        return None  # lower-case "may" is the verb far more often than the month
    word = word.casefold().rstrip(".")
    if word in MONTHS:
        return MONTHS.index(word) + 1
    return _MONTH_ABBREVIATIONS.get(word)


def number_value(word: str) -> int | None:
    """The whole number a word says ("7", "seven", "a couple of"), or None."""
    word = " ".join(word.casefold().split())
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


# --- patterns ---------------------------------------------------------------------------------

_WEEKDAY = r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_COUNT = (
    r"(?P<count>\d{1,3}|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten"
    r"|eleven|twelve)"
)
_UNIT = r"(?P<unit>day|week|fortnight|month|year)s?"
_ORDINAL = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

Handler = Callable[["re.Match[str]", datetime, "Prefer | None"], "tuple[datetime, Granularity] | None"]


def _weekday_index(word: str) -> int:
    prefix = word.casefold()[:3]
    return [name[:3] for name in WEEKDAYS].index(prefix)


def _fixed_offset(days: int) -> Handler:
    def handle(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity]:
        return _midnight(now.date() + timedelta(days=days), now), "day"

    return handle


def _relative_weekday(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity]:
    modifier = (match.group("modifier") or "").casefold()
    weekday = _weekday_index(match.group("weekday"))
    today = now.date()
    if modifier in ("next", "coming", "this coming"):
        day = weekday_after(today, weekday)
    elif modifier in ("last", "this past", "past"):
        day = weekday_before(today, weekday)
    elif modifier == "this":
        if prefer == "past":
            day = weekday_before(today, weekday, inclusive=True)
        else:
            day = weekday_after(today, weekday, inclusive=True)
    elif prefer == "past":
        day = weekday_before(today, weekday)
    else:
        day = weekday_after(today, weekday)
    return _midnight(day, now), "day"


def _relative_period(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity]:
    modifier = match.group("modifier").casefold()
    period = match.group("period").casefold()
    step = {"next": 1, "coming": 1, "last": -1, "past": -1, "previous": -1}.get(modifier, 0)
    today = now.date()
    if period in ("week", "weekend"):
        monday = week_start(today) + timedelta(weeks=step)
        if period == "weekend":
            return _midnight(monday + timedelta(days=5), now), "weekend"
        return _midnight(monday, now), "week"
    if period == "month":
        return _midnight(add_months(today.replace(day=1), step), now), "month"
    return _midnight(date(today.year + step, 1, 1), now), "year"


def _offset(sign: int) -> Handler:
    def handle(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity] | None:
        count = number_value(match.group("count"))
        if count is None:
            return None
        unit = match.group("unit").casefold()
        today = now.date()
        if unit == "day":
            day = today + timedelta(days=sign * count)
        elif unit == "week":
            day = today + timedelta(weeks=sign * count)
        elif unit == "fortnight":
            day = today + timedelta(weeks=2 * sign * count)
        elif unit == "month":
            day = add_months(today, sign * count)
        else:
            day = add_months(today, 12 * sign * count)
        return _midnight(day, now), "day"

    return handle


def _month_day(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity] | None:
    month = _month_number(match.group("month"))
    if month is None:
        return None
    year_text = match.group("year")
    year = int(year_text) if year_text else now.year
    day = _safe_date(year, month, int(match.group("day")))
    if day is None:
        return None
    if not year_text:
        day = _shift_year(day, now.date(), prefer)
    return _midnight(day, now), "day"


def _month_only(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity] | None:
    month = _month_number(match.group("month"))
    if month is None:
        return None
    year_text = match.group("year")
    if year_text:
        return _midnight(date(int(year_text), month, 1), now), "month"
    first = date(now.year, month, 1)
    this_month = now.date().replace(day=1)
    if prefer == "future" and first < this_month:
        first = first.replace(year=first.year + 1)
    elif prefer == "past" and first > this_month:
        first = first.replace(year=first.year - 1)
    return _midnight(first, now), "month"


def _ordinal_only(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity] | None:
    today = now.date()
    number = int(match.group("day"))
    day = _safe_date(today.year, today.month, number)
    if day is None:
        return None
    if prefer != "past" and day < today:
        day = _safe_date(*_year_month(add_months(today.replace(day=1), 1)), number)
    elif prefer == "past" and day > today:
        day = _safe_date(*_year_month(add_months(today.replace(day=1), -1)), number)
    return (_midnight(day, now), "day") if day is not None else None


def _year_month(day: date) -> tuple[int, int]:
    return day.year, day.month


def _iso(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity] | None:
    day = _safe_date(int(match.group("year")), int(match.group("m")), int(match.group("d")))
    return (_midnight(day, now), "day") if day is not None else None


_PATTERNS: tuple[tuple[re.Pattern[str], Handler], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), handler)
    for pattern, handler in (
        (r"\b(?:the )?day after tomorrow\b", _fixed_offset(2)),
        (r"\b(?:the )?day before yesterday\b", _fixed_offset(-2)),
        (r"\btomorrow\b", _fixed_offset(1)),
        (r"\b(?:yesterday|last night)\b", _fixed_offset(-1)),
        (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", _fixed_offset(0)),
        (
            rf"\b(?:(?P<modifier>next|this coming|coming|last|this past|past|this) |on )?{_WEEKDAY}\b",
            _relative_weekday,
        ),
        (
            r"\b(?P<modifier>next|coming|last|past|previous|this) (?P<period>week(?:end)?|month|year)\b",
            _relative_period,
        ),
        (rf"\b(?:in|within) {_COUNT} {_UNIT}\b", _offset(1)),
        (rf"\b{_COUNT} {_UNIT} (?:ago|back|earlier)\b", _offset(-1)),
        (rf"\b(?:the )?{_ORDINAL} (?:of )?{_MONTH}(?:,? {_YEAR})?\b", _month_day),
        (rf"\b{_MONTH} (?:the )?{_ORDINAL}(?![\d:])(?:,? {_YEAR})?\b", _month_day),
        (
            rf"\b(?:in|during|since|until|by|before|after|early|late|mid|end of|beginning of) "
            rf"{_MONTH}(?! ?(?:the )?[0-3]?\d(?:st|nd|rd|th)?\b)(?: {_YEAR})?\b",
            _month_only,
        ),
        (rf"\b{_MONTH} {_YEAR}\b", _month_only),
        (r"\bon the (?P<day>[0-3]?\d)(?:st|nd|rd|th)\b", _ordinal_only),
        (r"\b(?P<year>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b", _iso),
    )
)

_SEASON_MONTHS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def _season_start(year: int, season: str) -> date:
    return date(year, _SEASON_MONTHS[season], 1)


def _season(match: re.Match[str], now: datetime, prefer: Prefer | None) -> tuple[datetime, Granularity]:
    modifier = (match.group("modifier") or "").casefold()
    season = match.group("season").casefold()
    today = now.date()
    starts = [_season_start(today.year + shift, season) for shift in (-2, -1, 0, 1)]
    begun = [start for start in starts if start <= today]
    current = begun[-1] if begun and add_months(begun[-1], 3) > today else None
    latest = begun[-1]
    upcoming = next(start for start in starts if start > today)
    if modifier in ("last", "past", "this past"):
        day = begun[-2] if current is not None else latest
    elif modifier in ("next", "coming", "this coming"):
        day = upcoming
    elif current is not None:
        day = current
    else:
        day = latest if prefer == "past" or (modifier != "this" and prefer != "future") else upcoming
    return _midnight(day, now), "season"


_SEASON_PATTERNS: tuple[tuple[re.Pattern[str], Handler], ...] = (
    (
        re.compile(
            r"\b(?:(?P<modifier>last|next|this coming|coming|this past|past|this) |(?:in|during|over) the )"
            r"(?P<season>spring|summer|fall|autumn|winter)\b",
            re.IGNORECASE,
        ),
        _season,
    ),
)

_TIME_OF_DAY = re.compile(
    r"^\s*(?:at|@)\s*(?P<hour>[01]?\d|2[0-3])(?::(?P<minute>[0-5]\d))?\s*(?P<half>am|pm)?\b", re.IGNORECASE
)


def _with_time_of_day(text: str, end: int, start: datetime) -> tuple[datetime, int] | None:
    """Apply a following "at 3pm" / "at 15:30" to a day; None when there is none (or it is ambiguous)."""
    match = _TIME_OF_DAY.match(text[end:])
    if match is None or (match.group("half") is None and match.group("minute") is None):
        return None
    hour = int(match.group("hour"))
    half = (match.group("half") or "").casefold()
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if hour > 23:
        return None
    minute = int(match.group("minute") or 0)
    return start.replace(hour=hour, minute=minute), end + match.end()


def find_dates(text: str, now: datetime, *, prefer: Prefer | None = None, seasons: bool = False) -> list[DateMention]:
    """Every date expression in `text`, resolved against `now`, in reading order, without overlaps.

    Where two expressions overlap, the longer one wins ("the day after tomorrow" over "tomorrow").
    Seasons ("last spring") are read only with `seasons=True` (what the extractor dates memories by).
    """
    found: list[tuple[int, int, datetime, Granularity]] = []
    for pattern, handler in _PATTERNS + (_SEASON_PATTERNS if seasons else ()):
        for match in pattern.finditer(text):
            resolved = handler(match, now, prefer)
            if resolved is not None:
                found.append((match.start(), match.end(), resolved[0], resolved[1]))
    found.sort(key=lambda item: (-(item[1] - item[0]), item[0]))
    chosen: list[tuple[int, int, datetime, Granularity]] = []
    for item in found:
        if all(item[1] <= other[0] or item[0] >= other[1] for other in chosen):
            chosen.append(item)
    chosen.sort(key=lambda item: item[0])
    mentions = []
    for start, end, when, granularity in chosen:
        timed = _with_time_of_day(text, end, when) if granularity == "day" else None
        if timed is not None:
            when, end = timed
            granularity = "minute"
        mentions.append(DateMention(text=text[start:end], start=when, granularity=granularity, span=(start, end)))
    return mentions


def resolve_date(phrase: str, now: datetime, *, prefer: Prefer | None = None) -> datetime | None:
    """The absolute time a single phrase ("last Saturday", "in 3 days") stands for, or None."""
    mentions = find_dates(phrase, now, prefer=prefer)
    return mentions[0].start if mentions else None


_PAST = re.compile(
    r"\b(?:ago|yesterday|last|was|were|had|did|went|(?<!'ve )(?<!have )(?<!has )got|ran|finished|started|"
    r"visited|saw|met|passed|adopted|bought|moved|came|left|took|made|turned|graduated|celebrated|won|lost|ate|drank"
    r"|wrote|sold|flew|drove|gave|found|caught|taught|brought|held|kept|paid|sent|spent|threw|grew|drew|rode|sang|swam"
    r"|began|broke|chose|wore|heard|sat|slept|woke|fell|became|built|[a-z]{3,}ed)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(?:will|'ll|going to|gonna|next|tomorrow|tonight|upcoming|coming|plan(?:ning)? to|"
    r"need to|have to|has to|got to|'ve got|have got|must|should|remind|schedule[d]?|i'm \w+ing|we're \w+ing|"
    r"is \w+ing|are \w+ing|starts|begins|leaves|arrives|due|by|comes? out|opens|ends)\b",
    re.IGNORECASE,
)


def guess_tense(text: str) -> Prefer | None:
    """ "past" or "future" from cue words, or None when the sentence gives no clear cue."""
    past = bool(_PAST.search(text))
    future = bool(_FUTURE.search(text))
    if past and not future:
        return "past"
    if future and not past:
        return "future"
    return None


__all__ = [
    "DateMention",
    "Granularity",
    "Prefer",
    "add_months",
    "find_dates",
    "guess_tense",
    "resolve_date",
    "week_start",
    "weekday_after",
    "weekday_before",
]
