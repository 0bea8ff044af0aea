"""A semantic layer remembers what its memories' texts say about time across searches (SQLite, the static
model): the ranking is the one of texts read afresh, a changed text is read again, erasure drops it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata import Memory, MemoryKind, NewMemory, Scope
from memstrata.layers import time_cues
from memstrata.layers.semantic import SemanticMemory
from memstrata.layers.time_cues import TimeCues
from memstrata.storage.base import MemoryFilter

T = datetime(2023, 5, 24, 9, 0, tzinfo=UTC)  # a Wednesday
SAID = [
    ("I went hiking at Mount Tam last Friday", T - timedelta(hours=1)),  # by its own time, not last week
    ("We adopted a puppy two weeks ago", T - timedelta(days=1)),
    ("My sister visited us in March", T - timedelta(days=40)),
    ("I like hiking with my sister", T - timedelta(days=2)),
    ("The puppy chewed my hiking boots", T - timedelta(days=60)),
]
QUERIES = ["What did I do last week?", "hiking in May 2023", "puppy two weeks ago", "sister in March", "boots"]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder="static", clock=lambda: T, track_access=False)
    m.add_many([NewMemory(text, kind=MemoryKind.EPISODE, created_at=at) for text, at in SAID], scope="u")
    yield m
    m.close()


def _layer(memory: Memory) -> SemanticMemory:
    return SemanticMemory(store=memory.store, embedder=memory.embedder, clock=memory.clock, track_access=False)


def _ranking(layer: SemanticMemory, query: str) -> list[tuple[str, float, float]]:
    return [(h.memory.content, h.score, h.scores["time_match"]) for h in layer.search(Scope("u"), query, k=5)]


def test_remembered_answers_rank_as_texts_read_afresh(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    resolved: list[str] = []
    find_dates = time_cues.find_dates

    def counted(text: str, *args: object, **kwargs: object) -> object:
        resolved.append(text)
        return find_dates(text, *args, **kwargs)

    monkeypatch.setattr(time_cues, "find_dates", counted)
    kept = _layer(memory)
    for _ in range(3):
        for query in QUERIES:
            assert _ranking(kept, query) == _ranking(_layer(memory), query)
    fresh_reads = len(resolved)
    resolved.clear()
    for query in QUERIES:
        _ranking(kept, query)
    assert fresh_reads > 0 and resolved == []  # every text the layer had read is not resolved again
    matches = {text: match for text, _, match in _ranking(kept, "What did I do last week?")}
    assert matches["I went hiking at Mount Tam last Friday"] == 1.0  # said this Wednesday, of Friday 19 May


def test_a_changed_text_is_read_again(memory: Memory) -> None:
    layer = _layer(memory)
    hike = next(r for r in memory.list(scope="u") if "Mount Tam" in r.content)
    before = {text: match for text, _, match in _ranking(layer, "hiking last week")}
    assert before[hike.content] == 1.0
    memory.update(hike.id, scope="u", content="I went hiking at Mount Tam")
    after = {text: match for text, _, match in _ranking(layer, "hiking last week")}
    assert after["I went hiking at Mount Tam"] < 1.0  # said this Wednesday, and its text names no day now


def test_erasure_and_deletion_drop_what_is_kept(memory: Memory) -> None:
    layer = memory._layers.semantic  # the Memory's own layer: erasure goes through it
    memory.search("What did I do last week?", scope="u")
    kept = layer._time_cues.remembered("u")
    assert kept > 0
    hike = next(r for r in memory.list(scope="u") if "Mount Tam" in r.content)  # read: not last week by time
    memory.forget(hike.id, scope="u")
    assert layer._time_cues.remembered("u") == kept - 1
    memory.erase_user(scope="u")
    assert layer._time_cues.remembered("u") == 0


def test_a_full_store_of_answers_starts_afresh(memory: Memory) -> None:
    records = memory.store.list_memories("u", MemoryFilter(as_of=T), limit=10)
    cues = TimeCues(limit=2)
    answers = [(cues.states_time(r), cues.periods(r)) for r in records]
    assert cues.remembered("u") <= 2
    assert [(cues.states_time(r), cues.periods(r)) for r in records] == answers
    assert any(timed for timed, _ in answers) and any(not timed for timed, _ in answers)
    assert all(w.text == "" for _, periods in answers for w in periods)  # no words of a memory are kept
