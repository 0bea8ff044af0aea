"""Plans the speaker is weighing, activities they are trying out, statements after a discourse marker or a date."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.base import STATEMENT, Message
from memstrata.extraction.disclosure import disclosure_start, refusal
from memstrata.extraction.rules import RuleExtractor
from memstrata.models import MemoryKind

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)  # a Wednesday


def extract(text: str, speaker: str | None = None):
    return RuleExtractor().extract([Message("user", text, AT, speaker=speaker)])


@pytest.mark.parametrize(
    ("text", "content"),
    [
        pytest.param(
            "I'm thinking of opening a second bakery in Leeds, any advice?",
            "The user is thinking of opening a second bakery in Leeds.",
            id="thinking-of",
        ),
        pytest.param(
            "I've been considering taking evening classes in Mandarin.",
            "The user has been considering taking evening classes in Mandarin.",
            id="considering",
        ),
        pytest.param(
            "We're considering adopting a retired greyhound.",
            "The user and others are considering adopting a retired greyhound.",
            id="household-we",
        ),
        pytest.param(
            "I've been trying intermittent fasting since January.",
            "The user has been trying intermittent fasting since January 2026.",
            id="trying-out",
        ),
    ],
)
def test_a_considered_plan_or_a_new_activity_is_kept_as_said(text: str, content: str) -> None:
    found = extract(text)
    assert [c.content for c in found] == [content]


def test_a_considered_plan_is_no_routine_and_no_event() -> None:
    [plan] = extract("I've been thinking of buying oat milk for my morning routine")
    assert plan.kind is MemoryKind.FACT and plan.attribute == STATEMENT
    assert plan.content == "The user has been thinking of buying oat milk for their morning routine."


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I'm thinking about it.", id="thinking-about-it"),
        pytest.param("I've been wondering whether to repaint the hallway.", id="wondering-whether"),
        pytest.param("I'm thinking of serving the roast lamb with couscous instead.", id="a-thing-of-the-talk"),
        pytest.param("I'm considering getting some tips on that first.", id="a-request-in-disguise"),
        pytest.param("I'm trying to decide between two gyms.", id="trying-to"),
        pytest.param("I'm trying my best.", id="trying-my-best"),
    ],
)
def test_musing_and_trying_to_stay_unstored(text: str) -> None:
    assert extract(text) == []


def test_a_discourse_marker_does_not_hide_the_speaker() -> None:
    [event] = extract("You know, last weekend I caught a huge pike at the lake.")
    assert event.kind is MemoryKind.EVENT
    assert event.content == "On the weekend of 28 February 2026 the user caught a huge pike at the lake."
    assert event.event_time is not None and event.event_time.date().isoformat() == "2026-02-28"
    text = "Honestly, I think that's fine."
    start = disclosure_start(text)
    assert start is not None and refusal(text[start:]) == "attitude"


def test_a_date_before_the_subject_dates_the_statement() -> None:
    [event] = extract("Hi Sam! Last week, I set up a stall for my ceramics at the farmers market.")
    assert event.kind is MemoryKind.EVENT
    assert event.event_time is not None and event.event_time.date().isoformat() == "2026-02-23"
    assert event.content.startswith("In the week of 23 February 2026, the user set up a stall for their ceramics")
