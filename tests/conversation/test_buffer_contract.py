"""The Buffer contract, run against the in-process buffer and real Redis."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from memstrata.buffer import Buffer, InProcessBuffer, Turn, open_buffer
from memstrata.errors import ConfigurationError, InvalidInput
from memstrata.models import Scope
from tests.support.clock import Clock

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
S1 = Scope("alice", session_id="s1")


def turns(*numbers: int) -> list[Turn]:
    return [Turn("user" if n % 2 else "assistant", f"message {n}", AT, id=f"t{n}") for n in numbers]


def ids(found: list[Turn] | None) -> list[str] | None:
    return None if found is None else [t.id for t in found]


def test_turn_json_round_trip() -> None:
    turn = Turn("user", 'Grüße — "quoted"\nnext line', AT, id="x1", speaker="Zoë")
    assert Turn.from_json(turn.to_json()) == turn


def test_append_reports_whether_the_session_existed(buffer: Buffer) -> None:
    first = buffer.append(S1, turns(1, 2), max_turns=10)
    assert (first.existed, ids(first.turns)) == (False, ["t1", "t2"])
    second = buffer.append(S1, turns(3), max_turns=10)
    assert (second.existed, ids(second.turns)) == (True, ["t1", "t2", "t3"])
    assert ids(buffer.window(S1)) == ["t1", "t2", "t3"]
    assert buffer.window(Scope("alice", session_id="other")) is None


def test_append_trims_to_the_window(buffer: Buffer) -> None:
    buffer.append(S1, turns(*range(1, 8)), max_turns=5)
    assert ids(buffer.window(S1)) == ["t3", "t4", "t5", "t6", "t7"]
    result = buffer.append(S1, turns(8, 9), max_turns=3)
    assert ids(result.turns) == ["t7", "t8", "t9"]


def test_a_retried_append_keeps_one_copy_of_each_turn(buffer: Buffer) -> None:
    """An append that raised may have been applied (a Redis primary that failed over after the write
    reached its replica); the caller's retry must not store the turns twice."""
    buffer.append(S1, turns(1, 2), max_turns=10)
    retried = buffer.append(S1, turns(2, 3), max_turns=10)  # t2 again (the retry), t3 new
    assert (retried.existed, ids(retried.turns)) == (True, ["t1", "t2", "t3"])
    assert ids(buffer.append(S1, turns(3), max_turns=10).turns) == ["t1", "t2", "t3"]
    assert ids(buffer.append(S1, turns(4, 4), max_turns=10).turns) == ["t1", "t2", "t3", "t4"]
    kept = buffer.window(S1) or []
    assert [(t.role, t.content) for t in kept] == [(t.role, t.content) for t in turns(1, 2, 3, 4)]


def test_a_turn_is_known_by_its_whole_id(buffer: Buffer) -> None:
    """Ids that begin alike, or need escaping in JSON, name different turns."""
    tricky = [Turn("user", f"message {i}", AT, id=i) for i in ("t1", "t10", 't1"', "t1\\", "Zoë", "t1,")]
    buffer.append(S1, tricky[:1], max_turns=10)
    assert ids(buffer.append(S1, tricky, max_turns=10).turns) == [t.id for t in tricky]
    assert ids(buffer.append(S1, tricky[::-1], max_turns=10).turns) == [t.id for t in tricky]


def test_a_serialized_turn_begins_with_its_head() -> None:
    for turn_id in ("t1", 't1"', "t1\\", "Zoë", "a\nb"):
        turn = Turn("user", "hi", AT, id=turn_id, speaker="Ana")
        assert turn.to_json().startswith(turn.head()) and Turn.from_json(turn.to_json()).id == turn_id
    assert Turn("user", "hi", AT).head() == ""


def test_turns_without_an_id_are_always_appended(buffer: Buffer) -> None:
    anonymous = Turn("user", "no id", AT)
    buffer.append(S1, [anonymous, anonymous], max_turns=10)
    result = buffer.append(S1, [anonymous, *turns(1)], max_turns=10)
    assert ids(result.turns) == ["", "", "", "t1"]


def test_a_retry_after_the_turn_left_the_window_appends_it_again(buffer: Buffer) -> None:
    """Identity is checked against the turns the session still holds, nothing else."""
    buffer.append(S1, turns(1, 2, 3), max_turns=2)
    assert ids(buffer.append(S1, turns(1), max_turns=2).turns) == ["t3", "t1"]


def test_replace_and_trim_through(buffer: Buffer) -> None:
    buffer.append(S1, turns(1, 2), max_turns=10)
    buffer.replace(S1, turns(4, 5, 6, 7))
    assert ids(buffer.window(S1)) == ["t4", "t5", "t6", "t7"]
    assert buffer.trim_through(S1, "t5") == 2
    assert ids(buffer.window(S1)) == ["t6", "t7"]
    assert buffer.trim_through(S1, "unknown") == 0
    assert ids(buffer.window(S1)) == ["t6", "t7"]
    assert buffer.trim_through(S1, "t7") == 2
    assert buffer.window(S1) is None
    buffer.replace(S1, [])
    assert buffer.window(S1) is None


def test_clear_session_and_clear_user_touch_only_their_keys(buffer: Buffer) -> None:
    neighbours = [
        Scope("alice", session_id="s2"),
        Scope("alice2", session_id="s1"),
        Scope("bob", session_id="s1"),
    ]
    for scope in [S1, *neighbours]:
        buffer.append(scope, turns(1), max_turns=10)
    assert buffer.clear_session(S1) is True
    assert buffer.clear_session(S1) is False
    assert buffer.window(S1) is None
    buffer.append(S1, turns(1), max_turns=10)
    assert buffer.clear_user("alice") == 2
    assert buffer.window(S1) is None and buffer.window(neighbours[0]) is None
    assert ids(buffer.window(neighbours[1])) == ["t1"]  # "alice2" is another user
    assert ids(buffer.window(neighbours[2])) == ["t1"]
    with pytest.raises(InvalidInput):
        buffer.clear_user("*")


def test_fold_lock_is_exclusive_per_session(buffer: Buffer) -> None:
    other_session = Scope("alice", session_id="s2")
    with (
        buffer.fold_lock(S1) as first,
        buffer.fold_lock(S1) as second,
        buffer.fold_lock(other_session) as other,
    ):
        assert (first, second, other) == (True, False, True)
    with buffer.fold_lock(S1) as again:
        assert again is True


def test_scope_without_session_is_refused(buffer: Buffer) -> None:
    with pytest.raises(InvalidInput, match="session_id"):
        buffer.append(Scope("alice"), turns(1), max_turns=10)


def test_in_process_ttl_expires_idle_sessions_on_the_memory_clock() -> None:
    clock = Clock(AT)
    short = InProcessBuffer(ttl_seconds=300, clock=clock)
    short.append(S1, turns(1), max_turns=10)
    clock.advance(seconds=200)
    short.append(S1, turns(2), max_turns=10)  # refreshes the TTL
    clock.advance(seconds=200)
    assert ids(short.window(S1)) == ["t1", "t2"]
    clock.advance(seconds=301)
    assert short.window(S1) is None
    assert short.append(S1, turns(3), max_turns=10).existed is False


@pytest.mark.redis
def test_redis_ttl_is_set_refreshed_and_enforced_by_redis(request: pytest.FixtureRequest) -> None:
    """Redis expires keys on its own clock: check the TTL it holds, and that it acts on it."""
    from memstrata.buffer.redis import RedisBuffer

    from .conftest import redis_url

    short = RedisBuffer(redis_url(), ttl_seconds=300, prefix=request.getfixturevalue("redis_prefix"))
    try:
        short.append(S1, turns(1), max_turns=10)
        key = short.key(S1)
        assert 299_000 < short._redis.pttl(key) <= 300_000
        short._redis.pexpire(key, 50_000)  # as if 250 idle seconds had passed
        short.append(S1, turns(2), max_turns=10)  # a write refreshes the TTL
        assert short._redis.pttl(key) > 299_000
        short._redis.pexpire(key, 1)  # let Redis expire it now
        deadline = time.monotonic() + 5
        while short._redis.exists(key) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert short.window(S1) is None
        assert short.append(S1, turns(3), max_turns=10).existed is False
    finally:
        short.close()


def test_open_buffer_specs() -> None:
    assert isinstance(open_buffer("memory://"), InProcessBuffer)
    assert open_buffer("memory://?ttl=5").ttl_seconds == 5.0
    assert open_buffer("memory://?ttl=0").ttl_seconds is None
    existing = InProcessBuffer()
    assert open_buffer(existing) is existing
    with pytest.raises(ConfigurationError, match="unknown buffer spec"):
        open_buffer("memcached://localhost")
    with pytest.raises(ConfigurationError, match="fallback"):
        open_buffer("redis://localhost?fallback=nowhere")
    with pytest.raises(InvalidInput):
        InProcessBuffer(ttl_seconds=-1)
