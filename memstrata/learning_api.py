"""`Memory` methods for learning from messages (extraction + resolution) and the background queue."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .extraction.base import Extractor, Message
from .knowledge_api import KnowledgeAPI
from .layers.learning import LearningMemory, LearnResult
from .layers.work_queue import QueueStatus, WorkQueue
from .messages import MessageLike, to_messages
from .models import ScopeLike, as_scope

if TYPE_CHECKING:
    from .layers.semantic import Clock, SemanticMemory
    from .llm.base import LLMClient
    from .storage.base import Store


def message_dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.content, "at": m.at.isoformat(), "speaker": m.speaker} for m in messages]


class LearningAPI(KnowledgeAPI):
    """Mixin of `Memory` (attributes below are set by `Memory.__init__`)."""

    store: Store
    semantic: SemanticMemory
    clock: Clock
    extractor_spec: Extractor | None

    if TYPE_CHECKING:

        @property
        def llm(self) -> LLMClient | None: ...

    @cached_property
    def extractor(self) -> Extractor:
        """The configured extractor; else the LLM extractor (rules as fallback) when an LLM is set; else rules."""
        if self.extractor_spec is not None:
            return self.extractor_spec
        from .extraction.rules import RuleExtractor

        if self.llm is None:
            return RuleExtractor()
        from .extraction.llm import LLMExtractor

        return LLMExtractor(self.llm, fallback=RuleExtractor())

    @cached_property
    def learning(self) -> LearningMemory:
        return LearningMemory(
            semantic=self.semantic,
            entities=self.entity_memory,
            profiles=self.profiles,
            extractor=self.extractor,
        )

    @cached_property
    def work_queue(self) -> WorkQueue:
        def run(scope: Any, raw: list[dict[str, Any]]) -> None:
            self.learning.learn(scope, to_messages(raw, self.clock()))

        return WorkQueue(store=self.store, clock=self.clock, run=run)

    def learn(
        self,
        messages: Sequence[MessageLike] | MessageLike,
        *,
        scope: ScopeLike,
        known_name: str | None = None,
        source_ids: Sequence[str] = (),
    ) -> LearnResult:
        """Extract what is worth remembering from messages and store it: duplicates refresh the existing
        memory, a new value for the same slot supersedes the old one (kept in history), the rest is added."""
        parsed = to_messages(messages, self.clock())
        return self.learning.learn(as_scope(scope), parsed, known_name=known_name, source_ids=source_ids)

    def learn_later(self, messages: Sequence[MessageLike] | MessageLike, *, scope: ScopeLike) -> str:
        """Queue messages for background learning (durable); returns the job id. See `queue_status`."""
        parsed = to_messages(messages, self.clock())
        return self.work_queue.enqueue(as_scope(scope), message_dicts(parsed))

    def process_queue(self, *, limit: int = 100) -> int:
        """Run pending background jobs now; returns how many ran."""
        return self.work_queue.process(limit=limit)

    def queue_status(self) -> QueueStatus:
        return self.work_queue.status()

    def start_worker(self, *, interval: float = 1.0) -> None:
        self.work_queue.start(interval=interval)

    def stop_worker(self) -> None:
        self.work_queue.stop()
