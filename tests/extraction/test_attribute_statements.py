"""Statements of a value about the user's own life that the extractor must keep, so that a later value of the
same attribute can retire them (issue 30, "updates that retire"). Self-written sentences."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.rules import RuleExtractor

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def contents(text: str) -> list[str]:
    return [c.content for c in RuleExtractor().extract_text(text, at=AT)]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # an opening that only announces the statement
        (
            "I've been swimming a lot lately, and I'm happy to say that I finally set a personal best of 48:10 in "
            "the 400 meters.",
            "48:10",
        ),
        ("I'm proud to say I finished my first half marathon in 2:05.", "half marathon"),
        # a statement after "especially the part where"
        (
            "I've been enjoying my job at the clinic, especially the part where I now manage a team of three nurses.",
            "manages a team of three nurses",
        ),
        # how long or how often, after a dash, stays with its clause
        ("I've been keeping up my evening journaling habit - it's been 6 weeks now!", "6 weeks"),
        ("I've stuck with my swim schedule - three times a week, actually.", "three times a week"),
        # a comment with an adverb after the statement is cut off
        ("I attended four sessions of the pottery workshop, and it really helped me relax.", "four sessions"),
    ],
)
def test_a_value_of_the_users_life_is_kept(said: str, kept: str) -> None:
    assert any(kept in c for c in contents(said)), contents(said)


@pytest.mark.parametrize(
    "said",
    [
        "Let's say that I moved to Lisbon, what would my rent be?",  # still a supposition
        "Say that I quit my job next year, could I afford it?",
    ],
)
def test_a_supposition_is_still_not_kept(said: str) -> None:
    assert not any("Lisbon" in c or "quit" in c for c in contents(said))
