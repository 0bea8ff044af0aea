"""Messages, the episode log, the buffer window and rolling summaries, through the Memory front door."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memstrata import SearchFilter, namespaces
from memstrata.buffer import Turn
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import BufferUnavailable, InvalidInput, ProviderError
from memstrata.layers.conversation import ExtractiveSummarizer, LLMSummarizer
from memstrata.llm.scripted import ScriptedLLM
from memstrata.models import MemoryKind, Scope
from tests.conftest import service_missing

from .conftest import T0, Clock, MemoryFactory

S1 = Scope("alice", session_id="s1")


class RecordingSummarizer:
    """Records what each fold received; the summary says which turns it folded."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple[str | None, list[str]]] = []

    def summarize(self, previous: str | None, turns: Sequence[Turn]) -> str:
        self.calls.append((previous, [t.content for t in turns]))
        return f"summary #{len(self.calls)} of {turns[0].content}..{turns[-1].content}"


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.batches: list[int] = []

    def embed_documents(self, texts: Sequence[str], /) -> Any:
        self.batches.append(len(texts))
        return super().embed_documents(texts)


def say(memory: Any, scope: Scope, *numbers: int) -> None:
    for n in numbers:
        memory.add_message("user" if n % 2 else "assistant", f"turn {n}", scope=scope)


def contents(turns: Sequence[Turn]) -> list[str]:
    return [t.content for t in turns]


def test_every_message_goes_to_the_episode_log_with_time_role_and_speaker(memory: Any, clock: Clock) -> None:
    said_at = T0 - timedelta(days=3)
    turn = memory.add_message("user", "I moved to Lisbon last week", at=said_at, speaker="Alice", scope=S1)
    clock.advance(minutes=1)
    memory.add_message("assistant", "Welcome to Lisbon!", scope=S1)
    episodes = memory.list(scope=S1, filters=SearchFilter(kinds="episode"))
    assert [e.content for e in episodes] == ["Welcome to Lisbon!", "I moved to Lisbon last week"]
    first = episodes[1]
    assert first.id == turn.id and first.kind is MemoryKind.EPISODE
    assert first.scope == S1 and first.created_at == said_at
    assert first.metadata == {"role": "user", "speaker": "Alice"}
    assert episodes[0].metadata == {"role": "assistant"} and episodes[0].created_at == T0 + timedelta(minutes=1)
    hits = memory.search("Lisbon move", scope="alice", filters=SearchFilter(kinds="episode"))
    assert turn.id in [h.memory.id for h in hits]


def test_add_messages_is_one_embedding_batch(make_memory: MemoryFactory) -> None:
    embedder = CountingEmbedder()
    memory = make_memory(embedder=embedder)
    turns = memory.add_messages([("user", "one"), {"role": "assistant", "content": "two"}, ("user", "three")], scope=S1)
    assert contents(turns) == ["one", "two", "three"]
    assert embedder.batches == [3]
    assert contents(memory.recent_turns(scope=S1)) == ["one", "two", "three"]


def test_invalid_messages_are_refused_before_anything_is_written(memory: Any) -> None:
    with pytest.raises(InvalidInput, match="role"):
        memory.add_messages([("user", "fine"), ("robot", "beep")], scope=S1)
    with pytest.raises(InvalidInput, match="empty"):
        memory.add_message("user", "   ", scope=S1)
    with pytest.raises(InvalidInput, match="session_id"):
        memory.add_message("user", "no session", scope="alice")
    assert memory.list(scope="alice") == []


def test_the_eleventh_turn_folds_eight_and_leaves_three(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    recorder = RecordingSummarizer()
    memory._layers.conversation.summarizer = recorder
    say(memory, S1, *range(1, 11))
    assert recorder.calls == [] and len(memory.recent_turns(scope=S1)) == 10
    say(memory, S1, 11)
    assert recorder.calls == [(None, [f"turn {n}" for n in range(1, 9)])]
    assert contents(memory.recent_turns(scope=S1)) == ["turn 9", "turn 10", "turn 11"]
    assert memory.session_summary(scope=S1) == "summary #1 of turn 1..turn 8"
    say(memory, S1, *range(12, 19))
    assert len(recorder.calls) == 1  # 10 turns again, no fold yet
    say(memory, S1, 19)
    assert recorder.calls[1] == ("summary #1 of turn 1..turn 8", [f"turn {n}" for n in range(9, 17)])
    assert contents(memory.recent_turns(scope=S1)) == ["turn 17", "turn 18", "turn 19"]
    state = memory.store.get_item("alice", namespaces.SESSION, "s1").value
    assert state["folded"] == 16 and state["summary"] == "summary #2 of turn 9..turn 16"
    assert state["summarizer"] == "recording"


def test_a_batch_folds_exactly_like_the_same_turns_one_by_one(make_memory: MemoryFactory) -> None:
    one_by_one, batch = RecordingSummarizer(), RecordingSummarizer()
    first = make_memory()
    first._layers.conversation.summarizer = one_by_one
    say(first, S1, *range(1, 51))
    second = make_memory()
    second._layers.conversation.summarizer = batch
    other = Scope("alice", session_id="s2")
    second.add_messages([("user" if n % 2 else "assistant", f"turn {n}") for n in range(1, 51)], scope=other)
    assert batch.calls == one_by_one.calls and len(batch.calls) == 5
    assert contents(second.recent_turns(scope=other)) == contents(first.recent_turns(scope=S1))
    assert len(second.recent_turns(scope=other)) == 10


def test_the_extractive_summary_keeps_names_numbers_dates_and_the_previous_summary(memory: Any) -> None:
    memory.add_message("user", "My manager Sarah wants the Q3 report by Friday, 14 March.", scope=S1)
    memory.add_message("assistant", "Got it.", scope=S1)
    memory.add_message("user", "Thanks!", scope=S1)
    say(memory, S1, *range(4, 12))  # 11 turns: the first 8 fold
    first = memory.session_summary(scope=S1)
    assert "Sarah" in first and "Q3" in first and "14 March" in first and "Thanks" not in first
    memory.add_message("user", "I booked flight TP 1234 to Lisbon on 2026-04-03 for 340 euros.", scope=S1)
    say(memory, S1, *range(13, 20))
    second = memory.session_summary(scope=S1)
    assert "Sarah" in second and "TP 1234" in second and "340 euros" in second
    assert second.index("Sarah") < second.index("TP 1234")  # chronological


def test_recent_turns_are_rebuilt_from_the_episode_log_when_the_buffer_lost_them(memory: Any) -> None:
    say(memory, S1, *range(1, 14))  # fold after 11 -> 9..13 buffered
    expected = contents(memory.recent_turns(scope=S1))
    assert expected == [f"turn {n}" for n in range(9, 14)]
    memory._layers.conversation.buffer.clear_session(S1)  # expiry / restart
    assert contents(memory.recent_turns(scope=S1)) == expected
    memory._layers.conversation.buffer.clear_session(S1)
    say(memory, S1, 14)  # appending to a lost session rebuilds it first
    assert contents(memory.recent_turns(scope=S1)) == [*expected, "turn 14"]
    assert contents(memory.recent_turns(2, scope=S1)) == ["turn 13", "turn 14"]


def test_a_new_process_resumes_the_session_from_the_log(make_memory: MemoryFactory) -> None:
    first = make_memory()
    say(first, S1, *range(1, 13))
    summary = first.session_summary(scope=S1)
    restarted = make_memory()  # same SQLite file, new in-process buffer
    assert restarted.session_summary(scope=S1) == summary
    assert contents(restarted.recent_turns(scope=S1)) == [f"turn {n}" for n in range(9, 13)]


def test_summaries_persist_across_processes(tmp_path: Path, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    for n in range(1, 12):
        memory.add_message("user", f"On day {n} I visited Porto with Sarah.", scope=S1)
    first = memory.session_summary(scope=S1)
    assert "day 1 " in first and "Sarah" in first
    script = textwrap.dedent(
        f"""
        import json
        from memstrata.embedders.hashing import HashingEmbedder
        from memstrata.models import Scope
        from memstrata.memory import Memory
        from memstrata.settings import Settings

        memory = Memory(
            store={f"sqlite:///{tmp_path / 'memories.db'}"!r}, embedder=HashingEmbedder(64),
            settings=Settings(llm=None, buffer="memory://"),
        )
        scope = Scope("alice", session_id="s1")
        for n in range(12, 20):
            memory.add_message("user", f"On day {{n}} I visited Porto with Sarah.", scope=scope)
        print(json.dumps({{"summary": memory.session_summary(scope=scope),
                           "recent": [t.content for t in memory.recent_turns(scope=scope)]}}))
        memory.close()
        """
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    child = json.loads(done.stdout.strip().splitlines()[-1])
    # the child rebuilt turns 9..11 from the log, added 12..19, folded 9..16 into the parent's summary
    assert [r.split()[2] for r in child["recent"]] == ["17", "18", "19"]
    assert memory.session_summary(scope=S1) == child["summary"] != first


def test_llm_summaries_use_the_prompt_with_today_and_fall_back_when_the_model_fails(
    make_memory: MemoryFactory, clock: Clock
) -> None:
    llm = ScriptedLLM(["The user counted turn 1 to turn 8.", ProviderError("model down")])
    memory = make_memory(llm=llm)
    assert isinstance(memory._layers.conversation.summarizer, LLMSummarizer)
    say(memory, S1, *range(1, 12))
    assert llm.calls == [] and memory.process_queue() == 1  # the fold is queued, never run by add_message
    assert memory.session_summary(scope=S1) == "The user counted turn 1 to turn 8."
    assert "Today is 2026-03-02 (Monday)" in llm.calls[0].prompt and "turn 8" in llm.calls[0].prompt
    say(memory, S1, *range(12, 20))
    memory.process_queue()
    assert "The user counted turn 1 to turn 8." in llm.calls[1].prompt  # the previous summary is folded in
    state = memory.store.get_item("alice", namespaces.SESSION, "s1").value
    assert state["summary"].startswith("The user counted turn 1 to turn 8.")  # extractive fallback kept the line
    assert memory._layers.conversation.summarizer.failures == 1


def test_window_and_threshold_are_validated(make_memory: MemoryFactory) -> None:
    with pytest.raises(InvalidInput, match="summary_threshold"):
        make_memory(window_size=4, summary_threshold=6).conversation  # noqa: B018


def test_clear_session_forgets_buffer_and_summary_but_not_episodes(memory: Any) -> None:
    say(memory, S1, *range(1, 12))
    memory.clear_session(scope=S1)
    assert memory.session_summary(scope=S1) == ""
    assert len(memory.list(scope=S1, filters=SearchFilter(kinds="episode"))) == 11


def test_extractive_summarizer_is_the_offline_default(memory: Any) -> None:
    assert isinstance(memory._layers.conversation.summarizer, ExtractiveSummarizer)


# -- Redis -------------------------------------------------------------------------------------
@pytest.mark.redis
def test_redis_session_resumes_in_a_new_memory_object(make_memory: MemoryFactory, redis_spec: str) -> None:
    first = make_memory(buffer=redis_spec)
    say(first, S1, *range(1, 13))
    restarted = make_memory(buffer=redis_spec)
    assert contents(restarted.recent_turns(scope=S1)) == [f"turn {n}" for n in range(9, 13)]
    say(restarted, S1, 13)
    assert contents(first.recent_turns(scope=S1)) == [f"turn {n}" for n in range(9, 14)]  # one shared buffer


@pytest.mark.redis
def test_expired_redis_session_is_rebuilt_from_episodes(make_memory: MemoryFactory, redis_spec: str) -> None:
    import time

    memory = make_memory(buffer=f"{redis_spec}&ttl=0.25")
    say(memory, S1, *range(1, 12))
    time.sleep(0.4)
    assert memory._layers.conversation.buffer.window(S1) is None  # expired in Redis
    assert contents(memory.recent_turns(scope=S1)) == ["turn 9", "turn 10", "turn 11"]
    assert [t.content for t in memory._layers.conversation.buffer.window(S1)] == ["turn 9", "turn 10", "turn 11"]


@pytest.mark.redis
def test_redis_down_is_a_clear_error_and_nothing_half_written(make_memory: MemoryFactory) -> None:
    from .test_redis_buffer import free_port

    memory = make_memory(buffer=f"redis://:pw@127.0.0.1:{free_port()}/0")
    with pytest.raises(BufferUnavailable, match="unavailable") as caught:
        memory.add_message("user", "remember this", scope=S1)
    assert ":pw@" not in str(caught.value) and "redis://:***@127.0.0.1" in str(caught.value)
    assert memory.list(scope=S1) == []  # refused before anything was written: a retry cannot duplicate
    with pytest.raises(BufferUnavailable):
        memory.recent_turns(scope=S1)


@pytest.mark.redis
def test_redis_failing_between_read_and_append_keeps_the_message_in_the_log(
    make_memory: MemoryFactory, redis_spec: str
) -> None:
    memory = make_memory(buffer=redis_spec)
    buffer = memory._layers.conversation.buffer

    def broken_append(*args: Any, **kwargs: Any) -> Any:
        raise BufferUnavailable(f"Redis buffer at {buffer.url} is unavailable (append): connection reset")

    buffer.append = broken_append
    with pytest.raises(BufferUnavailable, match="saved to the episode log"):
        memory.add_message("user", "remember this", scope=S1)
    assert [e.content for e in memory.list(scope=S1)] == ["remember this"]
    del buffer.append
    memory.add_message("user", "and this", scope=S1)  # the session was marked suspect: rebuilt from the log
    assert contents(memory.recent_turns(scope=S1)) == ["remember this", "and this"]


@pytest.mark.redis
def test_explicit_fallback_serves_turns_from_the_episode_log(
    make_memory: MemoryFactory, caplog: pytest.LogCaptureFixture
) -> None:
    from .test_redis_buffer import free_port

    memory = make_memory(buffer=f"redis://127.0.0.1:{free_port()}/0?fallback=episodes")
    recorder = RecordingSummarizer()
    memory._layers.conversation.summarizer = recorder
    with caplog.at_level(logging.WARNING, logger="memstrata.layers.conversation"):
        say(memory, S1, *range(1, 12))
    assert "episode log" in caplog.text
    assert contents(memory.recent_turns(scope=S1)) == ["turn 9", "turn 10", "turn 11"]
    assert len(recorder.calls) == 1


def test_episode_vectors_are_written(memory: Any) -> None:
    memory.add_message("user", "vectors please", scope=S1)
    hits = memory.search("vectors please", scope="alice", strategy="semantic")
    assert hits and np.isclose(hits[0].scores["semantic"], 1.0, atol=1e-5)


@pytest.mark.redis
@pytest.mark.parametrize("fallback", [False, True], ids=["raise", "fallback"])
def test_a_redis_outage_heals_from_the_log_when_redis_is_back(
    make_memory: MemoryFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fallback: bool
) -> None:
    import shutil

    from memstrata.layers import conversation

    from .test_redis_buffer import OwnRedis

    if shutil.which("redis-server") is None:
        service_missing("redis-server binary not found (needed to restart a Redis server in a test)")
    monkeypatch.setattr(conversation, "BUFFER_RETRY_SECONDS", 0.0)
    server = OwnRedis(tmp_path)
    server.start()
    try:
        memory = make_memory(buffer=server.url + ("?fallback=episodes" if fallback else ""))
        say(memory, S1, 1, 2, 3)
        server.stop()
        if fallback:
            say(memory, S1, 4, 5)
            assert contents(memory.recent_turns(scope=S1)) == ["turn 1", "turn 2", "turn 3", "turn 4", "turn 5"]
        else:
            for n in (4, 5):
                with pytest.raises(BufferUnavailable):
                    say(memory, S1, n)  # refused, nothing written
        server.start()  # the old list (turns 1-3) is back
        say(memory, S1, 6)
        expected = [1, 2, 3, 4, 5, 6] if fallback else [1, 2, 3, 6]
        assert contents(memory.recent_turns(scope=S1)) == [f"turn {n}" for n in expected]
    finally:
        server.stop()


def test_episodes_index_the_turns_before_them_as_context(memory: Any) -> None:
    memory.add_message("user", "Did your team play the chess tournament?", speaker="Alice", scope=S1)
    memory.add_messages([("assistant", "Yes, we won a trophy!"), ("user", "Congratulations")], scope=S1)
    by_text = {e.content: e for e in memory.list(scope=S1, filters=SearchFilter(kinds="episode"))}
    assert by_text["Did your team play the chess tournament?"].context == ""
    assert by_text["Yes, we won a trophy!"].context == "Alice: Did your team play the chess tournament?"
    assert by_text["Congratulations"].context == (
        "Alice: Did your team play the chess tournament?\nYes, we won a trophy!"
    )
    hits = memory.search("chess tournament", scope="alice", strategy="keyword")
    assert "Yes, we won a trophy!" in [h.memory.content for h in hits]  # found through its question


def test_clear_session_restarts_recent_turns_but_keeps_episodes(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    for n in range(12):
        memory.add_message("user", f"message {n} about Porto", scope=S1)
    assert memory.session_summary(scope=S1)
    memory.clear_session(scope=S1)
    assert memory.recent_turns(scope=S1) == [] and memory.session_summary(scope=S1) == ""
    memory._layers.conversation.buffer.clear_session(S1)  # even after the buffer is lost, nothing is rebuilt
    assert memory.recent_turns(scope=S1) == []
    memory.add_message("user", "fresh start", scope=S1)
    assert [t.content for t in memory.recent_turns(scope=S1)] == ["fresh start"]
    hits = memory.search("Porto", scope="alice", k=20)
    assert sum("Porto" in h.memory.content for h in hits) == 12
