"""Prompt builders are pure (dates come in as arguments) and their parsers validate answers."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from memstrata.errors import InvalidInput, LLMOutputError
from memstrata.extraction.base import Message
from memstrata.prompts import (
    COMPRESSED_PREFIX,
    Decision,
    apply_user_context_update,
    build_consolidation_messages,
    build_extraction_messages,
    build_resolution_messages,
    build_summary_messages,
    build_user_context_messages,
    empty_context,
    parse_consolidation,
    parse_extraction,
    parse_resolution,
    parse_summary,
    parse_user_context_update,
)
from memstrata.prompts.extract import EXAMPLE_OUTPUT
from memstrata.prompts.user_context import UserContextUpdate

PAST = date(2019, 2, 14)  # a Thursday, far from the wall clock
AT = datetime(2019, 2, 14, 9, 30, tzinfo=UTC)
TURNS = [
    Message("user", "I moved to Lisbon last week.", AT, speaker="Alice"),
    Message("assistant", "How do you like it?", AT),
]


def all_text(messages) -> str:
    return "\n".join(message.content for message in messages)


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: build_extraction_messages(TURNS, today=PAST), id="extraction"),
        pytest.param(lambda: build_summary_messages("Earlier: x.", TURNS, today=PAST), id="summary"),
        pytest.param(lambda: build_consolidation_messages([(None, "likes tea")], today=PAST), id="consolidation"),
        pytest.param(lambda: build_user_context_messages(empty_context(), "s", today=PAST), id="user-context"),
        pytest.param(lambda: build_resolution_messages(["a"], ["b"], today=PAST), id="resolution"),
    ],
)
def test_prompts_carry_the_given_date_not_the_wall_clock(build):
    text = all_text(build())
    assert "Today is 2019-02-14 (Thursday)" in text
    assert datetime.now(UTC).date().isoformat() not in text


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda d: build_extraction_messages(TURNS, today=d), id="extraction"),
        pytest.param(lambda d: build_summary_messages(None, TURNS, today=d), id="summary"),
        pytest.param(lambda d: build_resolution_messages(["a"], [], today=d), id="resolution"),
    ],
)
def test_prompts_are_pure(build):
    assert build(PAST) == build(PAST)
    assert build(PAST) != build(date(2020, 1, 1))


def test_extraction_prompt_numbers_and_dates_turns():
    messages = build_extraction_messages(TURNS, today=PAST, known_name="Alice", existing=["The user likes tea."])
    last = messages[-1].content
    assert "0. 2019-02-14 (Thursday) user (Alice): I moved to Lisbon last week." in last
    assert "1. 2019-02-14 (Thursday) assistant: How do you like it?" in last
    assert "The user's name is Alice." in last
    assert "0. The user likes tea." in last
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]


def test_extraction_prompt_needs_turns():
    with pytest.raises(InvalidInput, match="at least one turn"):
        build_extraction_messages([], today=PAST)


def test_extraction_example_is_itself_a_valid_answer():
    parsed = parse_extraction(EXAMPLE_OUTPUT)
    assert len(parsed.items) == 4
    assert parsed.rejected == []


def test_extraction_parser_normalizes_fields():
    answer = json.dumps(
        {
            "facts": [
                {
                    "kind": "Preference",
                    "category": "Open Item",
                    "content": "The user wants a reminder about the dentist.",
                    "subject": "The User",
                    "attribute": "",
                    "value": 42,
                    "polarity": "negative",
                    "event_date": "2019-02-20T10:00:00Z",
                    "entities": [
                        "Dr. Silva",
                        {"name": "", "type": "person"},
                        {"name": "Lisbon", "type": "city"},
                    ],
                    "confidence": 0.7,
                }
            ]
        }
    )
    [fact] = parse_extraction(answer).items
    assert (fact.kind, fact.category, fact.subject) == ("preference", "open_item", "user")
    assert (fact.attribute, fact.value, fact.polarity) == (None, "42", -1)
    assert fact.event_date == date(2019, 2, 20)
    assert [(e.name, e.type) for e in fact.entities] == [("Dr. Silva", "other"), ("Lisbon", "other")]


def test_extraction_parser_rejects_unknown_category_per_item():
    answer = '{"facts": [{"category": "gossip", "content": "x y z"}, {"category": "event", "content": "A party."}]}'
    parsed = parse_extraction(answer)
    assert [fact.content for fact in parsed.items] == ["A party."]
    assert "category must be one of" in parsed.rejected[0]


def test_summary_prompt_includes_previous_summary_and_turns():
    text = all_text(build_summary_messages("Alice works at Acme since 2018.", TURNS, today=PAST))
    assert "Alice works at Acme since 2018." in text
    assert "I moved to Lisbon last week." in text
    assert "3-4 sentences" in text


def test_summary_prompt_without_previous_summary():
    assert "(no summary yet)" in all_text(build_summary_messages(None, TURNS, today=PAST))


def test_parse_summary_cleans():
    assert parse_summary("<think>...</think>\nSummary:\nAlice moved to Lisbon on 2019-02-07.") == (
        "Alice moved to Lisbon on 2019-02-07."
    )


def test_consolidation_prompt_lists_dated_memories_oldest_first():
    text = all_text(
        build_consolidation_messages(
            [(date(2018, 1, 2), "The user likes tea."), (None, "The user moved to Lisbon.")],
            today=PAST,
            max_sentences=5,
        )
    )
    assert "0. (2018-01-02 (Tuesday)) The user likes tea.\n1. The user moved to Lisbon." in text
    assert "at most 5 sentences" in text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("The user likes tea.", f"{COMPRESSED_PREFIX} The user likes tea.", id="prefix-added"),
        pytest.param(f"{COMPRESSED_PREFIX} Tea.", f"{COMPRESSED_PREFIX} Tea.", id="prefix-not-doubled"),
        pytest.param("[compressed memory]: Tea.", f"{COMPRESSED_PREFIX} Tea.", id="prefix-normalized"),
    ],
)
def test_parse_consolidation(raw, expected):
    assert parse_consolidation(raw) == expected


def test_parse_consolidation_refuses_empty_summary():
    with pytest.raises(LLMOutputError):
        parse_consolidation(COMPRESSED_PREFIX)


def test_consolidation_needs_memories():
    with pytest.raises(InvalidInput):
        build_consolidation_messages([], today=PAST)


# -- user context (seed 004) -------------------------------------------------------------------------

CONTEXT = {
    "facts": [f"fact {i}" for i in range(19)],
    "preferences": {"contact": "email"},
    "last_topics": ["a", "b", "c"],
    "open_items": ["send the deck", "book flights", "call Sam"],
    "last_session": None,
}


def test_user_context_prompt_numbers_open_items():
    text = all_text(build_user_context_messages(CONTEXT, "We booked the flights.", ["Alice has a cat."], today=PAST))
    assert "0. send the deck\n1. book flights\n2. call Sam" in text
    assert "We booked the flights." in text
    assert "0. Alice has a cat." in text
    assert '"contact": "email"' in text


def test_user_context_update_is_applied_with_caps():
    update = parse_user_context_update(
        '```json\n{"facts_add": ["fact 3", "new A", "new B"], "preferences_set": {"contact_time": "Tuesday"},'
        ' "last_topics": ["flights", "deck", "cats", "extra"], "open_items_add": ["renew passport"],'
        ' "open_items_done": [1, "7", "x"]}\n```'
    )
    now = datetime(2019, 2, 14, 18, 0, tzinfo=UTC)
    updated = apply_user_context_update(CONTEXT, update, now=now)
    assert len(updated["facts"]) == 20
    assert updated["facts"][-2:] == ["new A", "new B"]
    assert updated["facts"][0] == "fact 1", "the oldest fact went first"
    assert updated["preferences"] == {"contact": "email", "contact_time": "Tuesday"}
    assert updated["last_topics"] == ["flights", "deck", "cats"]
    assert updated["open_items"] == ["send the deck", "call Sam", "renew passport"]
    assert updated["last_session"] == now.isoformat()
    assert CONTEXT["open_items"] == ["send the deck", "book flights", "call Sam"], "input not mutated"


def test_empty_update_keeps_context():
    now = datetime(2019, 2, 14, tzinfo=UTC)
    updated = apply_user_context_update(CONTEXT, UserContextUpdate(), now=now)
    assert updated["facts"] == CONTEXT["facts"]
    assert updated["last_topics"] == ["a", "b", "c"]
    assert updated["open_items"] == CONTEXT["open_items"]


def test_user_context_update_must_be_an_object():
    with pytest.raises(LLMOutputError, match="UserContextUpdate"):
        parse_user_context_update('["not", "an", "object"]')


# -- resolution ------------------------------------------------------------------------------------------


def test_resolution_prompt_numbers_both_lists_and_shows_no_ids():
    text = all_text(
        build_resolution_messages(["The user lives in Porto."], ["The user lives in Lisbon.", "Likes tea."], today=PAST)
    )
    assert "EXISTING memories:\n0. The user lives in Lisbon.\n1. Likes tea." in text
    assert "NEW facts:\n0. The user lives in Porto." in text


def test_resolution_prompt_with_no_existing_memories():
    assert "(none)" in all_text(build_resolution_messages(["x"], [], today=PAST))


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            '{"decisions": [{"fact": 0, "action": "SUPERSEDE", "target": 0}]}',
            [Decision(0, "SUPERSEDE", 0)],
            id="supersede",
        ),
        pytest.param(
            '{"decisions": [{"fact": 0, "action": "update", "target": "1", "content": " Likes green tea. "}]}',
            [Decision(0, "UPDATE", 1, "Likes green tea.")],
            id="update-with-merged-text",
        ),
        pytest.param(
            '[{"fact": "N0", "action": "NONE", "target": "E1"}]',
            [Decision(0, "NOOP", 1)],
            id="aliases-and-labels",
        ),
        pytest.param(
            '{"decisions": [{"fact": 0, "action": "SUPERSEDE", "target": 9}]}',
            [Decision(0, "ADD")],
            id="out-of-range-target-becomes-add",
        ),
        pytest.param(
            '{"decisions": [{"fact": 0, "action": "SUPERSEDE", "target": null}]}',
            [Decision(0, "ADD")],
            id="missing-target-becomes-add",
        ),
        pytest.param(
            '{"decisions": [{"fact": 0, "action": "ADD", "target": 1}]}',
            [Decision(0, "ADD")],
            id="add-drops-target",
        ),
        pytest.param(
            '{"decisions": [{"fact": 0, "action": "NOOP", "target": 1}, {"fact": 0, "action": "ADD"}]}',
            [Decision(0, "NOOP", 1)],
            id="first-decision-wins",
        ),
    ],
)
def test_parse_resolution_single_fact(answer, expected):
    assert parse_resolution(answer, new_count=1, existing_count=2) == expected


def test_parse_resolution_fills_missing_facts_with_add_and_ignores_unknown_ones():
    answer = '{"decisions": [{"fact": 1, "action": "NOOP", "target": 0}, {"fact": 5, "action": "NOOP", "target": 0}]}'
    assert parse_resolution(answer, new_count=3, existing_count=1) == [
        Decision(0, "ADD"),
        Decision(1, "NOOP", 0),
        Decision(2, "ADD"),
    ]


def test_parse_resolution_rejects_unknown_actions_entirely():
    with pytest.raises(LLMOutputError, match="every item"):
        parse_resolution('{"decisions": [{"fact": 0, "action": "MERGE_ALL"}]}', new_count=1, existing_count=1)
