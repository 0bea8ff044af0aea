"""What a search at time T sees, and "now" for the query's date expressions (SQLite, the static model)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata import Memory, MemoryKind, NewMemory, Scope, SearchFilter

T = datetime(2023, 5, 24, 9, 0, tzinfo=UTC)  # a Wednesday


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(T)


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Memory:
    m = Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder="static", clock=clock)
    yield m
    m.close()


def _episode(text: str, at: datetime, session: str) -> NewMemory:
    return NewMemory(text, kind=MemoryKind.EPISODE, created_at=at, scope=Scope("u", session_id=session))


def test_a_search_sees_what_existed_at_its_time(memory: Memory, clock: Clock) -> None:
    memory.add_many(
        [
            _episode("I bought a blender for smoothies", T - timedelta(days=3), "s1"),
            _episode("I returned the blender, it was too loud", T + timedelta(days=2), "s2"),
        ],
        scope="u",
    )
    now = [h.memory.content for h in memory.search("blender", scope="u")]
    assert now == ["I bought a blender for smoothies"]  # the clock is T: the later memory does not exist yet
    later = memory.search("blender", scope="u", filters=SearchFilter(as_of=T + timedelta(days=5)))
    assert len(later) == 2
    clock.now = T + timedelta(days=5)  # the clock moves: the default "now" follows it
    assert len(memory.search("blender", scope="u")) == 2
    before = memory.search("blender", scope="u", filters=SearchFilter(as_of=T - timedelta(days=10)))
    assert before == []


def test_superseded_and_expired_memories_follow_the_search_time(memory: Memory, clock: Clock) -> None:
    old = memory.add("My gym is FitLife downtown", scope="u")
    clock.now = T + timedelta(days=30)
    new = memory.supersede(old.id, "My gym is Iron Temple near work", scope="u")
    short = memory.add("My locker code is 4512", scope="u", expires_at=T + timedelta(days=31))
    clock.now = T + timedelta(days=40)
    current = [h.memory.id for h in memory.search("gym", scope="u")]
    assert current[0] == new.id and old.id not in current
    then = [h.memory.id for h in memory.search("gym", scope="u", filters=SearchFilter(as_of=T + timedelta(days=1)))]
    assert then[0] == old.id and new.id not in then
    assert short.id not in [h.memory.id for h in memory.search("locker code", scope="u")]
    while_valid = memory.search("locker code", scope="u", filters=SearchFilter(as_of=T + timedelta(days=30, hours=1)))
    assert while_valid[0].memory.id == short.id


def test_date_expressions_are_resolved_against_the_search_time(memory: Memory) -> None:
    memory.add_many(
        [
            _episode("We went to the science museum with my niece", datetime(2023, 1, 10, tzinfo=UTC), "s1"),
            _episode("I visited the art museum downtown with a friend", datetime(2023, 3, 25, tzinfo=UTC), "s2"),
            _episode("The history museum had a new dinosaur exhibit", datetime(2023, 5, 20, tzinfo=UTC), "s3"),
        ],
        scope="u",
    )
    question = "I mentioned visiting a museum two months ago. Who did I go with?"
    hits = memory.search(question, scope="u", k=3)
    assert hits[0].memory.content.startswith("I visited the art museum")
    assert hits[0].scores["time_match"] == 1.0
    earlier = memory.search(question, scope="u", k=3, filters=SearchFilter(as_of=datetime(2023, 3, 12, tzinfo=UTC)))
    assert earlier[0].memory.content.startswith("We went to the science museum")  # two months before 12 March


def test_sessions_alternate_in_multi_session_questions(tmp_path: Path, clock: Clock) -> None:
    from memstrata.core.retrieval import HybridParams
    from memstrata.layers.semantic import SemanticMemory

    then = T - timedelta(days=40)
    with Memory(store=f"sqlite:///{tmp_path / 'd.db'}", embedder="static", clock=clock) as m:
        m.add_many(
            [
                _episode("I attended my cousin's wedding, the weddings in our family are huge", then, "a"),
                _episode("At my cousin's wedding I attended the ceremony and the wedding party", then, "a"),
                _episode("My cousin's wedding had a jazz band; I attend weddings for the music", then, "a"),
                _episode("I went to Sam's wedding at the beach", T - timedelta(days=10), "b"),
                _episode("The printer at work jammed again", T - timedelta(days=5), "c"),
                _episode("I repotted the basil on the balcony", T - timedelta(days=4), "c"),
            ],
            scope="u",
        )
        sessions = []
        for penalty in (0.0, 0.9):
            layer = SemanticMemory(
                store=m.store, embedder=m.embedder, clock=clock, params=HybridParams(session_penalty=penalty)
            )
            hits = layer.search(Scope("u"), "How many weddings did I attend?", k=4)
            sessions.append([h.memory.scope.session_id for h in hits])
        plain, diverse = sessions
    assert plain == ["a", "a", "a", "b"]
    assert diverse[:2] == ["a", "b"]


def test_when_questions_prefer_turns_that_state_a_time(memory: Memory) -> None:
    at = datetime(2023, 5, 20, tzinfo=UTC)
    memory.add_many(
        [
            _episode("Jon: I love my dance studio, dancing is my passion", at, "s1"),
            _episode("Jon: I got mentored by a business coach yesterday, for my dance studio", at, "s2"),
            _episode("Jon: My dance studio students are great and my dance studio is growing", at, "s3"),
        ],
        scope="u",
    )
    hits = memory.search("When did Jon get mentored for his dance studio?", scope="u", k=3)
    assert hits[0].memory.scope.session_id == "s2"
    plain = memory.search("What does Jon think about his dance studio?", scope="u", k=3)
    assert plain[0].memory.scope.session_id != "s2"
