"""The extraction contract types validate what they are given."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.errors import InvalidInput
from memstrata.extraction.base import Candidate, EntityMention, Message, is_multi_valued
from memstrata.models import MemoryKind


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"content": "  "}, id="empty-content"),
        pytest.param({"category": "gossip"}, id="unknown-category"),
        pytest.param({"polarity": 0}, id="polarity"),
        pytest.param({"confidence": 1.5}, id="confidence"),
        pytest.param({"event_time": datetime(2024, 5, 8)}, id="naive-time"),
    ],
)
def test_candidate_rejects_bad_values(changes):
    fields = {
        "kind": MemoryKind.FACT,
        "content": "The user lives in Berlin.",
        "category": "identity",
    } | changes
    with pytest.raises(InvalidInput):
        Candidate(**fields)


def test_candidate_metadata_holds_resolution_keys():
    when = datetime(2024, 5, 8, tzinfo=UTC)
    candidate = Candidate(
        kind=MemoryKind.EVENT, content="x.", category="event", attribute="event", value="v", event_time=when
    )
    assert candidate.metadata() == {
        "subject": "user",
        "attribute": "event",
        "value": "v",
        "polarity": 1,
        "category": "event",
        "event_time": "2024-05-08T00:00:00+00:00",
    }


def test_message_needs_known_role_and_aware_time():
    with pytest.raises(InvalidInput):
        Message(role="robot", content="hi", at=datetime(2024, 5, 8, tzinfo=UTC))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        Message(role="user", content="hi", at=datetime(2024, 5, 8))


def test_entity_type_is_checked():
    with pytest.raises(InvalidInput):
        EntityMention("Berlin", "city")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("attribute", "multi"),
    [("likes", True), ("event", True), (None, True), ("location", False), ("relation:manager", False)],
)
def test_multi_valued_attributes(attribute, multi):
    assert is_multi_valued(attribute) is multi
