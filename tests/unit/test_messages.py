"""One reading of a chat message for every entry point (`add_messages`, `learn`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from memstrata import Memory
from memstrata.errors import InvalidInput
from memstrata.extraction.base import Message
from memstrata.messages import to_message, to_messages
from memstrata.models import Scope

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
AT = datetime(2026, 2, 1, 9, tzinfo=UTC)


@dataclass
class ChatMessage:  # the shape of LangChain-style message objects
    role: str
    content: str


def test_every_shape_reads_as_the_same_message() -> None:
    expected = Message("assistant", "Noted.", NOW)
    shapes = [
        {"role": "assistant", "content": "Noted."},
        ("assistant", "Noted."),
        ChatMessage("assistant", "Noted."),
        Message("assistant", "Noted.", NOW),
    ]
    assert [to_message(s, NOW) for s in shapes] == [expected] * 4
    assert to_message("I moved to Lisbon", NOW) == Message("user", "I moved to Lisbon", NOW)
    assert to_message({"content": "hi", "at": AT, "speaker": " Ana "}, NOW) == Message("user", "hi", AT, "Ana")


def test_a_single_message_or_a_list() -> None:
    assert to_messages("hello", NOW) == to_messages(["hello"], NOW) == [Message("user", "hello", NOW)]
    assert to_messages(("user", "hi"), NOW) == [Message("user", "hi", NOW)]


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"role": "user"}, "needs a 'content' field"),
        (("user", "a", "b"), r"must be \(role, content\)"),
        ({"role": "robot", "content": "hi"}, "unknown message role 'robot'"),
        ({"content": 42}, "content must be a string"),
        ({"content": "hi", "speaker": "  "}, "speaker must be a non-empty string"),
        ({"content": "hi", "at": "yesterday"}, "ISO 8601"),
        (3.5, "a message must be"),
    ],
)
def test_bad_messages_are_named(message: object, error: str) -> None:
    with pytest.raises(InvalidInput, match=error):
        to_message(message, NOW)


def test_conversation_and_learning_accept_the_same_shapes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Memory(store=f"sqlite:///{tmp_path / 'm.db'}") as memory:
        scope = Scope("u1", session_id="s1")
        turns = memory.add_messages(["My name is Ana", ("assistant", "Hi Ana!")], scope=scope)
        assert [(t.role, t.content) for t in turns] == [("user", "My name is Ana"), ("assistant", "Hi Ana!")]
        learned = memory.learn([("user", "I live in Porto")], scope=Scope("u1"))
        assert any("Porto" in m.content for m in learned.memories)
