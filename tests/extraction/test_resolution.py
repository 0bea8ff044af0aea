"""Resolution: duplicates refresh, new values supersede, unrelated facts never retire each other."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.extraction.base import Candidate, Message
from memstrata.extraction.resolution import (
    Decision,
    DecisionKind,
    ExistingMemory,
    decide,
    normalize_value,
    restated_count,
    validate_llm_decision,
)
from memstrata.extraction.rules import RuleExtractor
from memstrata.models import MemoryKind, content_hash

AT = datetime(2024, 5, 8, 10, 0, tzinfo=UTC)
EMBEDDER = HashingEmbedder(64)


def candidate_from(text: str) -> Candidate:
    """The real extractor's candidate for `text` (one expected)."""
    [candidate] = RuleExtractor().extract([Message(role="user", content=text, at=AT)])
    return candidate


def stored(memory_id: str, text: str, *, against: Candidate) -> ExistingMemory:
    """What the lead stores for an extracted `text`, with its real similarity to `against`."""
    old = candidate_from(text)
    vectors = EMBEDDER.embed_documents([old.content, against.content])
    return ExistingMemory(
        id=memory_id,
        content=old.content,
        content_hash=content_hash(old.content),
        kind=old.kind,
        metadata=old.metadata(),
        similarity=float(np.dot(vectors[0], vectors[1])),
    )


def resolve(new_text: str, *old_texts: str) -> Decision:
    new = candidate_from(new_text)
    existing = [stored(f"m{i}", text, against=new) for i, text in enumerate(old_texts)]
    return decide(new, existing)


def test_new_location_supersedes_old():
    decision = resolve("I live in Berlin.", "I live in Paris.")
    assert decision.kind is DecisionKind.SUPERSEDE
    assert decision.target_ids == ("m0",)


def test_correction_supersedes():
    decision = resolve("Actually my sister's name is Ana, not Anna.", "My sister's name is Anna.")
    assert (decision.kind, decision.target_ids) == (DecisionKind.SUPERSEDE, ("m0",))


def test_likes_of_different_objects_are_both_kept():
    decision = resolve("I like coffee.", "I like tea.")
    assert decision.kind is DecisionKind.ADD


def test_flipped_polarity_on_same_object_supersedes():
    decision = resolve("I hate tea.", "I like tea.", "I like coffee.")
    assert (decision.kind, decision.target_ids) == (DecisionKind.SUPERSEDE, ("m0",))


def test_prefer_long_supersedes_prefer_short():
    decision = resolve("I prefer long, detailed answers.", "I prefer short answers.")
    assert (decision.kind, decision.target_ids) == (DecisionKind.SUPERSEDE, ("m0",))


def test_exact_duplicate_is_noop_with_refresh_id():
    decision = resolve("I live in Berlin.", "I work at Stripe.", "I live in Berlin.")
    assert (decision.kind, decision.target_ids) == (DecisionKind.NOOP, ("m1",))


def test_same_slot_and_value_in_other_words_is_noop():
    decision = resolve("I'm based in Berlin.", "We moved to Berlin last year.")
    assert (decision.kind, decision.target_ids) == (DecisionKind.NOOP, ("m0",))


def test_unrelated_facts_never_retire_each_other():
    decision = resolve("I work at Siemens.", "I live in Paris.", "I like tea.", "My wife is Ana.")
    assert decision.kind is DecisionKind.ADD
    assert decision.target_ids == ()


def test_same_attribute_other_subject_is_not_superseded():
    new = candidate_from("I live in Berlin.")
    sarah = ExistingMemory(
        id="s1",
        content="Sarah lives in Paris.",
        content_hash=content_hash("Sarah lives in Paris."),
        kind=MemoryKind.FACT,
        metadata={"subject": "sarah", "attribute": "location", "value": "Paris", "polarity": 1},
        similarity=0.9,
    )
    assert decide(new, [sarah]).kind is DecisionKind.ADD


def test_memory_without_metadata_is_never_superseded_by_rules():
    new = candidate_from("I live in Berlin.")
    manual = ExistingMemory(
        id="x",
        content="User lives in Paris",
        content_hash=content_hash("User lives in Paris"),
        kind=MemoryKind.FACT,
        similarity=0.9,
    )
    assert decide(new, [manual]).kind is DecisionKind.ADD


def test_very_similar_memory_with_a_different_value_is_not_a_duplicate():
    new = candidate_from("I live in Berlin.")
    old = ExistingMemory(
        id="p",
        content="The user lives in Paris.",
        content_hash=content_hash("The user lives in Paris."),
        kind=MemoryKind.FACT,
        metadata=candidate_from("I live in Paris.").metadata(),
        similarity=0.99,
    )
    decision = decide(new, [old])
    assert (decision.kind, decision.target_ids) == (DecisionKind.SUPERSEDE, ("p",))


def test_near_duplicate_event_is_noop_but_other_day_is_added():
    new = candidate_from("I had a job interview yesterday.")
    same_day = ExistingMemory(
        id="e1",
        content="The user had an interview on 7 May 2024.",
        content_hash=content_hash("The user had an interview on 7 May 2024."),
        kind=MemoryKind.EVENT,
        metadata={**new.metadata(), "value": "other words"},
        similarity=0.97,
    )
    other_day = ExistingMemory(
        id="e2",
        content="The user had a job interview on 1 May 2024.",
        content_hash=content_hash("The user had a job interview on 1 May 2024."),
        kind=MemoryKind.EVENT,
        metadata={**new.metadata(), "event_time": "2024-05-01T00:00:00+00:00"},
        similarity=0.98,
    )
    assert decide(new, [other_day]).kind is DecisionKind.ADD
    assert decide(new, [other_day, same_day]).target_ids == ("e1",)


def test_multiple_stale_values_are_all_retired():
    new = candidate_from("I live in Berlin.")
    olds = [stored(f"m{i}", f"I live in {city}.", against=new) for i, city in enumerate(["Paris", "Rome"])]
    assert decide(new, olds).target_ids == ("m0", "m1")


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        pytest.param("The City Council", "city council", id="article-and-case"),
        pytest.param("  Berlin. ", "berlin", id="punctuation"),
        pytest.param(None, None, id="none"),
    ],
)
def test_normalize_value(raw, normalized):
    assert normalize_value(raw) == normalized


# --- LLM proposals ------------------------------------------------------------------------------


@pytest.fixture
def berlin_case():
    new = candidate_from("I live in Berlin.")
    existing = [stored("paris", "I live in Paris.", against=new), stored("tea", "I like tea.", against=new)]
    return new, existing


def test_llm_supersede_maps_index_to_id(berlin_case):
    new, existing = berlin_case
    decision = validate_llm_decision({"action": "SUPERSEDE", "index": 0}, new, existing)
    assert (decision.kind, decision.target_ids) == (DecisionKind.SUPERSEDE, ("paris",))


@pytest.mark.parametrize(
    "proposal",
    [
        pytest.param({"action": "SUPERSEDE", "index": 5}, id="out-of-range"),
        pytest.param({"action": "SUPERSEDE", "index": -1}, id="negative"),
        pytest.param({"action": "NOOP", "index": True}, id="bool-index"),
        pytest.param({"action": "UPDATE", "index": "first"}, id="word-index"),
        pytest.param({"action": "SUPERSEDE"}, id="missing-index"),
        pytest.param({"action": "DELETE", "index": 0}, id="unknown-action"),
        pytest.param({"index": 0}, id="missing-action"),
    ],
)
def test_llm_bad_proposals_fall_back_to_add(berlin_case, proposal):
    new, existing = berlin_case
    decision = validate_llm_decision(proposal, new, existing)
    assert (decision.kind, decision.target_ids) == (DecisionKind.ADD, ())
    assert decision.reason


def test_llm_may_not_retire_an_unrelated_memory(berlin_case):
    new, existing = berlin_case
    decision = validate_llm_decision({"action": "supersede", "index": [0, 1]}, new, existing)
    assert decision.kind is DecisionKind.ADD
    assert "tea" in decision.reason


def test_llm_may_not_retire_a_different_like():
    new = candidate_from("I like coffee.")
    existing = [stored("tea", "I like tea.", against=new)]
    assert validate_llm_decision({"action": "SUPERSEDE", "index": 0}, new, existing).kind is DecisionKind.ADD


def test_llm_noop_and_update(berlin_case):
    new, existing = berlin_case
    noop = validate_llm_decision({"event": "NONE", "index": "0"}, new, existing)
    assert (noop.kind, noop.target_ids) == (DecisionKind.NOOP, ("paris",))
    update = validate_llm_decision(
        {"action": "UPDATE", "index": 0, "content": "The user lives in Berlin (moved from Paris)."},
        new,
        existing,
    )
    assert (update.kind, update.target_ids) == (DecisionKind.UPDATE, ("paris",))
    assert update.content == "The user lives in Berlin (moved from Paris)."


def test_llm_unstructured_target_needs_similarity():
    new = candidate_from("Note that the garage code is 2580.")
    close = ExistingMemory(id="c", content="garage code 1234", content_hash="h1", kind=MemoryKind.NOTE, similarity=0.8)
    far = ExistingMemory(id="f", content="likes jazz", content_hash="h2", kind=MemoryKind.NOTE, similarity=0.1)
    assert validate_llm_decision({"action": "SUPERSEDE", "index": 0}, new, [close]).target_ids == ("c",)
    assert validate_llm_decision({"action": "SUPERSEDE", "index": 0}, new, [far]).kind is DecisionKind.ADD


def test_llm_may_supersede_a_similar_event_but_not_a_distant_one():
    new = candidate_from("The team offsite is on Friday.")
    meta = {**new.metadata(), "event_time": "2024-05-09T00:00:00+00:00"}
    moved = ExistingMemory(
        id="o",
        content="The team offsite is on 9 May 2024.",
        content_hash="h",
        kind=MemoryKind.EVENT,
        metadata=meta,
        similarity=0.9,
    )
    other = ExistingMemory(
        id="d",
        content="The user has a dentist appointment.",
        content_hash="h2",
        kind=MemoryKind.EVENT,
        metadata=meta,
        similarity=0.2,
    )
    assert validate_llm_decision({"action": "SUPERSEDE", "index": 0}, new, [moved]).target_ids == ("o",)
    assert validate_llm_decision({"action": "SUPERSEDE", "index": 0}, new, [other]).kind is DecisionKind.ADD


# -- stance, retractions and valid time -------------------------------------------------------------
def slot_memory(memory_id: str, attribute: str, value: str, polarity: int = 1, **extra: object) -> ExistingMemory:
    text = f"{attribute} {value} {polarity}"
    metadata = {"subject": "user", "attribute": attribute, "value": value, "polarity": polarity, **extra}
    return ExistingMemory(memory_id, text, content_hash(text), MemoryKind.PREFERENCE, metadata)


def likes(value: str, polarity: int = 1, attribute: str = "likes") -> Candidate:
    return Candidate(
        MemoryKind.PREFERENCE,
        f"{attribute} {value} {polarity}!",
        "preference",
        attribute=attribute,
        value=value,
        polarity=polarity,
    )


def test_a_time_word_is_not_part_of_the_value() -> None:
    assert normalize_value("coffee now") == normalize_value("Coffee") == "coffee"
    assert decide(likes("coffee now", -1), [slot_memory("m1", "likes", "coffee")]).kind is DecisionKind.SUPERSEDE


def test_an_opposite_stance_in_another_affinity_slot_retires() -> None:
    decision = decide(likes("no coffee", attribute="diet"), [slot_memory("m1", "likes", "coffee")])
    assert decision == Decision(DecisionKind.SUPERSEDE, ("m1",), decision.reason)
    assert decide(likes("no meat", attribute="diet"), [slot_memory("m1", "likes", "coffee")]).kind is DecisionKind.ADD


def test_a_retraction_retires_the_memory_whose_value_it_names() -> None:
    existing = [slot_memory("acme", "employer", "Acme Corp"), slot_memory("tea", "likes", "tea")]
    decision = decide(likes("Globex", attribute="employer"), existing, retracted=("work at acme",))
    assert decision.kind is DecisionKind.SUPERSEDE and decision.target_ids == ("acme",)
    decision = decide(likes("jazz"), existing, retracted=("work at initech",))
    assert decision.kind is DecisionKind.ADD


def test_an_older_statement_becomes_history_of_the_newer() -> None:
    newer = replace(slot_memory("porto", "location", "Porto"), stated_at=datetime(2026, 1, 1, tzinfo=UTC))
    decision = decide(likes("Madrid", attribute="location"), [newer], stated_at=datetime(2024, 1, 1, tzinfo=UTC))
    assert decision.kind is DecisionKind.HISTORY and decision.target_ids == ("porto",)
    decision = decide(likes("Lisbon", attribute="location"), [newer], stated_at=datetime(2027, 1, 1, tzinfo=UTC))
    assert decision.kind is DecisionKind.SUPERSEDE


def test_a_fact_said_before_a_retraction_of_it_becomes_its_history() -> None:
    retraction = replace(
        slot_memory("r", "retraction", "live in berlin", -1, retracts=["live in berlin"]),
        stated_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    older = decide(likes("Berlin", attribute="location"), [retraction], stated_at=datetime(2025, 1, 1, tzinfo=UTC))
    assert older.kind is DecisionKind.HISTORY
    again = decide(likes("Berlin", attribute="location"), [retraction], stated_at=datetime(2027, 1, 1, tzinfo=UTC))
    assert again.kind is DecisionKind.SUPERSEDE


@pytest.mark.parametrize(
    ("value", "phrase", "named"),
    [
        ("acme corp", "work at acme", True),
        ("my honda civic", "civic", True),
        ("coffee", "drink coffee", True),
        ("tea", "drink coffee", False),
        ("bo", "bo", False),
        ("acme", "work at initech", False),
    ],
)
def test_value_named(value: str, phrase: str, named: bool) -> None:
    from memstrata.extraction.resolution import value_named

    assert value_named(value, phrase) is named


@pytest.mark.parametrize(
    ("new", "old", "verdict"),
    [
        pytest.param("I now have 150 stars on the app", "I have 120 stars on the app", "retire", id="new-number"),
        pytest.param("I have 120 stars on the app", "I have 120 stars on the app", "same", id="same-number"),
        pytest.param("I have three bikes in the garage now", "I have two bikes in the garage", "retire", id="words"),
        pytest.param("I have 3 bikes in the garage", "I have 3 cats in the garage", "keep", id="another-thing"),
        pytest.param("Rae note 2", "Rae note 1", "keep", id="too-short"),
        pytest.param("I ran a marathon", "I ran a half marathon", "keep", id="no-number"),
    ],
)
def test_restated_count(new: str, old: str, verdict: str) -> None:
    assert restated_count(new, old) == verdict
