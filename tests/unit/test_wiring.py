"""`layers.wiring`: every collaborator built once and shared — the caller's extractor is the one
learning, reconciliation and the session end use, and `context()` embeds its query once."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.embedders.base import Vectors
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.extraction.base import Candidate, Extractor, Message
from memstrata.extraction.resolution import DecisionKind
from memstrata.models import MemoryKind, Scope
from memstrata.settings import Settings

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Scope("alice", session_id="s1")
_CODE_WORD = re.compile(r"code word:\s*(\w+)", re.IGNORECASE)


class CodeWords:
    """An extractor that knows one slot ("code word: X" -> the user's code word is X) and records every
    text it was asked to read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        found = []
        for message in messages:
            self.read.append(message.content)
            match = _CODE_WORD.search(message.content)
            if match and message.role == "user":
                word = match.group(1).lower()
                content = f"The user's code word is {word}."
                found.append(Candidate(MemoryKind.FACT, content, "identity", attribute="code_word", value=word))
        return found


class CountingEmbedder:
    """A real embedder that counts the queries it embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(64)
        self.queries: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str, /) -> Vectors:
        self.queries.append(text)
        return self.inner.embed_query(text)


def _memory(tmp_path: Path, **collaborators: object) -> Memory:
    collaborators.setdefault("embedder", HashingEmbedder(64))
    settings = Settings(llm=None, buffer="memory://")
    store = f"sqlite:///{tmp_path / 'memories.db'}"
    return Memory(store=store, clock=lambda: T0, settings=settings, **collaborators)  # type: ignore[arg-type]


@pytest.fixture
def extractor() -> CodeWords:
    return CodeWords()


@pytest.fixture
def memory(tmp_path: Path, extractor: CodeWords) -> Iterator[Memory]:
    with _memory(tmp_path, extractor=extractor) as memory:
        yield memory


def test_the_custom_extractor_is_a_real_extractor(extractor: CodeWords) -> None:
    assert isinstance(extractor, Extractor)


def test_learn_uses_the_callers_extractor(memory: Memory, extractor: CodeWords) -> None:
    result = memory.learn("code word: heron", scope="alice")
    assert "code word: heron" in extractor.read
    assert [m.content for m in result.memories] == ["The user's code word is heron."]


def test_reconciliation_reads_plain_text_memories_with_the_callers_extractor(
    memory: Memory, extractor: CodeWords
) -> None:
    old = memory.add("code word: heron", scope="alice")  # stored as plain text, without a slot
    result = memory.learn("code word: falcon", scope="alice")
    assert "code word: heron" in extractor.read  # read to find the plain memory's slot
    [operation] = result.operations
    assert operation.event is DecisionKind.SUPERSEDE
    assert operation.replaced_ids == (old.id,)
    assert memory.get(old.id, scope="alice").valid_to is not None


def test_end_session_reads_the_session_with_the_callers_extractor(memory: Memory, extractor: CodeWords) -> None:
    memory.add_message("user", "Remember, code word: osprey", scope=ALICE)
    memory.add_message("assistant", "Noted.", scope=ALICE)
    context = memory.end_session(scope=ALICE)
    assert "Remember, code word: osprey" in extractor.read
    assert "The user's code word is osprey." in context["facts"]


def test_context_embeds_its_query_once(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    with _memory(tmp_path, embedder=embedder) as memory:
        memory.add("Alice is training for the Porto marathon", scope="alice")
        memory.add_message("user", "I ran 30 km for the marathon on Sunday", scope=Scope("alice", session_id="s0"))
        memory.add_procedure("marathon training plan", instruction="Answer with a weekly plan", scope="alice")
        embedder.queries.clear()
        built = memory.context("how is the marathon training going?", scope="alice")
    assert built.part("memories") is not None and built.part("procedures") is not None  # three searches ran
    assert embedder.queries == ["how is the marathon training going?"]
