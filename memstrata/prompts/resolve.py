"""The resolution prompt: decide ADD / UPDATE / SUPERSEDE / NOOP for new facts against stored ones.

Both lists are shown numbered, and the model answers with those integer indexes — never with
stored ids, which models copy wrongly. `parse_resolution` checks every index against the list
sizes and returns exactly one decision per new fact; anything unusable becomes ADD, the choice
that can never retire an unrelated memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from ..errors import InvalidInput
from ..llm.base import ChatMessage
from ._format import day, numbered
from .parse import parse_items

Action = Literal["ADD", "UPDATE", "SUPERSEDE", "NOOP"]
_ALIASES = {"NONE": "NOOP", "NO_OP": "NOOP", "SKIP": "NOOP", "DELETE": "SUPERSEDE", "REPLACE": "SUPERSEDE"}
_INDEX = re.compile(r"\d+")

SYSTEM = """\
You keep a user's memory consistent. For each NEW fact decide, against the EXISTING memories:
- ADD: new information (also when it is merely related to an existing memory)
- UPDATE: the same fact as existing memory `target`, with more detail; give the merged sentence in `content`
- SUPERSEDE: the same slot as `target` with a different, newer value (moved city, new job, changed
  preference); the old memory is retired and the new fact stored
- NOOP: already known as `target`; nothing to store
- DELETE: the new fact says `target` no longer holds ("no longer eats meat"); the old memory is retired
  and kept in history, the new fact stored in its place
Only UPDATE, SUPERSEDE, DELETE and NOOP take a `target`, the NUMBER of an existing memory. Never retire a
memory about something else: liking coffee does not supersede liking tea. When unsure, ADD.
Reply with ONLY: {"decisions": [{"fact": <new fact number>, "action": "ADD|UPDATE|SUPERSEDE|DELETE|NOOP",
"target": <existing number or null>, "content": <merged sentence or null>}]}"""


def build_resolution_messages(new_facts: Sequence[str], existing: Sequence[str], *, today: date) -> list[ChatMessage]:
    """Messages asking for one decision per new fact; both lists are numbered from 0."""
    if not new_facts:
        raise InvalidInput("resolution needs at least one new fact")
    body = (
        f"Today is {day(today)}.\n\nEXISTING memories:\n{numbered(list(existing))}\n\n"
        f"NEW facts:\n{numbered(list(new_facts))}\n\nJSON decisions:"
    )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", body)]


def _as_index(value: Any) -> Any:
    """Accept 3, "3", "#3", "[3]", "E3"; leave anything else for validation to reject."""
    if not isinstance(value, str):
        return value
    match = _INDEX.search(value)
    if match:
        return int(match.group())
    return None if value.strip().lower() in ("", "null", "none") else value


class RawDecision(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    fact: int = Field(validation_alias=AliasChoices("fact", "new", "candidate", "index"))
    action: Action
    target: int | None = Field(default=None, validation_alias=AliasChoices("target", "existing", "id"))
    content: str | None = None

    @field_validator("fact", "target", mode="before")
    @classmethod
    def _index(cls, value: Any) -> Any:
        return _as_index(value)

    @field_validator("action", mode="before")
    @classmethod
    def _action(cls, value: Any) -> Any:
        text = str(value).strip().upper().replace("-", "_")
        return _ALIASES.get(text, text)


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with new fact `fact`: `target` indexes the existing list (None for ADD)."""

    fact: int
    action: Action
    target: int | None = None
    content: str | None = None


def _checked(raw: RawDecision, existing_count: int) -> Decision:
    """The decision if its target is usable, else ADD."""
    if raw.action == "ADD":
        return Decision(raw.fact, "ADD")
    if raw.target is None or not 0 <= raw.target < existing_count:
        return Decision(raw.fact, "ADD")
    content = (raw.content or "").strip() or None
    return Decision(raw.fact, raw.action, raw.target, content if raw.action == "UPDATE" else None)


def parse_resolution(text: str, *, new_count: int, existing_count: int) -> list[Decision]:
    """Exactly one decision per new fact, in order: the first valid one given, else ADD."""
    parsed = parse_items(text, RawDecision, key="decisions")
    chosen: dict[int, Decision] = {}
    for raw in parsed.items:
        if 0 <= raw.fact < new_count and raw.fact not in chosen:
            chosen[raw.fact] = _checked(raw, existing_count)
    return [chosen.get(index, Decision(index, "ADD")) for index in range(new_count)]
