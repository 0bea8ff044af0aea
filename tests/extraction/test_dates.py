"""Relative dates resolve against the message time, never the wall clock."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memstrata.extraction.dates import add_months, find_dates, guess_tense, resolve_date

WEDNESDAY = datetime(2024, 5, 8, 10, 0, tzinfo=UTC)
SATURDAY = datetime(2025, 3, 1, 9, 15, tzinfo=UTC)
SUNDAY = datetime(2025, 7, 13, 20, 0, tzinfo=UTC)
JAN_31 = datetime(2024, 1, 31, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("phrase", "now", "prefer", "expected"),
    [
        pytest.param("yesterday", WEDNESDAY, None, date(2024, 5, 7), id="yesterday"),
        pytest.param("tomorrow", WEDNESDAY, None, date(2024, 5, 9), id="tomorrow"),
        pytest.param("the day after tomorrow", WEDNESDAY, None, date(2024, 5, 10), id="day-after-tomorrow"),
        pytest.param("the day before yesterday", WEDNESDAY, None, date(2024, 5, 6), id="day-before-yesterday"),
        pytest.param("last night", WEDNESDAY, None, date(2024, 5, 7), id="last-night"),
        pytest.param("this morning", WEDNESDAY, None, date(2024, 5, 8), id="this-morning"),
        pytest.param("last Saturday", SUNDAY, None, date(2025, 7, 12), id="last-saturday-from-sunday"),
        pytest.param("last Saturday", SATURDAY, None, date(2025, 2, 22), id="last-saturday-on-saturday"),
        pytest.param("next Friday", WEDNESDAY, None, date(2024, 5, 10), id="next-friday"),
        pytest.param("this Friday", WEDNESDAY, None, date(2024, 5, 10), id="this-friday"),
        pytest.param("on Monday", WEDNESDAY, None, date(2024, 5, 13), id="bare-weekday-future"),
        pytest.param("on Monday", WEDNESDAY, "past", date(2024, 5, 6), id="bare-weekday-past"),
        pytest.param("next week", WEDNESDAY, None, date(2024, 5, 13), id="next-week-monday"),
        pytest.param("last week", SATURDAY, None, date(2025, 2, 17), id="last-week-monday"),
        pytest.param("this weekend", WEDNESDAY, None, date(2024, 5, 11), id="this-weekend"),
        pytest.param("this weekend", SUNDAY, None, date(2025, 7, 12), id="this-weekend-on-sunday"),
        pytest.param("next month", SUNDAY, None, date(2025, 8, 1), id="next-month"),
        pytest.param("last month", SATURDAY, None, date(2025, 2, 1), id="last-month"),
        pytest.param("next year", WEDNESDAY, None, date(2025, 1, 1), id="next-year"),
        pytest.param("in 3 days", WEDNESDAY, None, date(2024, 5, 11), id="in-3-days"),
        pytest.param("in two weeks", WEDNESDAY, None, date(2024, 5, 22), id="in-two-weeks"),
        pytest.param("two weeks ago", SATURDAY, None, date(2025, 2, 15), id="two-weeks-ago"),
        pytest.param("a month ago", JAN_31, None, date(2023, 12, 31), id="a-month-ago"),
        pytest.param("in a month", JAN_31, None, date(2024, 2, 29), id="month-end-clamped"),
        pytest.param("three months ago", SUNDAY, None, date(2025, 4, 13), id="three-months-ago"),
        pytest.param("on May 5th", WEDNESDAY, None, date(2024, 5, 5), id="month-day-same-year"),
        pytest.param("on May 5th", WEDNESDAY, "future", date(2025, 5, 5), id="month-day-future-rolls"),
        pytest.param("the 3rd of March", WEDNESDAY, None, date(2024, 3, 3), id="day-of-month"),
        pytest.param("March 3rd, 2021", WEDNESDAY, None, date(2021, 3, 3), id="explicit-year"),
        pytest.param("on the 21st", SATURDAY, None, date(2025, 3, 21), id="ordinal-this-month"),
        pytest.param("in August", WEDNESDAY, None, date(2024, 8, 1), id="in-month"),
        pytest.param("in March", WEDNESDAY, "future", date(2025, 3, 1), id="in-month-future"),
        pytest.param("on 2024-06-02", WEDNESDAY, None, date(2024, 6, 2), id="iso"),
        pytest.param("by May 31", WEDNESDAY, None, date(2024, 5, 31), id="deadline-day-beats-month"),
    ],
)
def test_resolve_date(phrase, now, prefer, expected):
    resolved = resolve_date(phrase, now, prefer=prefer)
    assert resolved is not None
    assert resolved.date() == expected
    assert resolved.tzinfo is not None


def test_time_of_day_is_kept():
    [mention] = find_dates("a dentist appointment tomorrow at 3pm", WEDNESDAY)
    assert mention.start == datetime(2024, 5, 9, 15, 0, tzinfo=UTC)
    assert mention.granularity == "minute"
    assert mention.text == "tomorrow at 3pm"


def test_longest_expression_wins_and_spans_point_into_the_text():
    text = "We fly out the day after tomorrow and come back June 7."
    mentions = find_dates(text, WEDNESDAY)
    assert [m.text for m in mentions] == ["the day after tomorrow", "June 7"]
    assert all(text[m.span[0] : m.span[1]] == m.text for m in mentions)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I may go for a run", id="modal-may"),
        pytest.param("I sat down on the sofa", id="sat-is-not-saturday"),
        pytest.param("we wed in a small chapel", id="wed-is-not-wednesday"),
        pytest.param("I'm 34 years old", id="age-is-not-a-date"),
    ],
)
def test_words_that_are_not_dates(text):
    assert find_dates(text, WEDNESDAY) == []


def test_same_phrase_differs_by_message_time():
    assert resolve_date("yesterday", WEDNESDAY) != resolve_date("yesterday", SUNDAY)


@pytest.mark.parametrize(
    ("text", "tense"),
    [
        pytest.param("We went to the beach", "past", id="past"),
        pytest.param("I'm flying to Tokyo next week", "future", id="future"),
        pytest.param("I've got a presentation", "future", id="have-got-is-not-past"),
        pytest.param("The sky is blue", None, id="no-cue"),
    ],
)
def test_guess_tense(text, tense):
    assert guess_tense(text) == tense


def test_add_months_clamps_to_month_end():
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert add_months(date(2024, 3, 31), -13) == date(2023, 2, 28)
