"""The consolidation prompt: many old memories → one "[Compressed memory] …" summary memory."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ..core.compress import COMPRESSED_PREFIX
from ..errors import InvalidInput, LLMOutputError
from ..llm.base import ChatMessage
from ._format import day, numbered
from .parse import clean_text

SYSTEM = """\
You compress a user's old memories into one dense summary that replaces them.
Keep every distinct fact: names, numbers, dates, places, preferences, relations, plans.
Merge duplicates. When two memories conflict, keep the most recent one (memories are listed
oldest first, with their dates). Do not invent anything that is not in the memories.
Write third-person sentences ("The user…"), at most {max_sentences} sentences.
Reply with the summary text only."""


def build_consolidation_messages(
    memories: Sequence[tuple[date | None, str]], *, today: date, max_sentences: int = 8
) -> list[ChatMessage]:
    """Messages asking to compress `memories`, given as (date or None, text), oldest first."""
    if not memories:
        raise InvalidInput("consolidation needs at least one memory")
    if max_sentences < 1:
        raise InvalidInput(f"max_sentences must be at least 1, got {max_sentences}")
    lines = [f"({day(when)}) {text}" if when else text for when, text in memories]
    return [
        ChatMessage("system", SYSTEM.format(max_sentences=max_sentences)),
        ChatMessage(
            "user",
            f"Today is {day(today)}.\n\nMemories to compress ({len(memories)}):\n{numbered(lines)}\n\nSummary:",
        ),
    ]


def compressed_text(summary: str) -> str:
    """`summary` with exactly one leading "[Compressed memory]" marker."""
    body = summary.strip()
    while body.lower().startswith(COMPRESSED_PREFIX.lower()):
        body = body[len(COMPRESSED_PREFIX) :].lstrip(" :-\n")
    return f"{COMPRESSED_PREFIX} {body}"


def parse_consolidation(text: str) -> str:
    """The compressed memory text ("[Compressed memory] …") from the model's answer."""
    summary = compressed_text(clean_text(text))
    if summary == f"{COMPRESSED_PREFIX} ":
        raise LLMOutputError("LLM returned an empty compressed memory")
    return summary.rstrip()
