"""Chat that leaves out "I", and switches from one thing to another (the old one goes to history)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.extraction.base import Candidate, Message
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.switches import switch_retires
from memstrata.filters import SearchFilter
from memstrata.models import MemoryKind

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)  # a Wednesday


def extract(text: str) -> list[Candidate]:
    return RuleExtractor().extract([Message(role="user", content=text, at=AT)])


@pytest.mark.parametrize(
    ("text", "content", "day"),
    [
        pytest.param(
            "Aced my driving test this morning!!", "The user aced their driving test on 4 March 2026.", 4, id="aced"
        ),
        pytest.param(
            "Finished the Valencia half in 1:48 on Sunday",
            "The user finished the Valencia half in 1:48 on 1 March 2026.",
            1,
            id="finished-dated",
        ),
        pytest.param(
            "Just got back from Reykjavik yesterday, still jet-lagged",
            "The user just got back from Reykjavik on 3 March 2026.",
            3,
            id="got-back",
        ),
    ],
)
def test_a_dropped_i_before_a_past_action_is_a_dated_event(text: str, content: str, day: int) -> None:
    [candidate] = extract(text)
    assert candidate.kind is MemoryKind.EVENT
    assert candidate.content.startswith(content.removesuffix("."))
    assert candidate.event_time is not None and candidate.event_time.day == day


@pytest.mark.parametrize(
    ("text", "content"),
    [
        pytest.param(
            "ugh, finally handed in my thesis draft to my supervisor last night",
            "The user finally handed in their thesis draft to their supervisor on 3 March 2026.",
            id="interjection-first",
        ),
        pytest.param(
            "Had my tonsils out on Monday, still sore",
            "The user had their tonsils out on 2 March 2026",
            id="had-my-is-no-question",
        ),
        pytest.param(
            "Currently reading The Overstory and loving it",
            "The user is currently reading The Overstory.",
            id="currently-reading",
        ),
        pytest.param("I'm near-sighted btw", "The user is near-sighted.", id="one-word-trait"),
        pytest.param(
            "Finally paid off my car loan", "The user finally paid off their car loan.", id="adverb-irregular-past"
        ),
        pytest.param("no longer vegetarian, eating fish again", "The user is no longer vegetarian.", id="no-longer"),
    ],
)
def test_chat_without_a_subject_or_with_fillers(text: str, content: str) -> None:
    [candidate] = extract(text)
    assert candidate.content.startswith(content.removesuffix("."))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Just checked, the pharmacy closes at 8", id="errand-in-the-talk"),
        pytest.param("Just saw your reply", id="reaction-to-the-assistant"),
        pytest.param("Had to bail, sorry", id="apology"),
        pytest.param("Just excited to finally be done", id="feeling"),
    ],
)
def test_a_dropped_i_that_states_nothing_to_keep(text: str) -> None:
    assert extract(text) == []


def test_a_gerund_subject_is_no_dropped_i() -> None:
    """Never read as a dropped "I" ("The user journaling ..."): the rules store nothing; the learned path
    (`rules.learned`) may keep it as said, the gerund still its subject."""
    text = "Journaling before bed really helps me wind down and sleep better."
    assert RuleExtractor(worthiness=None).extract([Message(role="user", content=text, at=AT)]) == []
    assert all(c.content.startswith("Journaling before bed really helps the user") for c in extract(text))


def test_a_diet_held_since_a_date() -> None:
    assert [(c.attribute, c.value) for c in extract("I've been pescatarian since 2021")] == [("diet", "pescatarian")]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        pytest.param(
            "Vet appointment on Friday, dreading it", "The user has a vet appointment on 6 March 2026", id="noun-day"
        ),
        pytest.param(
            "Job interview at Canva next Tuesday", "The user has a job interview at Canva on 10 March 2026", id="at-org"
        ),
        pytest.param(
            "Physio appointment tomorrow at 9am",
            "The user has a physio appointment on 5 March 2026 at 09:00",
            id="time",
        ),
    ],
)
def test_a_noun_phrase_with_a_date_is_something_the_user_has(text: str, content: str) -> None:
    [candidate] = extract(text)
    assert candidate.kind is MemoryKind.EVENT
    assert candidate.content.startswith(content)


def test_back_from_a_place_without_a_subject() -> None:
    [candidate] = extract("Back from Reykjavik, what a week")
    assert candidate.content == "The user is back from Reykjavik."


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        pytest.param("Turned 34 on Saturday, feeling old", "age", "34", id="age"),
        pytest.param("Started at Monzo as a data analyst last week", "employer", "Monzo", id="employer"),
        pytest.param("my new manager is Delphine, she seems sharp", "relation:manager", "Delphine", id="new-relative"),
    ],
)
def test_a_slot_said_in_passing(text: str, attribute: str, value: str) -> None:
    assert (attribute, value) in [(c.attribute, c.value) for c in extract(text)]


def test_leaving_one_employer_and_joining_another_in_one_clause() -> None:
    found = extract("so I left Initrode and joined Hooli on Monday!")
    assert ("employer", "Hooli", 1) in [(c.attribute, c.value, c.polarity) for c in found]


@pytest.mark.parametrize(
    ("new", "old"),
    [
        pytest.param("i switched to almond milk", "i drink oat milk in my coffee", id="same-kind"),
        pytest.param("i switched from spotify to tidal last month", "i use spotify for music", id="named"),
        pytest.param("i replaced my kindle with a kobo", "i read on a kindle every night", id="replaced-with"),
        pytest.param("i drink green tea instead of coffee now", "i drink coffee every morning", id="instead-of"),
    ],
)
def test_a_switch_retires_what_it_replaces(new: str, old: str) -> None:
    assert switch_retires(new, old)


@pytest.mark.parametrize(
    ("new", "old"),
    [
        pytest.param("i switched to a new team at work", "i play on a soccer team", id="vague-modifier"),
        pytest.param("i switched to almond milk", "i drink almond milk with cereal", id="already-the-new-thing"),
        pytest.param("i switched to neovim", "i use vs code for everything", id="no-shared-kind"),
        pytest.param("i went to the gym", "i go to the gym on mondays", id="no-switch"),
        pytest.param("i switched from spotify to tidal", "i bike to work", id="unrelated"),
    ],
)
def test_what_a_switch_does_not_retire(new: str, old: str) -> None:
    assert not switch_retires(new, old)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(store=f"sqlite:///{tmp_path / 'switch.db'}", embedder=HashingEmbedder(64)) as m:
        yield m


def learn(memory: Memory, texts: list[str]) -> set[str]:
    at = datetime(2026, 3, 1, 9, tzinfo=UTC)
    for number, text in enumerate(texts):
        memory.learn([{"role": "user", "content": text, "at": at + timedelta(days=number)}], scope="sam")
    return {m.content for m in memory.list(scope="sam")}


def test_learning_a_switch_leaves_only_the_new_thing_current(memory: Memory) -> None:
    current = learn(memory, ["I drink oat milk in my coffee", "switched to almond milk last week, way creamier"])
    assert not any("oat milk" in text for text in current)
    assert any("almond milk" in text for text in current)
    everything = memory.list(scope="sam", filters=SearchFilter(include_superseded=True))
    history = {m.content for m in everything} - current
    assert any("oat milk" in text for text in history)


def test_learning_a_switch_keeps_unrelated_statements(memory: Memory) -> None:
    current = learn(memory, ["I bike to work most days", "I switched from Spotify to Tidal"])
    assert any("bikes to work" in text for text in current)


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        pytest.param("I work at Initech", "Not at Initech anymore, joined Hooli in May", "Initech", "Hooli", id="job"),
        pytest.param(
            "My favorite podcast is Radiolab",
            "New favorite podcast: Search Engine",
            "Radiolab",
            "Search Engine",
            id="favorite-shorthand",
        ),
        pytest.param(
            "I'm a junior analyst", "Got promoted to senior analyst on Friday", "junior", "senior", id="promotion"
        ),
        pytest.param("I use she/her pronouns", "I go by they/them now", "she/her", "they/them", id="pronouns"),
        pytest.param(
            "I drive a Fiesta", "Traded in the Fiesta for an e-bike, no regrets", "Fiesta", "e-bike", id="traded"
        ),
        pytest.param("I swim 2 times a week", "I swim 4 times a week now", "2 times", "4 times", id="restated-count"),
    ],
)
def test_an_update_retires_the_old_value(memory: Memory, first: str, later: str, old: str, new: str) -> None:
    current = learn(memory, [first, later])
    assert any(new in text for text in current), current
    assert not any(old in text and new not in text for text in current), current
