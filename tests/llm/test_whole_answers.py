"""Whole answers only, over the real local protocol servers: a cut-off answer is asked again once with a
larger budget and otherwise refused; a refused rolling summary is never stored (the previous one stays,
the turns stay unfolded and are folded later); chatter around a summary is not stored with it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata import LLMOutputError, Memory, Scope, TruncatedAnswer
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.extraction.base import Message
from memstrata.extraction.llm import LLMExtractor
from memstrata.llm import MAX_REASK_TOKENS, ChatMessage, complete_whole, reask_budget
from memstrata.settings import Settings
from tests.llm.servers import FakeLLMServer, client_for, truncated, with_chatter, withheld
from tests.support.clock import Clock

PROMPT = [ChatMessage("user", "Summarize: Alice moved to Porto.")]
SESSION = Scope("alice", session_id="s1")
SUMMARY = "The user visited Porto with Sarah on days 1 to 8."
LATER = "The user visited Porto with Sarah on days 1 to 16 and booked a hotel."


def max_tokens(server: FakeLLMServer) -> list[int]:
    return [request.json["max_tokens"] for request in server.requests]


# -- the client layer ----------------------------------------------------------------------------
def test_reask_budget_doubles_up_to_the_bound() -> None:
    assert reask_budget(300) == 600
    assert reask_budget(6000) == MAX_REASK_TOKENS == 8192
    assert reask_budget(MAX_REASK_TOKENS) is None


def test_cut_off_answer_is_asked_again_with_twice_the_budget(fake: FakeLLMServer) -> None:
    fake.script(truncated("Alice moved"), "Alice moved to Porto.")
    with client_for(fake) as llm:
        response = complete_whole(llm, PROMPT, max_tokens=300)
    assert (response.text, response.finish_reason) == ("Alice moved to Porto.", "stop")
    assert max_tokens(fake) == [300, 600]


def test_answer_cut_off_twice_is_refused(fake: FakeLLMServer) -> None:
    fake.script(truncated("Alice moved"), truncated("Alice moved to"))
    with client_for(fake) as llm, pytest.raises(TruncatedAnswer, match=r"300 and then 600 tokens.*'Alice moved to'"):
        complete_whole(llm, PROMPT, max_tokens=300)
    assert max_tokens(fake) == [300, 600]


def test_answer_cut_off_at_the_bound_is_not_asked_again(fake: FakeLLMServer) -> None:
    fake.script(truncated("Alice moved"))
    with client_for(fake) as llm, pytest.raises(TruncatedAnswer):
        complete_whole(llm, PROMPT, max_tokens=MAX_REASK_TOKENS)
    assert max_tokens(fake) == [MAX_REASK_TOKENS]


def test_withheld_answer_is_refused_without_asking_again(fake: FakeLLMServer) -> None:
    fake.script(withheld("Alice"))
    with client_for(fake) as llm:
        assert llm.complete(PROMPT).refused
        fake.script(withheld("Alice"))
        with pytest.raises(LLMOutputError, match="withheld"):
            complete_whole(llm, PROMPT)
    assert len(fake.requests) == 2


def test_cut_off_json_is_not_used_even_when_it_closes(fake: FakeLLMServer) -> None:
    """A JSON answer stopped at the token limit is not parsed into a shorter list of facts."""
    facts = json.dumps({"facts": [{"kind": "fact", "category": "identity", "content": "Alice lives in Lisbon."}]})
    fake.script(truncated(facts), truncated(facts))
    said = [Message("user", "I live in Lisbon.", datetime(2021, 6, 3, 9, tzinfo=UTC))]
    with client_for(fake) as llm:
        extractor = LLMExtractor(llm, max_tokens=300, fallback=None)
        with pytest.raises(TruncatedAnswer):
            extractor.extract(said)
    assert max_tokens(fake) == [300, 600] and extractor.stats.output_failures == 1


# -- the rolling summary -------------------------------------------------------------------------
@pytest.fixture
def open_memory(tmp_path: Path) -> Iterator[Any]:
    opened: list[Memory] = []

    def make(server: FakeLLMServer) -> Memory:
        memory = Memory(
            store=f"sqlite:///{tmp_path / 'memories.db'}",
            embedder=HashingEmbedder(64),
            clock=Clock(),
            track_access=False,
            llm=client_for(server),
            settings=Settings(buffer="memory://"),
        )
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


def say(memory: Memory, days: range) -> None:
    for day in days:
        memory.add_message("user", f"On day {day} I visited Porto with Sarah.", scope=SESSION)


def unfolded(memory: Memory) -> list[str]:
    return [turn.content for turn in memory._layers.conversation.window(SESSION)]


def test_cut_off_summary_is_not_stored_and_the_fold_is_retried(fake: FakeLLMServer, open_memory: Any) -> None:
    fake.script(truncated("The user visited Porto with"), truncated("The user visited Porto with Sarah on"))
    memory = open_memory(fake)
    say(memory, range(1, 12))
    assert memory.process_queue() == 1
    assert memory.session_summary(scope=SESSION) == ""  # the previous value: none yet
    assert len(unfolded(memory)) == 11  # nothing folded, nothing trimmed
    assert max_tokens(fake) == [300, 600]
    [failure] = memory.queue_status().failures
    assert failure["status"] == "pending" and failure["error"].startswith("TruncatedAnswer: ")
    fake.script(SUMMARY)
    assert memory.process_queue() == 1  # the queue runs the fold again
    assert memory.session_summary(scope=SESSION) == SUMMARY
    assert len(unfolded(memory)) == 3 and memory.queue_status().failures == []


def test_a_fold_refused_on_every_attempt_is_queued_again_by_later_turns(fake: FakeLLMServer, open_memory: Any) -> None:
    refusal = "I'm sorry, but I can't help with that."
    fake.script(refusal, refusal, refusal)
    memory = open_memory(fake)
    say(memory, range(1, 12))
    for _ in range(3):
        memory.process_queue()
    [failure] = memory.queue_status().failures
    assert failure["status"] == "failed"  # the queue gave up on this fold
    fake.script(SUMMARY, SUMMARY)  # 19 unfolded turns: two chunks to fold
    say(memory, range(12, 20))  # another summary_threshold turns: the overdue fold is queued anew
    assert memory.process_queue() == 1
    assert memory.session_summary(scope=SESSION) == SUMMARY
    assert len(unfolded(memory)) <= 10


def test_cut_off_summary_asked_again_is_stored_whole(fake: FakeLLMServer, open_memory: Any) -> None:
    fake.script(truncated("The user visited Porto with"), SUMMARY)
    memory = open_memory(fake)
    say(memory, range(1, 12))
    memory.process_queue()
    assert memory.session_summary(scope=SESSION) == SUMMARY and max_tokens(fake) == [300, 600]


def test_chatter_around_a_summary_is_not_stored(fake: FakeLLMServer, open_memory: Any) -> None:
    fake.script(with_chatter(SUMMARY))
    memory = open_memory(fake)
    say(memory, range(1, 12))
    memory.process_queue()
    assert memory.session_summary(scope=SESSION) == SUMMARY


def test_refusal_keeps_the_previous_summary(fake: FakeLLMServer, open_memory: Any) -> None:
    fake.script(SUMMARY, "I'm sorry, but I can't help with that.")
    memory = open_memory(fake)
    say(memory, range(1, 12))
    memory.process_queue()
    say(memory, range(12, 20))
    memory.process_queue()
    assert SUMMARY in fake.requests[1].raw.decode()  # the second fold was asked with the first summary
    assert memory.session_summary(scope=SESSION) == SUMMARY
    assert len(unfolded(memory)) == 11  # turns 9..19 wait for a usable summary


def test_summary_folded_on_the_conversation_path_is_retried_on_the_next_message(
    fake: FakeLLMServer, open_memory: Any
) -> None:
    """Without a queue the fold runs in `add_message`: a refused summary does not fail the message."""
    fake.script(truncated("The user"), truncated("The user visited"), LATER)
    memory = open_memory(fake)
    memory._layers.conversation.fold_later = None
    say(memory, range(1, 12))  # the 11th message overflows the window: its fold is refused
    assert memory.session_summary(scope=SESSION) == "" and len(unfolded(memory)) == 11
    assert len(memory.list(scope=SESSION)) == 11  # every message was saved
    say(memory, range(12, 13))
    assert memory.session_summary(scope=SESSION) == LATER and len(unfolded(memory)) == 4


def test_a_summary_unrelated_to_the_turns_is_not_stored(fake: FakeLLMServer, open_memory: Any) -> None:
    fake.script("The weather on Mars is cold, with dust storms lasting for months.")
    memory = open_memory(fake)
    say(memory, range(1, 12))
    memory.process_queue()
    assert memory.session_summary(scope=SESSION) == ""
    assert "does not look like a summary" in memory.queue_status().failures[0]["error"]
