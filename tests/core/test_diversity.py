"""Session diversity and the preference for the latest memory."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.core.diversity import asked_role, asks_for_latest, boost_role, diversify, prefer_latest


def test_diversify_alternates_sessions() -> None:
    ranked = [("a1", 1.0), ("a2", 0.95), ("a3", 0.9), ("b1", 0.8), ("c1", 0.5)]
    groups = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "c1": "C"}
    out = diversify(ranked, groups, 0.5)
    assert [i for i, _ in out] == ["a1", "b1", "c1", "a2", "a3"]
    assert dict(out) == {"a1": 1.0, "b1": 0.8, "c1": 0.5, "a2": pytest.approx(0.475), "a3": pytest.approx(0.225)}


def test_diversify_without_penalty_or_groups_keeps_the_order() -> None:
    ranked = [("x", 3.0), ("y", 2.0), ("z", 1.0)]
    assert diversify(ranked, {"x": "A", "y": "A", "z": "A"}, 0.0) == ranked
    assert diversify(ranked, {}, 0.9) == ranked  # no group: never penalized
    assert diversify([], {}, 0.5) == []


def test_asks_for_latest() -> None:
    assert asks_for_latest("How many bikes do I currently own?")
    assert asks_for_latest("What is my most recent personal best?")
    assert not asks_for_latest("Which trip did I take first?")


def test_prefer_latest_raises_newer_candidates() -> None:
    times = {
        "old": datetime(2023, 1, 1, tzinfo=UTC),
        "mid": datetime(2023, 3, 1, tzinfo=UTC),
        "new": datetime(2023, 5, 1, tzinfo=UTC),
        "undated": None,
    }
    out = prefer_latest({"old": 1.0, "mid": 1.0, "new": 1.0, "undated": 1.0}, times, 0.2)
    assert out == {"old": 1.0, "mid": pytest.approx(1.1), "new": pytest.approx(1.2), "undated": 1.0}
    assert prefer_latest({"old": 1.0}, times, 0.2) == {"old": 1.0}


def test_asked_role() -> None:
    assert asked_role("What did I buy for my sister's birthday?") == "user"
    assert asked_role("Can you remind me what you recommended for the hike?") == "assistant"
    assert asked_role("What was the third restaurant you suggested in Rome?") == "assistant"
    assert asked_role("When did Caroline go to the support group?") is None


def test_a_reminder_of_our_earlier_exchange_asks_for_the_assistants_words_unless_it_is_about_me() -> None:
    assert (
        asked_role("I was going through our previous conversation. Could you remind me of the brand that uses rubber?")
        == "assistant"
    )
    assert asked_role("Can you remind me of that dessert shop we talked about last time?") == "assistant"
    # about the speaker: the user's own words
    assert asked_role("In our last chat, can you remind me what my budget for the trip was?") == "user"
    assert asked_role("We discussed my schedule. Remind me when I have the dentist?") == "user"
    # a reminder with no earlier exchange named is a plain first-person request
    assert asked_role("Can you remind me of the brand that uses rubber?") == "user"


def test_boost_role_raises_that_role_only() -> None:
    roles = {"u": "user", "a": "assistant", "n": None}
    scores = {"u": 1.0, "a": 1.0, "n": 1.0}
    assert boost_role(scores, roles, "user", 0.5) == {"u": 1.5, "a": 1.0, "n": 1.0}
    assert boost_role(scores, roles, None, 0.5) == scores
