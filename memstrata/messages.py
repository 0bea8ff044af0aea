"""The one reading of a chat message, wherever memstrata accepts messages (`add_messages`, `learn`,
`add(..., infer=True)`, the HTTP and MCP front ends through them).

Accepted shapes: a `Message`; a `{"role", "content", "at"?, "speaker"?}` dict (role defaults to "user");
a `(role, content)` pair; any object with `role` and `content` attributes (e.g. a LangChain-style message);
a plain string (a user message). `at` defaults to now and must be timezone-aware.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .errors import InvalidInput
from .extraction.base import Message
from .filters import aware
from .models import MAX_CONTENT_BYTES

MessageLike = Message | Mapping[str, Any] | tuple[str, str] | str | Any


def message_dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages as JSON-ready dicts (how the durable queue keeps them)."""
    return [{"role": m.role, "content": m.content, "at": m.at.isoformat(), "speaker": m.speaker} for m in messages]


def to_messages(messages: Sequence[MessageLike] | MessageLike, now: datetime) -> list[Message]:
    """`to_message` of each message; a single message (not in a list) is accepted too."""
    if isinstance(messages, str | Mapping | Message | tuple):
        messages = [messages]
    if not isinstance(messages, Sequence):
        raise InvalidInput(f"messages must be a list, got {type(messages).__name__}")
    return [to_message(m, now) for m in messages]


def to_message(message: MessageLike, now: datetime) -> Message:
    role, content, at, speaker = _fields(message)
    if not isinstance(content, str):
        raise InvalidInput(f"message content must be a string, got {type(content).__name__}")
    size = len(content.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:  # refused before any extraction reads it (2 MB took seconds of regexes)
        raise InvalidInput(f"message content is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes")
    if speaker is not None and (not isinstance(speaker, str) or not speaker.strip()):
        raise InvalidInput("speaker must be a non-empty string")
    return Message(role, content, aware(at, "message time `at`") or now, speaker.strip() if speaker else None)


def _fields(message: MessageLike) -> tuple[Any, Any, Any, Any]:
    if isinstance(message, Message):
        return message.role, message.content, message.at, message.speaker
    if isinstance(message, str):
        return "user", message, None, None
    if isinstance(message, Mapping):
        if "content" not in message:
            raise InvalidInput("a message needs a 'content' field")
        return message.get("role") or "user", message["content"], message.get("at"), message.get("speaker")
    if isinstance(message, tuple):
        if len(message) != 2:
            raise InvalidInput("a message tuple must be (role, content)")
        return message[0], message[1], None, None
    if hasattr(message, "role") and hasattr(message, "content"):
        return message.role, message.content, getattr(message, "at", None), getattr(message, "speaker", None)
    raise InvalidInput(
        "a message must be a string, a dict, a (role, content) pair or have role/content attributes, "
        f"got {type(message).__name__}"
    )
