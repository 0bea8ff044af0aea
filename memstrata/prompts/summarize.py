"""The rolling-summary prompt: previous summary + older turns → a new 3-4 sentence summary."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ..llm.base import ChatMessage
from ._format import Turn, day, numbered, require_turns, turn_line
from .free_text import usable_text

SYSTEM = """\
You maintain the running summary of a conversation between a user and an assistant.
Merge the previous summary with the new turns into ONE updated summary of 3-4 sentences.
Keep every name, number, date, place, decision, preference and open question; drop greetings
and filler. Write absolute dates ("on 2024-05-11") instead of relative ones, resolving them
against the date of the turn that says them. Write in the third person ("The user…").
Reply with the summary text only: no heading, no list, no quotes."""


def build_summary_messages(previous_summary: str | None, turns: Sequence[Turn], *, today: date) -> list[ChatMessage]:
    """Messages asking to fold `turns` into `previous_summary` (None or "" when there is none yet)."""
    require_turns(turns, "summarization")
    previous = (previous_summary or "").strip() or "(no summary yet)"
    conversation = numbered([turn_line(turn) for turn in turns])
    return [
        ChatMessage("system", SYSTEM),
        ChatMessage(
            "user",
            f"Today is {day(today)}.\n\nPrevious summary:\n{previous}\n\n"
            f"New turns:\n{conversation}\n\nUpdated summary (3-4 sentences):",
        ),
    ]


def summary_sources(previous_summary: str | None, turns: Sequence[Turn]) -> list[str]:
    """What a rolling summary summarizes, as the prompt shows it: the previous summary and the dated turns."""
    return [(previous_summary or "").strip(), *(turn_line(turn) for turn in turns)]


def parse_summary(text: str, *, sources: Sequence[str] = ()) -> str:
    """The summary text of the model's answer: reasoning, fences, preamble and closing chatter removed.

    Raises `LLMOutputError` when it is not usable (`free_text.usable_text`): empty, a refusal, or
    not a summary of `sources` (`summary_sources`; not checked when empty).
    """
    return usable_text(text, sources=sources, what="summary")
