"""`memstrata-bench learn`: latency of `Memory.learn` (offline extraction + resolution + writes) per
message, with N memories already stored for the user.

The stored memories are synthetic slot facts (so that resolution has real candidates to compare
against); the timed messages are the texts of the labelled extraction set, which mixes statements
worth storing with small talk and questions, as a real conversation does.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Any

from memstrata import Memory, MemoryKind, NewMemory, Scope
from memstrata.extraction.base import is_multi_valued

from .extraction import DEFAULT_PATH, load
from .report import latency_summary

_ATTRIBUTES = ("likes", "location", "employer", "relation:friend", "habit", "event", "note")
_WORDS = (
    "tea coffee jazz chess hiking berlin paris lisbon initech globex piano tennis python rust sushi "
    "marathon garden cinema novel physics yoga cycling museum opera kayak bakery violin climbing"
).split()


def synthetic_facts(n: int, seed: int = 7) -> list[NewMemory]:
    """n distinct, mutually consistent slot facts of one user (deterministic): many-valued slots of
    the user ("likes", "habit", ...) and one-value slots ("location", "employer") of many people the
    user knows — one current value per (subject, slot), as resolution keeps it."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        attribute = rng.choice(_ATTRIBUTES)
        value = f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {i}"
        subject = "user" if is_multi_valued(attribute) else f"contact {i}"
        items.append(
            NewMemory(
                content=f"{subject.capitalize()} {attribute.replace(':', ' ')} {value}.",
                kind=MemoryKind.FACT,
                metadata={"subject": subject, "attribute": attribute, "value": value, "polarity": 1},
            )
        )
    return items


def run(*, memories: int = 10_000, messages: int = 300, store: str | None = None, seed: int = 7) -> dict[str, Any]:
    texts = [example.text for example in load(DEFAULT_PATH)]
    sample = [texts[i % len(texts)] for i in range(messages)]
    with tempfile.TemporaryDirectory(prefix="memstrata-learn-") as tmp:
        url = store or f"sqlite:///{Path(tmp) / 'learn.db'}"
        with Memory(store=url, embedder="static") as memory:
            scope = Scope("bench-learn")
            memory.store.erase_user(scope.user_id)
            facts = synthetic_facts(memories, seed)
            for start in range(0, len(facts), 1000):
                memory.add_many(facts[start : start + 1000], scope=scope, dedupe=False)
            latencies, stored = [], 0
            for text in sample:
                started = time.perf_counter()
                result = memory.learn(text, scope=scope)
                latencies.append((time.perf_counter() - started) * 1000)
                stored += len(result.operations)
            return {
                "benchmark": "learn",
                "store": memory.store.url.split("://")[0],
                "memories": memories,
                "messages": messages,
                "operations": stored,
                **latency_summary(latencies, "learn_ms"),
            }
