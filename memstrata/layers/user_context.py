"""The user context object (facts, preferences, last topics, open items, last session), updated once
per session, after it ends.

    {"user_id", "facts": [...≤ 20, oldest dropped], "preferences": {...}, "last_topics": [3],
     "open_items": [...], "last_session": ISO time}

It lives in the store (namespace USER_CONTEXT, key "user"). `end_session` computes a change set
from the finished session and applies it with pure code (`prompts.user_context.apply_user_context_update`):

* offline (default): facts, preferences and open items from the rule extractor, resolved open items
  from "done"-style sentences that name them, topics from the session's salient words;
* with an LLM: the user-context prompt (`prompts/user_context.py`), answered as JSON and validated.

The new object replaces the old one in a single write, and only after everything succeeded: a
failed update (LLM down, unusable answer, store error) leaves the previous context as it was.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from .. import namespaces
from ..buffer import Turn
from ..core.summarize import format_line, salient_terms
from ..core.text import content_terms
from ..extraction.base import Candidate, Extractor, Message
from ..llm.base import LLMClient
from ..llm.whole import complete_whole
from ..prompts.user_context import (
    MAX_FACTS,
    UserContextUpdate,
    apply_user_context_update,
    build_user_context_messages,
    empty_context,
    parse_user_context_update,
)
from ..storage.base import Item, ItemRead, Store
from ..storage.fence import fenced
from .conversation import Clock, SessionSnapshot

CONTEXT_KEY = "user"
CONTEXT_READ = ItemRead(namespaces.USER_CONTEXT, CONTEXT_KEY)
"""The read of the user context item (for `Store.read_many`)."""
FACT_CATEGORIES = ("identity", "relation", "event", "request")
_DONE = re.compile(
    r"\b(?:done|finished|completed|resolved|sorted|taken care of|took care of|no longer need|don't need|"
    r"cancel+ed)\b|\b(?:i|we)(?:'ve| have)?\s+(?:already |finally |just )?[a-z]+ed\b",
    re.IGNORECASE,
)
_ITEM_NOISE = frozenset(content_terms("user wants want remind reminded reminder follow up need task todo"))
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def context_of(user_id: str, item: Item | None) -> dict[str, Any]:
    """The user's context object from its item (`CONTEXT_READ`; an empty one before the first session end)."""
    if item is None:
        return {"user_id": user_id, **empty_context()}
    return {"user_id": user_id, **empty_context(), **item.value}


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _resolved(items: Sequence[str], user_texts: Sequence[str]) -> list[int]:
    """Indexes of open items that a user sentence reports as done ("I called the dentist", "X is done")."""
    sentences = [s for text in user_texts for s in _SENTENCE.split(text) if _DONE.search(s)]
    done: list[int] = []
    for index, item in enumerate(items):
        core = {t for t in content_terms(item) if t not in _ITEM_NOISE and not t.isdigit()}
        if not core:
            continue
        need = min(2, len(core))
        if any(len(core & set(content_terms(s))) >= need for s in sentences):
            done.append(index)
    return done


def _preferences(candidates: Sequence[Candidate]) -> dict[str, str]:
    found: dict[str, str] = {}
    for c in candidates:
        if c.category not in ("preference", "instruction"):
            continue
        if c.profile is not None:
            found[c.profile.key] = c.profile.value
        elif c.attribute == "likes" and c.value:
            found[c.value] = "likes" if c.polarity > 0 else "dislikes"
        elif c.attribute and c.value:
            found[c.attribute.split(":")[-1]] = c.value
    return found


def derive_update(
    turns: Sequence[Turn], candidates: Sequence[Candidate], context: dict[str, Any], *, topics: int = 3
) -> UserContextUpdate:
    """The offline change set for one session (pure)."""
    user_texts = [t.content for t in turns if t.role == "user"]
    speakers = [t.speaker for t in turns if t.speaker]
    return UserContextUpdate(
        facts_add=[c.content for c in candidates if c.category in FACT_CATEGORIES],
        preferences_set=_preferences(candidates),
        last_topics=salient_terms([t.content for t in turns], topics, exclude=speakers),
        open_items_add=[c.content for c in candidates if c.category == "open_item"],
        open_items_done=_resolved(_strings(context.get("open_items")), user_texts),
    )


def session_text(snapshot: SessionSnapshot) -> str:
    """The session as the LLM prompt sees it: the rolling summary, then the unfolded turns."""
    lines = [
        format_line(t.speaker or t.role, t.at.date().isoformat(), " ".join(t.content.split())) for t in snapshot.recent
    ]
    parts = [snapshot.summary.strip()] if snapshot.summary.strip() else []
    if lines:
        parts.append("Last turns:\n" + "\n".join(lines))
    return "\n\n".join(parts)


class UserContextUpdater:
    """Reads and updates the user context object of each user."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        extractor: Extractor,
        llm: LLMClient | None = None,
        max_facts: int = MAX_FACTS,
    ) -> None:
        """`extractor` reads the facts, preferences and open items of a finished session."""
        self.store = store
        self.clock = clock
        self.llm = llm
        self.extractor = extractor
        self.max_facts = max_facts
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, user_id: str) -> dict[str, Any]:
        """The user's context object (an empty one before the first session end)."""
        return context_of(user_id, self.store.get_item(user_id, CONTEXT_READ.namespace, CONTEXT_READ.key))

    def _known_name(self, user_id: str) -> str | None:
        item = self.store.get_item(user_id, namespaces.PROFILE, "identity:name")
        value = None if item is None else item.value.get("value")
        return str(value) if value else None

    def _candidates(self, snapshot: SessionSnapshot) -> list[Candidate]:
        messages = [
            Message(role=t.role, content=t.content, at=t.at, speaker=t.speaker)  # type: ignore[arg-type]
            for t in snapshot.turns
            if t.role in ("user", "assistant", "system")
        ]
        return self.extractor.extract(messages, known_name=self._known_name(snapshot.scope.user_id))

    def compute(self, snapshot: SessionSnapshot, context: dict[str, Any]) -> UserContextUpdate:
        """The change set for a finished session (rules offline; the LLM prompt when configured)."""
        candidates = self._candidates(snapshot)
        if self.llm is None:
            return derive_update(snapshot.turns, candidates, context)
        facts = [c.content for c in candidates if c.category in FACT_CATEGORIES]
        messages = build_user_context_messages(context, session_text(snapshot), facts, today=self.clock().date())
        response = complete_whole(self.llm, messages, max_tokens=800, json_mode=True)
        return parse_user_context_update(response.text)

    @fenced
    def update(self, snapshot: SessionSnapshot) -> dict[str, Any]:
        """Apply one finished session to the user's context and return the new object.

        Raises whatever failed (ProviderError, LLMOutputError, StoreError); the stored context is
        then unchanged.
        """
        user_id = snapshot.scope.user_id
        with self._guard:
            lock = self._locks.setdefault(user_id, threading.Lock())
        with lock:
            context = self.get(user_id)
            if not snapshot.turns:
                return context
            change = self.compute(snapshot, context)
            new = apply_user_context_update(context, change, now=self.clock(), max_facts=self.max_facts)
            new["user_id"] = user_id
            self.store.put_item(user_id, namespaces.USER_CONTEXT, CONTEXT_KEY, new)
            return new


__all__ = ["CONTEXT_KEY", "CONTEXT_READ", "UserContextUpdater", "context_of", "derive_update", "session_text"]
