"""The user-context prompt: update facts, preferences, last topics and open items.

The model answers with a small *change set*, not a rewritten object, and pure code applies it:
caps (20 facts, 3 topics) and "remove the oldest" are enforced here, and an open item can only be
removed by its index in the numbered list the model was shown — a bad answer cannot wipe the context.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..llm.base import ChatMessage
from ._format import day, numbered
from .parse import parse_model

MAX_FACTS = 20
MAX_TOPICS = 3

SYSTEM = """\
You keep a compact profile of a user up to date after each session.
You are shown the current profile (facts, preferences, last topics, numbered open items), the
session summary and facts learned in the session. Reply with ONLY this JSON object:
{"facts_add": [...], "preferences_set": {...}, "last_topics": [...],
 "open_items_add": [...], "open_items_done": [...]}
- facts_add: new lasting facts about the user, short sentences; never repeat a known fact
- preferences_set: preferences the user stated clearly, as "key": "value"
  (e.g. "contact_time": "Tuesday afternoon")
- last_topics: the main 3 topics of THIS session, a few words each
- open_items_add: what the user asked to follow up on, or what is still pending
- open_items_done: the NUMBERS of current open items that this session resolved
Use absolute dates (YYYY-MM-DD), resolving relative ones against today's date."""


def empty_context() -> dict[str, Any]:
    """The context object of a user with no history yet."""
    return {"facts": [], "preferences": {}, "last_topics": [], "open_items": [], "last_session": None}


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def build_user_context_messages(
    context: Mapping[str, Any], session_summary: str, new_facts: Sequence[str] = (), *, today: date
) -> list[ChatMessage]:
    """Messages asking for the change set that updates `context` after a session."""
    preferences = context.get("preferences") or {}
    body = (
        f"Today is {day(today)}.\n\n"
        f"Known facts:\n{numbered(_strings(context.get('facts')))}\n\n"
        f"Preferences: {json.dumps(preferences, ensure_ascii=False, sort_keys=True)}\n"
        f"Last topics: {', '.join(_strings(context.get('last_topics'))) or '(none)'}\n\n"
        f"Open items (answer open_items_done with these numbers):\n"
        f"{numbered(_strings(context.get('open_items')))}\n\n"
        f"This session's summary:\n{session_summary.strip() or '(empty)'}\n\n"
        f"Facts learned this session:\n{numbered(list(new_facts))}\n\nJSON change set:"
    )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", body)]


class UserContextUpdate(BaseModel):
    """The change set the model returns."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    facts_add: list[str] = Field(default_factory=list)
    preferences_set: dict[str, str] = Field(default_factory=dict)
    last_topics: list[str] = Field(default_factory=list)
    open_items_add: list[str] = Field(default_factory=list)
    open_items_done: list[int] = Field(default_factory=list)

    @field_validator("facts_add", "last_topics", "open_items_add", mode="before")
    @classmethod
    def _texts(cls, value: Any) -> list[str]:
        items = value if isinstance(value, list) else [] if value is None else [value]
        return [" ".join(str(item).split()) for item in items if str(item).strip()]

    @field_validator("preferences_set", mode="before")
    @classmethod
    def _preferences(cls, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            return {}
        return {str(k).strip(): str(v).strip() for k, v in value.items() if str(k).strip() and v is not None}

    @field_validator("open_items_done", mode="before")
    @classmethod
    def _indexes(cls, value: Any) -> list[int]:
        items = value if isinstance(value, list) else [] if value is None else [value]
        return [int(item) for item in items if isinstance(item, int) or str(item).strip().isdigit()]


def parse_user_context_update(text: str) -> UserContextUpdate:
    return parse_model(text, UserContextUpdate)


def _merge_unique(old: list[str], new: list[str]) -> list[str]:
    """`old` then the items of `new` not already present (case-insensitive), oldest first."""
    seen = {item.casefold() for item in old}
    merged = list(old)
    for item in new:
        if item.casefold() not in seen:
            seen.add(item.casefold())
            merged.append(item)
    return merged


def apply_user_context_update(
    context: Mapping[str, Any], update: UserContextUpdate, *, now: datetime, max_facts: int = MAX_FACTS
) -> dict[str, Any]:
    """The new context object (pure). Oldest facts go first past `max_facts`; bad indexes are ignored."""
    facts = _merge_unique(_strings(context.get("facts")), update.facts_add)[-max_facts:]
    open_items = _strings(context.get("open_items"))
    done = set(update.open_items_done)
    still_open = [item for index, item in enumerate(open_items) if index not in done]
    return {
        **dict(context),
        "facts": facts,
        "preferences": {**dict(context.get("preferences") or {}), **update.preferences_set},
        "last_topics": update.last_topics[:MAX_TOPICS] or _strings(context.get("last_topics"))[:MAX_TOPICS],
        "open_items": _merge_unique(still_open, update.open_items_add),
        "last_session": now.isoformat(),
    }
