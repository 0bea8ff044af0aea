"""Open items said the way people say them in chat: after a hedge, with "I'll need to", "I've been
meaning to", "I need to remember to ask my ..."; and not from questions, exits or thin verbs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.base import Message
from memstrata.extraction.rules import RuleExtractor

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)


def open_items(text: str) -> list[str]:
    found = RuleExtractor(worthiness=None).extract([Message("user", text, AT)])
    return [c.content for c in found if c.category == "open_item"]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        (
            "I think I should reach out to my doctor to discuss my test results.",
            "The user should reach out to their doctor to discuss their test results.",
        ),
        (
            "I guess I need to call the landlord about the lease.",
            "The user needs to call the landlord about the lease.",
        ),
        (
            "I'll need to book a hotel with bike storage in Denver.",
            "The user will need to book a hotel with bike storage in Denver.",
        ),
        ("I'll also need to renew my car insurance.", "The user will need to renew their car insurance."),
        (
            "By the way, I've been meaning to follow up with Sophia about the collaboration.",
            "The user has been meaning to follow up with Sophia about the collaboration.",
        ),
        (
            "I need to remember to ask my sister about the yellow dress I lent her.",
            "The user needs to ask their sister about the yellow dress the user lent her.",
        ),
    ],
)
def test_open_items_in_the_shapes_chat_uses(text: str, content: str) -> None:
    assert open_items(text) == [content]


@pytest.mark.parametrize(
    "text",
    [
        "For the application, do I need to provide my old and new names?",
        "Can I book both tours together, or do I need to book them separately?",
        "First question - are there any other criteria I should consider for selecting a market",
        "Can you suggest some questions I should ask my followers?",
        "Do you think I should wax my car after washing it?",
        "Can you remind me what documents I need to send them?",
        "I apologize, but I need to correct myself.",
        "I get it, I need to practice!",
        "Now, I should get back to planning my dinner party.",
        "I've been meaning to replace the harsh overhead lighting in there anyway.",
        "I need to ask you something about my order.",
        "I wish I had to travel less for work.",
        "I'll have to check out some of these recommendations.",
        "I'll have to pay more attention to my own body language from now on.",
    ],
)
def test_no_open_item_from_questions_exits_or_thin_verbs(text: str) -> None:
    assert open_items(text) == []


def test_getting_back_to_a_person_is_still_a_task() -> None:
    assert open_items("I need to get back to my landlord about the lease.") == [
        "The user needs to get back to their landlord about the lease."
    ]
