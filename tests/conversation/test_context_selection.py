"""`context()` keeps facts before chatter and resolves the user's own name."""

from __future__ import annotations

from memstrata.models import Scope

from .conftest import MemoryFactory

MAYA = Scope("maya", session_id="s1")
TURNS = ["My name is Maya.", "I live in Porto.", "My mother lives in Montreal.", "I have a peanut allergy.",
         "Thanks, that's all for now.", "ok", "We're migrating our database to Postgres this week."]  # fmt: skip


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
