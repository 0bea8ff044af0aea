"""A restated value retires the old one (`changes`); a done report closes an open item (`completions`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata import Memory, Scope, SearchFilter
from memstrata.embedders import HashingEmbedder
from memstrata.extraction.base import Message
from memstrata.extraction.changes import change_retires, value_types
from memstrata.extraction.completions import closed_items, past_forms
from memstrata.extraction.resolution import normalize_value
from memstrata.extraction.rules import RuleExtractor
from memstrata.storage.base import Store

FIRST = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def retires(new: str, old: str) -> bool:
    return change_retires(normalize_value(new), normalize_value(old))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The launch is on April 10.", "we moved the launch to May"),
        ("my number is 555-1234", "my new number is 555-9876"),
        ("the meeting is on Thursday", "the meeting is now on Friday"),
        ("the call is tomorrow at 2pm", "actually it's 3pm not 2pm"),
        ("my email is bob@old.com", "I changed my email to bob@new.com"),
        ("the deadline is this Friday", "we pushed the deadline to next week"),
        ("my address is 12 Oak Street", "my address is now 40 Elm Road"),
        ("the wedding is in Rome", "the wedding is now in Porto"),
        ("the dentist appointment is on Monday", "I rescheduled the dentist appointment to Wednesday"),
    ],
)
def test_a_restated_value_retires_the_old_one(old: str, new: str) -> None:
    assert retires(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("the launch is on April 10", "we moved the party to May"),  # another subject
        ("Sam's number is 555-1234", "my new number is 555-9876"),  # someone else's
        ("my number is 555-1234", "my new phone is an iPhone"),  # a phone is not its number
        ("the meeting is with Bob", "the meeting is now on Friday"),  # another attribute of the meeting
        ("the launch is in May", "we moved the launch to May"),  # already says it
        ("the call is at 2pm", "actually I prefer tea not coffee"),  # "not" with values of no type
        ("my plan is to rest", "my plan is now to travel"),  # a vague subject
        ("I love my new bike", "my new bike is red"),  # no old value of the bike's
    ],
)
def test_an_unrelated_statement_retires_nothing(old: str, new: str) -> None:
    assert not retires(new, old)


def test_value_types_name_one_type_per_span() -> None:
    assert value_types("call me at 555-9876") == {"phone"}
    assert value_types("at 3pm on friday") == {"time", "date"}
    assert value_types("in porto") == set()


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ("call the dentist", "I called the dentist"),
        ("finish the report", "done with the report"),
        ("finish the report", "the report is finished, finally"),
        ("send the invoice to Sam", "I already sent it"),
        ("renew my passport by Friday", "I renewed my passport yesterday"),
        ("with Maria about the contract", "followed up with Maria this morning"),
        ("book flights to Rome", "ok so I booked the flights to Rome"),
    ],
)
def test_a_done_report_closes_the_open_item(item: str, said: str) -> None:
    assert closed_items(said, [item]) == [0]


@pytest.mark.parametrize(
    ("items", "said"),
    [
        (["call the dentist"], "I haven't called the dentist yet"),
        (["call the dentist"], "I'll call the dentist tomorrow"),
        (["call the dentist"], "did I call the dentist?"),
        (["call the dentist"], "I called my mom"),  # another object
        (["call the dentist"], "Sam called the dentist"),  # someone else did
        (["send the invoice to Sam", "send the slides"], "I sent it"),  # which one?
        (["finish the report"], "done with coffee"),
    ],
)
def test_other_messages_close_nothing(items: list[str], said: str) -> None:
    assert closed_items(said, items) == []


def test_past_forms() -> None:
    assert past_forms("call") == {"called"} and past_forms("send") == {"sent"}
    assert past_forms("renew") == {"renewed"} and past_forms("book") == {"booked"} and past_forms("pay") == {"paid"}


def learned(memory: Memory, *said: str) -> tuple[list[str], list[str]]:
    scope = Scope("alice")
    for day, text in enumerate(said):
        memory.learn([Message("user", text, FIRST + timedelta(days=day))], scope=scope)
    current = [r.content for r in memory.list(scope=scope, limit=100)]
    everything = memory.list(scope=scope, limit=100, filters=SearchFilter(include_superseded=True))
    return current, [r.content for r in everything if r.valid_to is not None]


def memory_on(store: Store) -> Memory:
    return Memory(store=store, embedder=HashingEmbedder(64), extractor=RuleExtractor(), track_access=False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The launch is on April 10.", "we moved the launch to May"),
        ("my number is 555-1234", "my new number is 555-9876"),
        ("my email is bob@old.com", "I changed my email to bob@new.com"),
    ],
)
def test_learn_retires_a_restated_value_with_history(store: Store, old: str, new: str) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, old, new)
    assert len(current) == 1 and len(history) == 1
    assert new.split()[-1].casefold() in current[0].casefold()


def test_learn_keeps_an_unrelated_fact(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, "The launch is on April 10.", "we moved the party to May")
    assert len(current) == 2 and history == []


@pytest.mark.parametrize(
    ("task", "done"),
    [
        ("remind me to call the dentist", "I called the dentist"),
        ("I still need to finish the report", "done with the report"),
        ("don't let me forget to send the invoice to Sam", "I already sent it"),
    ],
)
def test_learn_closes_an_open_item_with_history(store: Store, task: str, done: str) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, task, done)
    assert [c for c in current if "has done the open item" in c or "sent" in c] == current
    assert len(history) == 1


def test_learn_leaves_an_open_item_not_done(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, "remind me to call the dentist", "I haven't called the dentist yet")
    assert any("reminded to call the dentist" in c for c in current) and history == []
