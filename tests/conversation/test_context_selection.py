"""`context()` keeps facts before chatter and resolves the user's own name."""

from __future__ import annotations

from typing import Any

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import Scope
from memstrata.settings import Settings

from .conftest import MemoryFactory

MAYA = Scope("maya", session_id="s1")
TURNS = [
    "My name is Maya.",
    "I live in Porto.",
    "My mother lives in Montreal.",
    "I have a peanut allergy.",
    "Thanks, that's all for now.",
    "ok",
    "We're migrating our database to Postgres this week.",
]


def _maya(make_memory: MemoryFactory):  # type: ignore[no-untyped-def]
    memory = make_memory()
    for text in TURNS:
        memory.add_message("user", text, scope=MAYA)
    memory.learn([{"role": "user", "content": t} for t in TURNS], scope=MAYA)
    return memory


def test_filler_is_never_context_and_a_large_budget_stays_selective(make_memory: MemoryFactory) -> None:
    memory = _maya(make_memory)
    context = memory.context("what should I cook tonight?", 100_000, scope=Scope("maya", session_id="s2"))
    assert "Thanks, that's all for now." not in context.text and "user: ok" not in context.text
    part = context.part("memories")
    assert part is not None and part.total_items < 2 * len(TURNS)


def test_a_question_naming_the_user_finds_what_was_learned_about_them(make_memory: MemoryFactory) -> None:
    memory = _maya(make_memory)
    hits = memory.search("where does Maya live?", scope=Scope("maya"), k=3)
    assert "Porto" in hits[0].memory.content


FIFTY = [f"Our team meeting number {n} covered the quarterly roadmap for project {n}." for n in range(44)]
FIFTY += ["I'm vegetarian.", "My favourite restaurant is Casa Nova.", "I have a peanut allergy."]
FIFTY += ["Thanks, that's all for now.", "ok", "Got it."]


def _fifty(store: Any) -> Memory:
    memory = Memory(store=store, embedder=HashingEmbedder(64), settings=Settings(llm=None, buffer="memory://"))
    for text in FIFTY:
        memory.add_message("user", text, scope=MAYA)
    memory.learn([{"role": "user", "content": t} for t in FIFTY[44:47]], scope=MAYA)
    return memory


def test_an_advice_question_brings_the_users_standing_facts_and_stays_selective(store: Any) -> None:
    memory = _fifty(store)
    context = memory.context("plan a dinner for me", 100_000, scope=Scope("maya", session_id="s2"))
    part = context.part("memories")
    assert part is not None
    for fact in ("vegetarian", "Casa Nova", "peanut allergy"):
        assert fact in part.text, fact
    assert "Thanks, that's all for now." not in context.text
    assert part.total_items < len(FIFTY) // 2


def test_a_factual_question_gets_no_standing_facts(store: Any) -> None:
    memory = _fifty(store)
    part = memory.context("what did meeting 7 cover?", 100_000, scope=Scope("maya", session_id="s2")).part("memories")
    assert part is not None and "meeting number 7" in part.text
    assert "peanut" not in part.text and "Casa Nova" not in part.text
