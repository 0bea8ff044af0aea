"""`Memory`: the one front door. It composes the layers (built in `layers.wiring`) and holds no logic.

Every method takes the scope it acts on as the keyword `scope=` (a `Scope` or a user id string).
Slow periodic work (consolidation every N turns) is queued on the durable work queue, so
`add_message` does constant work; a worker (`start_worker`, or `memstrata serve`) or
`process_queue()` runs it.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, overload

from .api_guard import refuse_foreign_errors
from .buffer import Buffer, Turn
from .embedders.base import Embedder
from .embedders.openai_compat import OpenAICompatibleEmbedder
from .errors import InvalidInput
from .export_format import ExportDocument
from .extraction.base import Candidate, Extractor
from .filters import SearchFilter, as_filter
from .layers.clock import Clock
from .layers.context import DEFAULT_MAX_TOKENS, Context
from .layers.conversation import turn_from_record
from .layers.entities import Entity
from .layers.learning import LearnResult
from .layers.lifecycle import (
    ConsolidationOptions,
    ConsolidationReport,
    ErasureReceipt,
    ImportReport,
    LifecyclePolicy,
    MaintenanceReport,
    Progress,
    SweepReport,
    as_options,
)
from .layers.procedures import Procedure
from .layers.profile import ProfileFact
from .layers.semantic import NewMemory, Strategy
from .layers.wiring import Layers, build_layers
from .layers.work_queue import MAINTAIN, JobStatus, QueueStatus
from .llm.base import LLMClient
from .messages import MessageLike, message_dicts, to_messages
from .models import HistoryEvent, MemoryKind, MemoryRecord, Scope, ScopeLike, SearchHit, as_scope, utcnow
from .redacting import RedactingEmbedder, RedactingLLM, should_redact
from .settings import Settings
from .storage import Store, open_store
from .storage.fence import fence


@refuse_foreign_errors
class Memory:
    """Layered memory for agents.

    >>> memory = Memory(store="sqlite:///memories.db")       # doctest: +SKIP
    >>> memory.add("Alice prefers short answers", scope="alice", kind="preference")  # doctest: +SKIP
    >>> memory.search("how should I answer?", scope="alice")  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        store: Store | str | Path | None = None,
        embedder: Embedder | str | None = None,
        llm: LLMClient | str | None = None,
        buffer: Buffer | str | None = None,
        extractor: Extractor | None = None,
        policy: LifecyclePolicy | None = None,
        clock: Clock = utcnow,
        track_access: bool = True,
        settings: Settings | None = None,
    ) -> None:
        """Collaborators may be objects or spec strings; unset ones come from `settings` (MEMSTRATA_* env).

        `store`: a Store or `sqlite:///path` / `postgresql://...`; `embedder`: an Embedder or `static`,
        `e5`, `openai:MODEL`...; `llm`: an LLMClient or `openai:MODEL`, `ollama:MODEL`, `anthropic:MODEL`
        (None: fully offline); `buffer`: a Buffer or `memory://` / `redis://...`; `extractor`: what
        `learn` uses (default: rules, or the LLM extractor when an LLM is set); `policy`: retention and
        consolidation (default: from settings); `clock`: what "now" is for every layer.
        """
        self._settings = settings or Settings()
        self._store: Store = (
            store
            if store is not None and not isinstance(store, str | Path)
            else open_store(store or self._settings.store, owner_url=self._settings.store_owner)
        )
        self._embedder = _resolve_embedder(embedder or self._settings.embedder, redact=self._settings.redact_pii)
        self._store.bind_embedder(self._embedder.name, self._embedder.dimensions)
        self._llm = _resolve_llm(llm if llm is not None else self._settings.llm, redact=self._settings.redact_pii)
        self._clock = clock
        self._layers: Layers = build_layers(
            store=self._store,
            embedder=self._embedder,
            clock=clock,
            settings=self._settings,
            policy=policy or LifecyclePolicy.from_settings(self._settings),
            buffer=buffer if buffer is not None else self._settings.buffer,
            llm=self._llm,
            extractor=extractor,
            track_access=track_access,
        )

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Memory:
        return cls(settings=settings or Settings())

    # -- collaborators (read-only) ---------------------------------------------------------------
    @property
    def store(self) -> Store:
        """The storage backend (for tools that keep their own rows in it, such as the server's keys)."""
        return self._store

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def llm(self) -> LLMClient | None:
        """The LLM every layer uses; None means fully offline."""
        return self._llm

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def policy(self) -> LifecyclePolicy:
        return self._layers.lifecycle.policy

    def close(self) -> None:
        """Stop the worker, wait for background session ends, then close buffer, LLM and store."""
        layers = self._layers
        layers.queue.stop()
        layers.conversation.close(close_buffer=layers.owns_buffer)
        if self._llm is not None:
            self._llm.close()
        layers.semantic.access.close()
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- semantic memory ---------------------------------------------------------------------------
    @overload
    def add(
        self,
        content: str,
        *,
        scope: ScopeLike,
        infer: Literal[False] = False,
        kind: MemoryKind | str = ...,
        metadata: Mapping[str, Any] | None = ...,
        importance: float = ...,
        source_ids: Sequence[str] = ...,
        expires_at: datetime | None = ...,
        pinned: bool = ...,
        created_at: datetime | None = ...,
    ) -> MemoryRecord: ...

    @overload
    def add(
        self,
        content: str | Sequence[MessageLike],
        *,
        scope: ScopeLike,
        infer: Literal[True],
        kind: MemoryKind | str = ...,
        metadata: Mapping[str, Any] | None = ...,
        importance: float = ...,
        source_ids: Sequence[str] = ...,
        expires_at: datetime | None = ...,
        pinned: bool = ...,
        created_at: datetime | None = ...,
    ) -> LearnResult: ...

    def add(
        self,
        content: str | Sequence[MessageLike],
        *,
        scope: ScopeLike,
        infer: bool = False,
        kind: MemoryKind | str = MemoryKind.FACT,
        metadata: Mapping[str, Any] | None = None,
        importance: float = 0.5,
        source_ids: Sequence[str] = (),
        expires_at: datetime | None = None,
        pinned: bool = False,
        created_at: datetime | None = None,
    ) -> MemoryRecord | LearnResult:
        """Store one memory verbatim (embedding + full text) and return it (or the identical existing one).

        Nothing is extracted from the text and no other memory is retired by it, exactly as with `add_many`
        of the same item: to have a statement supersede what it contradicts, use `learn`.
        With `infer=True`, `content` is one or more messages to learn from instead (`learn` itself).
        """
        if infer:
            return self.learn(content, scope=scope, source_ids=source_ids)
        if not isinstance(content, str):
            raise InvalidInput("add() stores text verbatim; pass infer=True to learn from a list of messages")
        item = NewMemory(
            content=content,
            kind=MemoryKind.parse(kind),
            metadata=metadata,
            importance=importance,
            source_ids=tuple(source_ids),
            expires_at=expires_at,
            pinned=pinned,
            created_at=created_at,
        )
        return self._layers.semantic.add(as_scope(scope), item)

    def add_many(
        self, items: Sequence[NewMemory | str | Mapping[str, Any]], *, scope: ScopeLike, dedupe: bool = True
    ) -> builtins.list[MemoryRecord]:
        """Store many memories (`NewMemory` items, plain strings, or dicts of `NewMemory` fields) verbatim, with
        one embedding batch and one transaction; each item is stored as `add` would store it."""
        return self._layers.semantic.add_many(as_scope(scope), items, dedupe=dedupe)

    def get(self, memory_id: str, *, scope: ScopeLike) -> MemoryRecord:
        return self._layers.semantic.get(as_scope(scope), memory_id)

    def list(
        self, *, scope: ScopeLike, filters: SearchFilter | None = None, limit: int = 100, offset: int = 0
    ) -> builtins.list[MemoryRecord]:
        """The scope's memories, newest first: by default the current ones (see `SearchFilter`)."""
        s = as_scope(scope)
        where = as_filter(filters).to_memory_filter(agent_id=s.agent_id, session_id=s.session_id, as_of=self._clock())
        self._layers.semantic.access.flush()
        return self._store.list_memories(s.user_id, where, limit=limit, offset=offset)

    def update(
        self,
        memory_id: str,
        *,
        scope: ScopeLike,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        expires_at: datetime | None = None,
        pinned: bool | None = None,
    ) -> MemoryRecord:
        return self._layers.semantic.update(
            as_scope(scope),
            memory_id,
            content=content,
            metadata=metadata,
            importance=importance,
            expires_at=expires_at,
            pinned=pinned,
        )

    def supersede(self, memory_id: str, content: str, *, scope: ScopeLike, reason: str = "") -> MemoryRecord:
        """Replace an outdated memory with a new one; the old one stays in history and for `as_of`."""
        return self._layers.semantic.supersede(as_scope(scope), memory_id, content, reason=reason)

    def forget(self, memory_id: str, *, scope: ScopeLike) -> bool:
        return self._layers.semantic.forget(as_scope(scope), memory_id)

    def history(self, memory_id: str, *, scope: ScopeLike) -> builtins.list[HistoryEvent]:
        return self._layers.semantic.history(as_scope(scope), memory_id)

    def search(
        self,
        query: str,
        *,
        scope: ScopeLike,
        k: int = 10,
        strategy: Strategy | str = Strategy.HYBRID,
        threshold: float | None = None,
        filters: SearchFilter | None = None,
        decay_rate: float = 0.01,
    ) -> builtins.list[SearchHit]:
        """Search the scope's memories (by default the current ones, see `SearchFilter`). Every hit
        carries its component scores."""
        where = as_filter(filters).to_memory_filter()
        return self._layers.semantic.search(
            as_scope(scope),
            query,
            k=k,
            strategy=Strategy.parse(strategy),
            threshold=threshold,
            where=where,
            decay_rate=decay_rate,
        )

    # -- profile, entities, procedures -------------------------------------------------------------
    def set_fact(
        self, category: str, key: str, value: str, *, scope: ScopeLike, source: str | None = None
    ) -> ProfileFact:
        """Upsert a profile fact; the value it replaces is kept in the fact's `previous` list."""
        return self._layers.profiles.set_fact(as_scope(scope).user_id, category, key, value, source=source)

    def facts(self, *, scope: ScopeLike, category: str | None = None) -> builtins.list[ProfileFact]:
        return self._layers.profiles.facts(as_scope(scope).user_id, category)

    def delete_fact(self, category: str, key: str, *, scope: ScopeLike) -> bool:
        return self._layers.profiles.delete_fact(as_scope(scope).user_id, category, key)

    def upsert_entity(
        self,
        name: str,
        *,
        scope: ScopeLike,
        type: str = "other",
        summary: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        aliases: Sequence[str] = (),
        memory_id: str | None = None,
    ) -> Entity:
        """Create the entity or merge into it (by name or alias): attributes and aliases merged, the
        newest non-empty summary kept, `memory_id` linked."""
        return self._layers.entities.upsert(
            as_scope(scope).user_id,
            name,
            type=type,
            summary=summary,
            attributes=attributes,
            aliases=aliases,
            memory_id=memory_id,
        )

    def entities(self, *, scope: ScopeLike) -> builtins.list[Entity]:
        return self._layers.entities.all(as_scope(scope).user_id)

    def entity(self, name: str, *, scope: ScopeLike) -> Entity:
        return self._layers.entities.get(as_scope(scope).user_id, name)

    def add_procedure(
        self,
        task: str,
        *,
        scope: ScopeLike,
        instruction: str | None = None,
        example_input: str | None = None,
        example_output: str | None = None,
        agent_wide: bool = False,
    ) -> Procedure:
        """Store an instruction or a few-shot example for a task (per user/agent, or agent-wide)."""
        return self._layers.procedures.add(
            as_scope(scope),
            task,
            instruction=instruction,
            example_input=example_input,
            example_output=example_output,
            agent_wide=agent_wide,
        )

    def procedures(self, task: str, *, scope: ScopeLike, k: int = 3) -> builtins.list[Procedure]:
        return self._layers.procedures.for_task(as_scope(scope), task, k=k)

    # -- learning and the background queue ---------------------------------------------------------
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
        parsed = to_messages(messages, self._clock())
        return self._layers.learning.learn(as_scope(scope), parsed, known_name=known_name, source_ids=source_ids)

    def extract(
        self, messages: Sequence[MessageLike] | MessageLike, *, known_name: str | None = None
    ) -> builtins.list[Candidate]:
        """What `learn` would consider storing from these messages, without storing anything."""
        return self._layers.learning.extractor.extract(to_messages(messages, self._clock()), known_name=known_name)

    def learn_later(self, messages: Sequence[MessageLike] | MessageLike, *, scope: ScopeLike) -> str:
        """Queue messages for background learning (durable); returns the job id. See `queue_status`."""
        parsed = to_messages(messages, self._clock())
        return self._layers.queue.enqueue(as_scope(scope), message_dicts(parsed))

    def process_queue(self, *, limit: int = 100) -> int:
        """Run pending background jobs now; returns how many ran."""
        return self._layers.queue.process(limit=limit)

    def queue_status(self, *, users: Sequence[str] | None = None) -> QueueStatus:
        """Job counts and failures of every user, or of `users` (store user ids)."""
        return self._layers.queue.status(user_ids=users)

    def job_status(self, job_id: str, *, scope: ScopeLike) -> JobStatus:
        """One queued job of the scope's user (`learn_later`'s id): pending, done, failed, or `expired` once
        its record was deleted after `MEMSTRATA_JOB_RETENTION_DAYS`; `NotFound` for an unknown id."""
        return self._layers.queue.job(as_scope(scope).user_id, job_id)

    def start_worker(self, *, interval: float = 1.0) -> None:
        """Process the queue every `interval` seconds in a daemon thread until `stop_worker`/`close`."""
        self._layers.queue.start(interval=interval)

    def stop_worker(self) -> None:
        self._layers.queue.stop()

    # -- conversations -----------------------------------------------------------------------------
    def add_message(
        self,
        role: str,
        content: str,
        *,
        scope: ScopeLike,
        at: datetime | str | None = None,
        speaker: str | None = None,
    ) -> Turn:
        """Append a message to a session (the scope needs a session_id): to the episode log (searchable,
        with its time) and the session buffer; folds the oldest turns into the summary when the buffer
        exceeds its window. Consolidation due by the turn policy is queued, never run here."""
        s = as_scope(scope)
        with fence(self._store, s.user_id):  # one unit of work: the message and its turn count
            turn = self._layers.conversation.add_message(s, role, content, at=at, speaker=speaker)
            self._count_turns(s, 1)
        return turn

    def add_messages(self, messages: Sequence[MessageLike], *, scope: ScopeLike) -> builtins.list[Turn]:
        """Append messages in order (`{"role", "content", "at"?, "speaker"?}` dicts or `(role, content)`
        pairs) with one embedding batch and one transaction."""
        s = as_scope(scope)
        with fence(self._store, s.user_id):
            turns = self._layers.conversation.add_messages(s, messages)
            self._count_turns(s, len(turns))
        return turns

    def _count_turns(self, scope: Scope, turns: int) -> None:
        if self._layers.lifecycle.count_turns(scope.user_id, turns):
            self._layers.queue.enqueue(scope.user_only(), kind=MAINTAIN)

    def recent_turns(self, n: int | None = None, *, scope: ScopeLike) -> builtins.list[Turn]:
        """The session's last `n` turns (default: the window size), oldest first."""
        return self._layers.conversation.recent_turns(as_scope(scope), n)

    def session_messages(self, *, scope: ScopeLike) -> builtins.list[Turn]:
        """Every message of the session from the episode log (folded ones too), oldest first."""
        conversation = self._layers.conversation
        return [turn_from_record(r) for r in conversation.session_episodes(as_scope(scope))]

    def session_summary(self, *, scope: ScopeLike) -> str:
        """The session's rolling summary of its older turns ("" before the first fold)."""
        return self._layers.conversation.summary(as_scope(scope))

    def clear_session(self, *, scope: ScopeLike) -> None:
        """Forget a session's buffered turns and summary (its episodes stay searchable)."""
        self._layers.conversation.clear_session(as_scope(scope))

    @overload
    def end_session(self, *, scope: ScopeLike, background: Literal[False] = False) -> dict[str, Any]: ...

    @overload
    def end_session(self, *, scope: ScopeLike, background: Literal[True]) -> Future[dict[str, Any]]: ...

    @overload
    def end_session(self, *, scope: ScopeLike, background: bool) -> dict[str, Any] | Future[dict[str, Any]]: ...

    def end_session(self, *, scope: ScopeLike, background: bool = False) -> dict[str, Any] | Future[dict[str, Any]]:
        """Close a session and update the user context object (facts, preferences, last topics, open
        items, last session). Adds no latency to turns: it runs only here, and with `background=True`
        on a worker thread (returns a Future). If the update fails the previous context stays intact
        and the error is raised (or set on the Future)."""
        layers = self._layers
        return layers.conversation.end_session(as_scope(scope), layers.user_context.update, background=background)

    def user_context(self, *, scope: ScopeLike) -> dict[str, Any]:
        """The user's context object: facts, preferences, last_topics, open_items, last_session."""
        return self._layers.user_context.get(as_scope(scope).user_id)

    def context(
        self,
        query: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        *,
        scope: ScopeLike,
        include: Sequence[str] | None = None,
    ) -> Context:
        """One prompt block from every layer within `max_tokens` (profile, relevant memories with dates,
        entities, procedures, pending items, last topics, session summary, recent turns), with its parts
        and their token counts. Never exceeds the budget; lower-priority parts give way first."""
        return self._layers.context.build(as_scope(scope), query, max_tokens=max_tokens, include=include)

    # -- lifecycle ---------------------------------------------------------------------------------
    def consolidate(
        self, *, scope: ScopeLike, options: ConsolidationOptions | None = None, progress: Progress | None = None
    ) -> ConsolidationReport:
        """Compress the user's old memories into "[Compressed memory] …" summaries, as `options` say
        (`ConsolidationOptions`; by default memories older than the policy's 30 days, when at least 10
        qualify). `options.dry_run` only reports the groups it would compress. `progress(done, total)`
        is told after each compressed group.

        Pinned memories, memories a profile fact points to, preferences, tasks and procedures are
        never compressed. Originals stay in history and for `as_of`; summaries keep their provenance.
        """
        user_id = as_scope(scope).user_id
        return self._layers.lifecycle.consolidate(user_id, as_options(options), progress)

    def maintain(self, *, users: Sequence[str] | None = None) -> MaintenanceReport:
        """Scheduled upkeep of all (or the given) users: sweep, then consolidate where due."""
        return self._layers.lifecycle.maintain(users)

    def sweep(self, *, scope: ScopeLike | None = None) -> SweepReport:
        """Delete what expired (per memory `expires_at`, per-kind TTL, episode and session retention),
        for one user or every user."""
        return self._layers.lifecycle.sweep(None if scope is None else as_scope(scope).user_id)

    def erase_user(self, *, scope: ScopeLike) -> ErasureReceipt:
        """GDPR Art. 17: remove everything about the user in every layer and backend, in one call,
        and return the stored, content-free receipt."""
        self._layers.semantic.access.flush()
        user_id = as_scope(scope).user_id
        receipt = self._layers.lifecycle.erase_user(user_id)
        self._layers.semantic.forget_user(user_id)
        from .server.audit import record_erasure  # the server's audit log, if this store holds one

        record_erasure(self.store, user_id, receipt, operation="Memory.erase_user")
        return receipt

    def erasure_receipt(self, request_id: str, *, scope: ScopeLike | None = None) -> ErasureReceipt | None:
        """A stored erasure receipt; with `scope`, only if it is that user's (checked by hash)."""
        receipt = self._layers.lifecycle.receipt(request_id)
        if receipt is None or scope is None:
            return receipt
        return receipt if receipt.matches(as_scope(scope).user_id, secret=self.policy.receipt_secret) else None

    def export_user(self, *, scope: ScopeLike) -> ExportDocument:
        """GDPR Art. 15/20: everything stored about the user as one versioned JSON document."""
        self._layers.semantic.access.flush()
        return self._layers.lifecycle.export_user(as_scope(scope).user_id)

    def import_user(
        self,
        document: ExportDocument | dict[str, Any] | str | bytes,
        *,
        scope: ScopeLike | None = None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Restore an export into this store (re-embedded with this store's embedder); idempotent.
        `scope` imports into that user instead of the document's own; `progress(done, total)` is told
        after each embedded batch of memories."""
        user_id = None if scope is None else as_scope(scope).user_id
        return self._layers.lifecycle.import_user(document, user_id=user_id, progress=progress)


def _resolve_embedder(spec: Embedder | str, *, redact: bool | None) -> Embedder:
    if isinstance(spec, str):
        from .embedders.registry import resolve_embedder

        spec = resolve_embedder(spec)
    if isinstance(spec, OpenAICompatibleEmbedder) and should_redact(redact, spec):
        return RedactingEmbedder(spec)  # local embedders see the text anyway
    return spec


def _resolve_llm(spec: LLMClient | str | None, *, redact: bool | None) -> LLMClient | None:
    """The LLM, wrapped to redact PII when `redact` says so (unset: when the LLM is on another machine)."""
    if isinstance(spec, str):
        from .llm.registry import resolve_llm

        spec = resolve_llm(spec)
    if spec is not None and not isinstance(spec, RedactingLLM) and should_redact(redact, spec):
        return RedactingLLM(spec)
    return spec
