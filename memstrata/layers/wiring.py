"""All wiring in one place: the layers of one `Memory`, built together from one set of collaborators.

Every collaborator is built once, here, and passed to the layers that use it: no layer builds
another layer, an extractor or a reconciler of its own. The extractors: `learn` uses the `extractor`
given to `Memory` (default: `default_extractor`); reading the slot of a plain-text memory
(reconciliation) and a finished session's facts (the user context) use that same extractor when one
was given, else the one rule extractor built here (an LLM extractor would cost a model call per read).

Nothing here is lazy. Building a layer does no I/O (a Redis buffer connects on its first command, an
LLM client on its first call), so `Memory(...)` can build everything up front and every layer sees
the same store, clock, buffer and LLM — erasure reaches the same buffer the conversation writes to.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..buffer import Buffer, buffer_fallback, open_buffer
from ..embedders.base import Embedder
from ..errors import NotFound
from ..extraction.base import Extractor
from ..extraction.rules import RuleExtractor
from ..llm.base import LLMClient
from ..messages import to_messages
from ..models import Scope
from ..settings import Settings
from ..storage.base import Store
from .clock import Clock
from .context import ContextAssembler
from .conversation import FOLD, Conversation, ExtractiveSummarizer, LLMSummarizer, Summarizer
from .entities import EntityMemory
from .learning import LearningMemory
from .lifecycle import Lifecycle, LifecyclePolicy
from .procedures import ProceduralMemory
from .profile import ProfileMemory
from .reconcile import Reconciler
from .semantic import SemanticMemory
from .user_context import UserContextUpdater
from .work_queue import LEARN, MAINTAIN, PENDING, Job, JobProgress, WorkQueue


@dataclass(frozen=True, slots=True)
class Layers:
    """Every layer of one `Memory`."""

    semantic: SemanticMemory
    profiles: ProfileMemory
    entities: EntityMemory
    procedures: ProceduralMemory
    learning: LearningMemory
    conversation: Conversation
    user_context: UserContextUpdater
    context: ContextAssembler
    lifecycle: Lifecycle
    queue: WorkQueue
    owns_buffer: bool
    """True when the buffer was opened from a spec here, so closing the Memory closes it."""


def default_extractor(llm: LLMClient | None, rules: Extractor) -> Extractor:
    """`rules` offline; with an LLM, the LLM extractor with `rules` as its fallback."""
    if llm is None:
        return rules
    from ..extraction.llm import LLMExtractor

    return LLMExtractor(llm, fallback=rules)


def build_layers(
    *,
    store: Store,
    embedder: Embedder,
    clock: Clock,
    settings: Settings,
    policy: LifecyclePolicy,
    buffer: Buffer | str | None,
    llm: LLMClient | None,
    extractor: Extractor | None,
    track_access: bool,
) -> Layers:
    semantic = SemanticMemory(
        store=store,
        embedder=embedder,
        clock=clock,
        track_access=track_access,
        default_expiry=policy.default_expiry,
        context_weight=settings.context_vector_weight,
    )
    profiles = ProfileMemory(store=store, clock=clock)
    entities = EntityMemory(store=store, clock=clock)
    procedures = ProceduralMemory(semantic=semantic)
    rules = RuleExtractor()
    reader = extractor or rules  # reads plain-text memories and finished sessions (see module doc)
    reconciler = Reconciler(semantic, llm=lambda: llm, reader=reader)  # the LLM decides when one is configured
    learning = LearningMemory(
        semantic=semantic,
        entities=entities,
        profiles=profiles,
        extractor=extractor or default_extractor(llm, rules),
        reconciler=reconciler,
    )
    opened = open_buffer(buffer, ttl_seconds=settings.buffer_ttl_seconds, clock=clock)
    summarizer: Summarizer = LLMSummarizer(llm, clock=clock) if llm is not None else ExtractiveSummarizer()

    def fold_later(scope: Scope) -> str:  # an LLM fold is a model call: off the conversation path
        return queue.enqueue(scope, kind=FOLD)

    def fold_waiting(scope: Scope, job_id: object) -> bool:
        try:
            return queue.job(scope.user_id, str(job_id)).status == PENDING
        except NotFound:
            return False

    conversation = Conversation(
        store=store,
        semantic=semantic,
        buffer=opened,
        clock=clock,
        summarizer=summarizer,
        window_size=settings.window_size,
        summary_threshold=settings.summary_threshold,
        fallback=buffer_fallback(buffer),
        fold_later=fold_later if llm is not None else None,
        fold_waiting=fold_waiting,
    )
    user_context = UserContextUpdater(store=store, clock=clock, llm=llm, extractor=reader)
    lifecycle = Lifecycle(store=store, embedder=embedder, clock=clock, policy=policy, llm=llm, buffer=opened)
    queue = WorkQueue(
        store=store,
        clock=clock,
        run=_job_runner(learning, lifecycle, conversation, clock),
        retention=timedelta(days=settings.job_retention_days),
    )
    return Layers(
        semantic=semantic,
        profiles=profiles,
        entities=entities,
        procedures=procedures,
        learning=learning,
        conversation=conversation,
        user_context=user_context,
        context=ContextAssembler(semantic=semantic, conversation=conversation, procedures=procedures),
        lifecycle=lifecycle,
        queue=queue,
        owns_buffer=buffer is None or isinstance(buffer, str),
    )


def _job_runner(learning: LearningMemory, lifecycle: Lifecycle, conversation: Conversation, clock: Clock) -> Job:
    """What the durable queue runs: learning from messages, a user's periodic upkeep, a session's fold
    (each job idempotent: see `work_queue`)."""

    def run(kind: str, scope: Scope, payload: list[dict[str, Any]], progress: JobProgress) -> None:
        if kind == LEARN:
            learning.learn(scope, to_messages(payload, clock()), progress=progress)
        elif kind == MAINTAIN:
            lifecycle.run_due_upkeep(scope.user_id, job_id=progress.job_id)
        elif kind == FOLD:
            conversation.fold_from_log(scope)

    return run
