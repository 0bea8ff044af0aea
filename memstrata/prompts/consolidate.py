"""The consolidation prompt: many old memories → one "[Compressed memory] …" summary memory."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ..core.compress import COMPRESSED_PREFIX
from ..errors import InvalidInput, LLMOutputError
from ..llm.base import ChatMessage
from ._format import day, numbered
from .free_text import check_free_text, strip_preamble
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


def consolidation_sources(memories: Sequence[tuple[date | None, str]]) -> list[str]:
    """What a compressed memory summarizes, as the prompt shows it: the dated memories."""
    return [f"{when.isoformat()} {text}" if when else text for when, text in memories]


def parse_consolidation(text: str, *, sources: Sequence[str] = ()) -> str:
    """The compressed memory text ("[Compressed memory] …") from the model's answer: reasoning,
    fences, preamble and closing chatter removed.

    Raises `LLMOutputError` when it is not usable (`free_text.check_free_text`): empty, a refusal,
    or not a summary of `sources` (`consolidation_sources`; not checked when empty).
    """
    body = compressed_text(strip_preamble(clean_text(text))).removeprefix(COMPRESSED_PREFIX).strip()
    if not body:
        raise LLMOutputError("LLM returned an empty compressed memory")
    return f"{COMPRESSED_PREFIX} {check_free_text(body, sources=sources, what='compressed memory')}"
