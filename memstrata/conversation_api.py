"""`Memory` methods for conversations: messages, recent turns, summaries, session ends, context.

A mixin that only delegates. The layers are built on first use from attributes `Memory.__init__`
sets: `store`, `semantic`, `clock`, `settings`, `buffer_spec` (a Buffer, `memory://` or
`redis://...`) and `llm` (Memory's optional LLM client, resolved once).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .buffer import Buffer, Turn, buffer_fallback, open_buffer
from .layers.context import DEFAULT_MAX_TOKENS, Context, ContextAssembler
from .layers.conversation import Conversation, ExtractiveSummarizer, LLMSummarizer, MessageLike, Summarizer
from .layers.user_context import UserContextUpdater
from .llm.base import LLMClient
from .models import ScopeLike, as_scope

if TYPE_CHECKING:
    from .layers.lifecycle import ConsolidationReport
    from .layers.semantic import Clock, SemanticMemory
    from .models import Scope
    from .settings import Settings
    from .storage.base import Store

_INIT_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class ConversationLayers:
    """The conversation layers of one `Memory`, built together on first use."""

    conversation: Conversation
    user_context: UserContextUpdater
    assembler: ContextAssembler
    llm: LLMClient | None
    owns_buffer: bool


def build_layers(
    *, store: Store, semantic: SemanticMemory, clock: Clock, settings: Settings,
    buffer_spec: Buffer | str | None, llm: LLMClient | None,
) -> ConversationLayers:  # fmt: skip
    """Wire the conversation layers from collaborators and settings."""
    buffer = open_buffer(buffer_spec, ttl_seconds=settings.buffer_ttl_seconds)
    summarizer: Summarizer = LLMSummarizer(llm, clock=clock) if llm is not None else ExtractiveSummarizer()
    conversation = Conversation(
        store=store, semantic=semantic, buffer=buffer, clock=clock, summarizer=summarizer,
        window_size=settings.window_size, summary_threshold=settings.summary_threshold,
        fallback=buffer_fallback(buffer_spec),
    )  # fmt: skip
    user_context = UserContextUpdater(store=store, clock=clock, llm=llm)
    assembler = ContextAssembler(semantic=semantic, conversation=conversation, user_context=user_context)
    owns = buffer_spec is None or isinstance(buffer_spec, str)
    return ConversationLayers(conversation, user_context, assembler, llm, owns)


class ConversationAPI:
    """Mixin of `Memory`: declares the attributes it relies on, which `Memory.__init__` sets."""

    store: Store
    semantic: SemanticMemory
    clock: Clock
    settings: Settings
    buffer_spec: Any

    if TYPE_CHECKING:

        @property
        def llm(self) -> LLMClient | None: ...

        def after_turns(self, *, scope: Scope | str, turns: int = 1) -> ConsolidationReport | None:
            """The every-N-turns consolidation policy (LifecycleAPI)."""

    @cached_property
    def conversation_layers(self) -> ConversationLayers:
        with _INIT_LOCK:  # two threads racing here must not build two buffers
            built = self.__dict__.get("conversation_layers")
            if built is None:
                built = build_layers(
                    store=self.store, semantic=self.semantic, clock=self.clock, settings=self.settings,
                    buffer_spec=self.buffer_spec, llm=self.llm,
                )  # fmt: skip
                self.__dict__["conversation_layers"] = built
            return built

    @property
    def conversation(self) -> Conversation:
        return self.conversation_layers.conversation

    # -- messages ----------------------------------------------------------------------------
    def add_message(
        self, scope: ScopeLike, role: str, content: str, *, at: datetime | str | None = None,
        speaker: str | None = None,
    ) -> Turn:  # fmt: skip
        """Append a message to a session (the scope needs a session_id): to the episode log (searchable,
        with its time) and the session buffer; folds the oldest turns into the summary when the buffer
        exceeds its window."""
        turn = self.conversation.add_message(as_scope(scope), role, content, at=at, speaker=speaker)
        self.after_turns(scope=scope, turns=1)
        return turn

    def add_messages(self, scope: ScopeLike, messages: Sequence[MessageLike]) -> list[Turn]:
        """Append messages in order (`{"role", "content", "at"?, "speaker"?}` dicts or `(role, content)`
        pairs) with one embedding batch and one transaction."""
        turns = self.conversation.add_messages(as_scope(scope), messages)
        self.after_turns(scope=scope, turns=len(turns))
        return turns

    def recent_turns(self, scope: ScopeLike, n: int | None = None) -> list[Turn]:
        """The session's last `n` turns (default: the window size), oldest first."""
        return self.conversation.recent_turns(as_scope(scope), n)

    def session_summary(self, scope: ScopeLike) -> str:
        """The session's rolling summary of its older turns ("" before the first fold)."""
        return self.conversation.summary(as_scope(scope))

    def clear_session(self, scope: ScopeLike) -> None:
        """Forget a session's buffered turns and summary (its episodes stay searchable)."""
        self.conversation.clear_session(as_scope(scope))

    # -- sessions ----------------------------------------------------------------------------
    def end_session(self, scope: ScopeLike, *, background: bool = False) -> dict[str, Any] | Future[dict[str, Any]]:
        """Close a session and update the user context object (facts, preferences, last topics, open
        items, last session). Adds no latency to turns: it runs only here, and with `background=True`
        on a worker thread (returns a Future). If the update fails the previous context stays intact
        and the error is raised (or set on the Future)."""
        layers = self.conversation_layers
        return layers.conversation.end_session(as_scope(scope), layers.user_context.update, background=background)

    def user_context(self, scope: ScopeLike) -> dict[str, Any]:
        """The user's context object (seed 004): facts, preferences, last_topics, open_items, last_session."""
        return self.conversation_layers.user_context.get(as_scope(scope).user_id)

    # -- context -----------------------------------------------------------------------------
    def context(
        self, scope: ScopeLike, query: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS, *,
        include: Sequence[str] | None = None,
    ) -> Context:  # fmt: skip
        """One prompt block from every layer within `max_tokens` (profile, relevant memories with dates,
        entities, procedures, pending items, last topics, session summary, recent turns), with its parts
        and their token counts. Never exceeds the budget; lower-priority parts give way first."""
        return self.conversation_layers.assembler.build(as_scope(scope), query, max_tokens=max_tokens, include=include)

    def close_conversation(self) -> None:
        """Wait for background session-end updates and close the buffer if this Memory opened it.
        `Memory.close()` calls this before closing the store. A no-op if the layers were never used."""
        layers = self.__dict__.get("conversation_layers")
        if layers is not None:
            layers.conversation.close(close_buffer=layers.owns_buffer)


__all__ = ["ConversationAPI", "ConversationLayers", "build_layers"]
