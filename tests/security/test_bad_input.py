"""Input that cannot be stored is refused, in every field, and never poisons the user.

Each hostile value (a lone surrogate, NUL, an oversized string, JSON nested 5,000 deep, wrong types)
goes into each argument of each write and read of the Python API. Every call either succeeds or
raises memstrata's own `InvalidInput`/`UsageError` (never TypeError, UnicodeEncodeError,
RecursionError...), and afterwards every read of the user still works. The REST side is checked the
same way: 422 naming the problem, never 5xx.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memstrata import SearchFilter
from memstrata.errors import MemstrataError, UsageError
from memstrata.memory import Memory
from memstrata.models import Scope
from tests.security.conftest import Backend

USER = "acme:poison"
SURROGATE = "a\ud800b"
NUL = "a\x00b"
HUGE = "x" * (2 * 1024 * 1024)


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


TEXTS = [SURROGATE, NUL, HUGE]
JSONS: list[Any] = [{"k": SURROGATE}, {"k": NUL}, {SURROGATE: 1}, nested(5_000), {"k": float("nan")}, {"k": {1, 2}}]
WRONG = [None, 1.5, -1, [], {}, object()]


def calls(memory: Memory) -> list[tuple[str, Callable[[Any], Any], list[Any]]]:
    s = Scope(USER, session_id="s1")
    m = memory
    return [
        ("add content", lambda v: m.add(v, scope=USER), TEXTS + WRONG),
        ("add metadata", lambda v: m.add("ok", scope=USER, metadata=v), JSONS + WRONG),
        ("add importance", lambda v: m.add("ok", scope=USER, importance=v), WRONG),
        ("add kind", lambda v: m.add("ok", scope=USER, kind=v), TEXTS + WRONG),
        ("add source_ids", lambda v: m.add("ok", scope=USER, source_ids=[v]), TEXTS + WRONG),
        ("scope", lambda v: m.add("ok", scope=v), TEXTS + WRONG),
        ("update metadata", lambda v: m.update(m.add("u", scope=USER).id, scope=USER, metadata=v), JSONS + WRONG),
        ("update content", lambda v: m.update(m.add("u", scope=USER).id, scope=USER, content=v), TEXTS + WRONG),
        ("supersede", lambda v: m.supersede(m.add("s", scope=USER).id, v, scope=USER), TEXTS + WRONG),
        ("forget", lambda v: m.forget(v, scope=USER), TEXTS + WRONG),
        ("get", lambda v: m.get(v, scope=USER), TEXTS + WRONG),
        ("search query", lambda v: m.search(v, scope=USER), TEXTS + WRONG),
        ("search k", lambda v: m.search("q", scope=USER, k=v), WRONG),
        ("search metadata", lambda v: m.search("q", scope=USER, filters=SearchFilter(metadata=v)), JSONS + WRONG),
        ("list metadata", lambda v: m.list(scope=USER, filters=SearchFilter(metadata=v)), JSONS + WRONG),
        ("list limit", lambda v: m.list(scope=USER, limit=v), WRONG),
        ("message content", lambda v: m.add_message("user", v, scope=s), TEXTS + WRONG),
        ("message speaker", lambda v: m.add_message("user", "hi", speaker=v, scope=s), TEXTS + WRONG),
        ("message role", lambda v: m.add_message(v, "hi", scope=s), TEXTS + WRONG),
        ("messages", lambda v: m.add_messages([v], scope=s), JSONS + TEXTS + WRONG),
        ("recent_turns n", lambda v: m.recent_turns(v, scope=s), WRONG),
        ("context query", lambda v: m.context(v, scope=s), TEXTS + WRONG),
        ("context max_tokens", lambda v: m.context("q", v, scope=s), WRONG),
        ("learn", lambda v: m.learn(v, scope=USER), TEXTS + WRONG + JSONS),
        ("learn_later", lambda v: m.learn_later(v, scope=USER), TEXTS + WRONG + JSONS),
        ("entity name", lambda v: m.upsert_entity(v, scope=USER), TEXTS + WRONG),
        ("entity summary", lambda v: m.upsert_entity("Ana", scope=USER, summary=v), TEXTS + WRONG),
        ("entity type", lambda v: m.upsert_entity("Ana", scope=USER, type=v), TEXTS + WRONG),
        ("entity lookup", lambda v: m.entity(v, scope=USER), TEXTS + WRONG),
        ("fact value", lambda v: m.set_fact("identity", "city", v, scope=USER), TEXTS + WRONG),
        ("fact key", lambda v: m.set_fact("identity", v, "Oslo", scope=USER), TEXTS + WRONG),
        ("procedure instruction", lambda v: m.add_procedure("t", scope=USER, instruction=v), TEXTS + WRONG),
        ("procedure task", lambda v: m.add_procedure(v, scope=USER, instruction="i"), TEXTS + WRONG),
        (
            "procedure example",
            lambda v: m.add_procedure("t", scope=USER, example_input=v, example_output="o"),
            TEXTS + WRONG,
        ),
        ("procedures k", lambda v: m.procedures("t", scope=USER, k=v), WRONG),
        ("import", lambda v: m.import_user(v, scope=USER), TEXTS + JSONS + WRONG),
    ]


def reads_still_work(memory: Memory) -> None:
    scope = Scope(USER, session_id="s1")
    memory.list(scope=USER, limit=1000, filters=SearchFilter(include_superseded=True))
    memory.search("ok", scope=USER)
    memory.context("ok", scope=scope).text.encode("utf-8")
    memory.export_user(scope=USER).to_json().encode("utf-8")
    memory.entities(scope=USER)
    memory.facts(scope=USER)
    memory.recent_turns(scope=scope)
    memory.session_summary(scope=scope)
    memory.user_context(scope=USER)


def test_every_field_refuses_unstorable_values_with_memstratas_own_errors(backend: Backend) -> None:
    escaped: list[str] = []
    with backend.memory() as memory:
        for name, call, values in calls(memory):
            for value in values:
                try:
                    call(value)
                except MemstrataError as exc:
                    if not isinstance(exc, UsageError):
                        escaped.append(f"{name} {type(value).__name__}: {type(exc).__name__}: {exc}")
                except Exception as exc:  # noqa: BLE001 - every foreign exception is a finding
                    escaped.append(f"{name} {type(value).__name__}: {type(exc).__name__}: {str(exc)[:120]}")
        reads_still_work(memory)
        assert not any(SURROGATE in r.content or NUL in r.content for r in memory.list(scope=USER, limit=1000))
    assert escaped == [], "\n".join(escaped)


def test_the_refusal_names_the_field(backend: Backend) -> None:
    with backend.memory() as memory:
        with pytest.raises(UsageError, match=r"metadata\.note"):
            memory.add("ok", scope=USER, metadata={"note": SURROGATE})
        with pytest.raises(UsageError, match="nests deeper"):
            memory.add("ok", scope=USER, metadata=nested(5_000))
        with pytest.raises(UsageError, match="summary"):
            memory.upsert_entity("Ana", scope=USER, summary=SURROGATE)
        with pytest.raises(UsageError, match="speaker"):
            memory.add_message("user", "hi", speaker=SURROGATE, scope=Scope(USER, session_id="s"))
        with pytest.raises(UsageError, match="message content is 2097152 bytes"):
            memory.learn(HUGE, scope=USER)  # refused before extraction reads it


# -- REST: every field of every body, every path parameter -----------------------------------------

BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/memories"): {
        "content": "ok",
        "kind": "fact",
        "metadata": {"k": "v"},
        "importance": 0.5,
        "source_ids": ["s"],
        "agent_id": "bot",
    },
    ("PATCH", "/memories/{memory_id}"): {"content": "ok2", "metadata": {"k": "v"}, "importance": 0.4},
    ("POST", "/memories/{memory_id}/supersede"): {"content": "ok3", "reason": "r"},
    ("POST", "/search"): {"query": "ok", "k": 5, "filters": {"metadata": {"k": "v"}, "kinds": ["fact"]}},
    ("PUT", "/profile/facts/{category}/{key}"): {"value": "Oslo"},
    ("PUT", "/entities/{name}"): {"type": "person", "summary": "a friend", "aliases": ["A"]},
    ("POST", "/procedures"): {"task": "t", "instruction": "i", "example_input": "x", "example_output": "y"},
    ("POST", "/learn"): {"messages": [{"role": "user", "content": "I live in Oslo.", "speaker": "al"}]},
    ("POST", "/sessions/{session_id}/messages"): {"messages": [{"role": "user", "content": "hi", "speaker": "al"}]},
    ("POST", "/context"): {"query": "ok", "max_tokens": 200, "session_id": "s1"},
}
HOSTILE: list[Any] = [SURROGATE, NUL, "x" * (2 * 1024 * 1024), nested(5_000), 1.5, None, -1, [1], {"a": 1}]


def mutations(body: Any, path: str = "") -> list[tuple[str, Any]]:
    """(field path, body with that field replaced by a hostile value), for every field at any depth."""
    found: list[tuple[str, Any]] = []
    if isinstance(body, dict):
        for key, value in body.items():
            found += [(f"{path}.{key}", body | {key: h}) for h in HOSTILE]
            found += [(p, body | {key: m}) for p, m in mutations(value, f"{path}.{key}")]
            found.append((f"{path}.<key>", {**body, SURROGATE: value}))
    elif isinstance(body, list) and body:
        found += [(p, [m, *body[1:]]) for p, m in mutations(body[0], f"{path}[0]")]
    return found


def raw(body: Any) -> bytes:
    import json
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # encoding the 5,000-deep test document itself
    try:
        return json.dumps(body).encode("ascii")  # lone surrogates travel as \ud800 escapes, as attackers send them
    finally:
        sys.setrecursionlimit(limit)


def test_rest_never_answers_5xx_to_hostile_fields(backend: Backend) -> None:
    import httpx

    from memstrata.server.app import create_app
    from memstrata.server.config import ServerConfig
    from tests.server.conftest import serve

    app = create_app(memory=backend.memory(), config=ServerConfig(auth=False, worker=False))
    headers = {"content-type": "application/json"}
    with serve(app) as url, httpx.Client(base_url=f"{url}/v1/users/alice", timeout=60, headers=headers) as client:
        memory_id = client.post("/memories", content=raw({"content": "seed"})).json()["id"]
        params = {"memory_id": memory_id, "category": "identity", "key": "city", "name": "Ana", "session_id": "s1"}
        failures: list[str] = []
        for (method, template), body in BODIES.items():
            target = template.format(**params)
            assert client.request(method, target, content=raw(body)).status_code < 300, (method, template)
            for field, mutated in mutations(body):
                status = client.request(method, target, content=raw(mutated)).status_code
                if status >= 500:
                    failures.append(f"{method} {template} {field}: {status}")
        for bad in ("a%00b", "a%ED%A0%80b", "%C0%80", "x" * 5000):
            for template in (
                "/entities/{x}",
                "/memories/{x}",
                "/profile/facts/{x}/k",
                "/sessions/{x}",
                "/memories/{x}/history",
                "/erasures/{x}",
            ):
                status = client.get(template.replace("{x}", bad)).status_code
                if status >= 500:
                    failures.append(f"GET {template} {bad[:12]}: {status}")
            status = client.get(f"{url}/v1/users/{bad}/memories").status_code
            if status >= 500:
                failures.append(f"GET /v1/users/{bad[:12]}/memories: {status}")
        for read in ("/memories", "/entities", "/profile/facts", "/profile", "/export", "/sessions/s1"):
            assert client.get(read).status_code == 200, read
        assert client.post("/search", content=raw({"query": "ok"})).status_code == 200
        assert failures == [], "\n".join(failures)
