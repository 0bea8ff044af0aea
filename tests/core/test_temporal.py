"""Time-aware ranking: the windows a query names, resolved against the search's time, and the boost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata.core import temporal
from memstrata.core.temporal import (
    DAY_SLACK,
    PERIOD_SLACK,
    TimeWindow,
    boost_in_windows,
    time_match,
    window_match,
)
from memstrata.extraction.dates import find_dates

NOW = datetime(2023, 5, 24, 15, 30, tzinfo=UTC)  # a Wednesday


def query_windows(query: str, now: datetime) -> list[TimeWindow]:
    """As a search does it: the query's dates found by the extractor's resolver, in the past tense."""
    return temporal.query_windows(find_dates(query, now, prefer="past"), now)


def test_last_week_is_the_previous_monday_to_sunday() -> None:
    (window,) = query_windows("What did I cook last week?", NOW)
    assert (window.start, window.end) == (datetime(2023, 5, 15, tzinfo=UTC), datetime(2023, 5, 22, tzinfo=UTC))
    assert window.slack == PERIOD_SLACK and window.text == "last week"


def test_two_months_ago_tolerates_a_share_of_the_distance() -> None:
    (window,) = query_windows("I mentioned visiting a museum two months ago. Who came along?", NOW)
    assert window.start == datetime(2023, 3, 24, tzinfo=UTC)
    assert window.end == window.start + timedelta(days=1)
    assert timedelta(days=11) < window.slack < timedelta(days=13)  # 0.2 of ~61 days


def test_yesterday_gets_the_minimum_day_slack() -> None:
    (window,) = query_windows("what did I buy yesterday", NOW)
    assert window.start == datetime(2023, 5, 23, tzinfo=UTC) and window.slack == DAY_SLACK


def test_absolute_month_and_year() -> None:
    (window,) = query_windows("Which books did I finish in May 2022?", NOW)
    assert (window.start, window.end) == (datetime(2022, 5, 1, tzinfo=UTC), datetime(2022, 6, 1, tzinfo=UTC))


def test_a_month_without_year_is_the_last_one_before_now() -> None:
    (window,) = query_windows("How many doctor's appointments did I go to in August?", NOW)
    assert window.start == datetime(2022, 8, 1, tzinfo=UTC)


def test_no_date_no_window() -> None:
    assert query_windows("Which event happened first, the road trip or the lens?", NOW) == []


def read(query: str, now: datetime = NOW) -> list[tuple[datetime, datetime, timedelta]]:
    """A query's windows as a search reads them (seasons included), as (start, end, slack)."""
    found = find_dates(query, now, prefer="past", seasons=True)
    return [(w.start, w.end, w.slack) for w in temporal.read_windows(query, found, now)]


def day(year: int, month: int, number: int) -> datetime:
    return datetime(year, month, number, tzinfo=UTC)


def test_a_calendar_date_keeps_the_day_slack_however_far_from_now() -> None:
    # "on 8 May 2021" names its day; only dates given by their distance ("two years ago") are loose
    (window,) = query_windows("What did I do on 8 May 2021?", NOW)
    assert window.slack == DAY_SLACK
    (loose,) = query_windows("What did I do two years ago?", NOW)
    assert loose.slack > timedelta(days=100)
    assert temporal.is_calendar_date("May 8") and not temporal.is_calendar_date("last Friday")


def test_seasons_and_years_named_on_their_own_are_that_season_or_year() -> None:
    assert read("What did we do in the summer of 2021?") == [(day(2021, 6, 1), day(2021, 9, 1), PERIOD_SLACK)]
    assert read("Which state did I visit in summer 2021?") == [(day(2021, 6, 1), day(2021, 9, 1), PERIOD_SLACK)]
    assert read("How often did I go to the beach in 2022?") == [(day(2022, 1, 1), day(2023, 1, 1), PERIOD_SLACK)]
    assert read("Where did I go last summer?") == [(day(2022, 6, 1), day(2022, 9, 1), PERIOD_SLACK)]
    assert read("What did I do on 3 May 2022?") == [(day(2022, 5, 3), day(2022, 5, 4), DAY_SLACK)]  # no extra year


def test_a_period_placed_relative_to_a_date() -> None:
    assert read("Where was Tim the week before 16 November 2022?") == [
        (day(2022, 11, 9), day(2022, 11, 16), PERIOD_SLACK)
    ]
    assert read("What did I do the day after May 3, 2022?") == [(day(2022, 5, 4), day(2022, 5, 5), PERIOD_SLACK)]
    ((start, end, slack),) = read("Which puppy did she get two weeks before August 11, 2022?")
    assert (start, end) == (day(2022, 7, 28), day(2022, 7, 29)) and DAY_SLACK < slack < timedelta(days=3)
    # "last weekend" is not read against now when it is placed before a date
    assert read("What did Maria do last weekend before April 10, 2023?") == [
        (day(2023, 4, 3), day(2023, 4, 10), PERIOD_SLACK)
    ]


def test_between_two_dates_is_one_period_and_the_year_written_once_holds_for_both() -> None:
    assert read("Where was John between August 11 and August 15 2022?") == [
        (day(2022, 8, 11), day(2022, 8, 16), DAY_SLACK)
    ]
    assert len(read("What did I buy on 3 May 2022 and on 9 May 2022?")) == 2  # not a range


def test_window_match_is_one_inside_and_falls_linearly_outside() -> None:
    window = TimeWindow(datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 5, 2, tzinfo=UTC), timedelta(days=2))
    assert window_match(datetime(2023, 5, 1, 12, tzinfo=UTC), window) == 1.0
    assert window_match(datetime(2023, 5, 3, tzinfo=UTC), window) == pytest.approx(0.5)
    assert window_match(datetime(2023, 4, 30, tzinfo=UTC), window) == pytest.approx(0.5)
    assert window_match(datetime(2023, 4, 1, tzinfo=UTC), window) == 0.0
    assert time_match(None, [window]) == 0.0 and time_match(NOW, []) == 0.0


def test_boost_raises_candidates_of_the_named_period_only() -> None:
    windows = query_windows("what did I buy last week", NOW)
    scores = {"old": 1.0, "last-week": 0.8, "undated": 0.9}
    times = {"old": datetime(2023, 1, 10, tzinfo=UTC), "last-week": datetime(2023, 5, 17, tzinfo=UTC), "undated": None}
    boosted = boost_in_windows(scores, times, windows, 1.0)
    assert boosted == {"old": 1.0, "last-week": pytest.approx(1.6), "undated": 0.9}
    assert boost_in_windows(scores, times, windows, 0.0) == scores
    assert boost_in_windows(scores, times, [], 1.0) == scores


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("When did Melanie paint a sunrise?", True, id="when-did"),
        pytest.param("How long ago did I start the course?", True, id="how-long-ago"),
        pytest.param("How many days passed between the two trips?", True, id="how-many-days"),
        pytest.param("In which month did I adopt the cat? What date was it?", True, id="what-date"),
        pytest.param("What did Melanie paint?", False, id="what"),
        pytest.param("How many weddings did I attend?", False, id="how-many-things"),
        pytest.param("How long is the hike?", False, id="how-long-is"),
        pytest.param("How many days did I spend in Japan in total?", True, id="how-many-days"),
    ],
)
def test_asks_when(query: str, expected: bool) -> None:
    assert temporal.asks_when(query) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("I got mentored by this amazing business dude yesterday!", True, id="yesterday"),
        pytest.param("I went to a castle during my trip to the UK last Friday", True, id="last-friday"),
        pytest.param("I've had them for 3 years ago now", True, id="years-ago"),
        pytest.param("We moved here in March and love it", True, id="in-month"),
        pytest.param("Painting is my favourite way to relax", False, id="none"),
        pytest.param("The other team played better", False, id="other-team"),
        pytest.param("I may go, or I may not", False, id="may-verb"),
        pytest.param("I've had them for four years now", True, id="duration"),
        pytest.param("It took 10 days to get here", True, id="digit-duration"),
    ],
)
def test_states_time(text: str, expected: bool) -> None:
    assert temporal.states_time(text) is expected


def test_states_time_holds_for_every_text_the_resolver_dates() -> None:
    texts = (
        "We left two weeks ago",
        "see you next month",
        "on 8 May 2023 we met",
        "I met them on the 15th",
        "we went camping this weekend",
        "the party is on Friday at 3pm",
        "the day after tomorrow",
    )
    for text in texts:
        assert find_dates(text, NOW, prefer="past") and temporal.states_time(text)


def test_a_period_a_memory_names_matches_the_query_window() -> None:
    """Said on Friday 17 November: "last Friday" is 10 November, inside "the second week of November"."""
    said = datetime(2023, 11, 17, 10, tzinfo=UTC)
    (period,) = temporal.query_windows(find_dates("I went to the UK last Friday", said, prefer="past"), said)
    week = TimeWindow(datetime(2023, 11, 6, tzinfo=UTC), datetime(2023, 11, 13, tzinfo=UTC), PERIOD_SLACK)
    assert temporal.overlap_match(period, week) == 1.0
    assert time_match(said, [week]) == 0.0  # by the time it was said, it is outside the week
    assert temporal.event_match(said, [period], [week]) == 1.0
    far = TimeWindow(datetime(2023, 11, 20, tzinfo=UTC), datetime(2023, 11, 27, tzinfo=UTC), timedelta(days=20))
    assert temporal.overlap_match(period, far) == pytest.approx(1 - 9 / 20)
    assert temporal.event_match(None, [], [week]) == 0.0


def test_a_period_far_after_a_memory_is_not_read_from_its_text() -> None:
    said = datetime(2023, 5, 1, tzinfo=UTC)
    period = TimeWindow(datetime(2023, 4, 28, tzinfo=UTC), datetime(2023, 4, 29, tzinfo=UTC), DAY_SLACK)
    near = TimeWindow(datetime(2023, 4, 27, tzinfo=UTC), datetime(2023, 4, 30, tzinfo=UTC), DAY_SLACK)
    far = TimeWindow(
        said + temporal.SAID_HORIZON + timedelta(days=1), said + temporal.SAID_HORIZON + timedelta(days=9), DAY_SLACK
    )
    asked: list[str] = []

    class Periods(dict[str, list[TimeWindow]]):
        def get(self, key: str, default: object = None) -> list[TimeWindow]:  # type: ignore[override]
            asked.append(key)
            return [period]

    assert temporal.window_matches({"m": 1.0}, {"m": said}, [near], Periods()) == {"m": 1.0}
    assert temporal.window_matches({"m": 1.0}, {"m": said}, [far], Periods()) == {"m": 0.0}
    assert asked == ["m"]  # the far window never reads the text


def test_boost_timed_raises_only_texts_that_state_a_time() -> None:
    scores = {"timed": 0.5, "plain": 0.9}
    assert temporal.boost_timed(scores, {"timed": True}, 2.0) == {"timed": 1.5, "plain": 0.9}
    assert temporal.boost_timed(scores, {"timed": True}, 0.0) == scores


class _Asked(dict[str, bool]):
    """A `timed` mapping that records which candidates the ranking asked about."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()

    def get(self, key: str, default: bool | None = None) -> bool | None:  # type: ignore[override]
        self.asked.add(key)
        return True


def test_only_the_best_candidates_texts_are_read() -> None:
    scores = {f"m{n}": float(n) for n in range(temporal.WHEN_DEPTH + 20)}
    timed = _Asked()
    boosted = temporal.boost_timed(scores, timed, 1.0)
    assert timed.asked == temporal.best_ids(scores, temporal.WHEN_DEPTH) and len(timed.asked) == temporal.WHEN_DEPTH
    assert boosted["m0"] == 0.0 and boosted[f"m{temporal.WHEN_DEPTH + 19}"] == 2.0 * (temporal.WHEN_DEPTH + 19)
