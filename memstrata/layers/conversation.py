"""The conversation layers: session buffer, durable episode log, rolling summary, session end.

Every message is written twice: to the **episode log** (an EPISODE memory in the store, with the
session in its scope and the message time as `created_at`: durable and searchable) and to the
session **buffer** (the last turns, in-process or Redis). When the buffer holds more than
`window_size` turns, the oldest `summary_threshold` are folded into the session's **rolling
summary** together with the previous summary (classic summary-buffer semantics: with 10 and 8,
the 11th turn folds 8 and leaves 3). The summary and its fold marker live in the store
(namespace SESSION, key = session id), so they outlive the buffer and the process.

The buffer is a cache of "the session's episodes after the fold marker": when it has lost a session
(TTL, restart) the turns are rebuilt from the episode log. A session id is unique per user.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

from .. import namespaces
from ..buffer import Buffer, Turn
from ..buffer.keyed_locks import KeyedLocks
from ..core.retrieval import CONTEXT_TURNS, context_text
from ..core.summarize import MAX_CHARS, MAX_LINES, summarize_extractive
from ..errors import BufferUnavailable, InvalidInput, LLMOutputError, ProviderError
from ..llm.base import LLMClient
from ..llm.whole import complete_whole
from ..messages import MessageLike, to_messages
from ..models import MemoryKind, MemoryRecord, Scope, validate_text
from ..prompts.summarize import build_summary_messages, parse_summary, summary_sources
from ..storage.base import Item, ItemRead, MemoryFilter, Store
from ..storage.fence import carry_fences, expected_generation, fenced, generation_of
from .semantic import NewMemory, SemanticMemory

log = logging.getLogger(__name__)

MAX_TRACKED_SESSIONS = 10_000
"""Sessions whose last queued fold one `Conversation` remembers (oldest forgotten first)."""


def fold_is_due(before: int, after: int, since_queued: int, *, window_size: int, summary_threshold: int) -> bool:
    """Whether an append that took a session's buffered window from `before` to `after` turns queues its fold.

    Once, when the window first overflows (one pending fold a session); and again whenever the window is
    still over its size after another `summary_threshold` turns since the last queued fold, so a fold that
    failed for good (a summary refused on every attempt) is queued anew instead of never again."""
    if after <= window_size:
        return False
    return before <= window_size or since_queued >= summary_threshold


Clock = Callable[[], datetime]

_PAGE = 500
BUFFER_RETRY_SECONDS = 5.0
"""With `fallback`, how long the buffer is skipped after a failure before it is tried again."""
T = TypeVar("T")
FOLD = "fold"
"""The work-queue job kind of a session's queued summary fold (`Conversation.fold_from_log`)."""


# -- summarizers -------------------------------------------------------------------------------
@runtime_checkable
class Summarizer(Protocol):
    """Folds turns into a previous summary (None when there is none yet)."""

    name: str

    def summarize(self, previous: str | None, turns: Sequence[Turn]) -> str: ...


class ExtractiveSummarizer:
    """Offline default: the most salient sentences, dated, bounded (see `core/summarize.py`)."""

    name = "extractive"

    def __init__(self, *, max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES) -> None:
        self.max_chars = max_chars
        self.max_lines = max_lines

    def summarize(self, previous: str | None, turns: Sequence[Turn]) -> str:
        return summarize_extractive(previous, turns, max_chars=self.max_chars, max_lines=self.max_lines)


class LLMSummarizer:
    """Abstractive rolling summary with an LLM (`prompts/summarize.py`), dated by `clock`.

    The answer is asked for whole (`llm.whole.complete_whole`: one cut off at `max_tokens` is asked
    again once with a larger budget) and checked (`prompts.free_text.usable_text`: a preamble and
    closing chatter are removed; an empty answer, a refusal, or one that is not a summary of the
    previous summary and the turns is refused). A refused answer raises `LLMOutputError`
    (`TruncatedAnswer` when it was cut off twice): the fold stores nothing, so the session's summary
    keeps its previous value and the turns stay unfolded until a later fold succeeds. When the
    endpoint fails (`ProviderError`) the fold uses `fallback` (extractive by default) and logs a
    warning, so a flaky endpoint never blocks a conversation; `fallback=None` raises.
    """

    name = "llm"

    def __init__(
        self, llm: LLMClient, *, clock: Clock, fallback: Summarizer | None = None, max_tokens: int = 300
    ) -> None:
        self.llm = llm
        self.clock = clock
        self.fallback = fallback if fallback is not None else ExtractiveSummarizer()
        self.max_tokens = max_tokens
        self.failures = 0
        """Folds whose answer was refused or whose endpoint failed."""

    def summarize(self, previous: str | None, turns: Sequence[Turn]) -> str:
        messages = build_summary_messages(previous, turns, today=self.clock().date())
        try:
            response = complete_whole(self.llm, messages, max_tokens=self.max_tokens)
            return parse_summary(response.text, sources=summary_sources(previous, turns))
        except LLMOutputError:
            self.failures += 1
            raise
        except ProviderError as exc:
            self.failures += 1
            if self.fallback is None:
                raise
            log.warning("LLM summary failed (%s); folding with the %s summarizer", exc, self.fallback.name)
            return self.fallback.summarize(previous, turns)


# -- session state -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SessionState:
    """What the store keeps about a session (namespace SESSION, key = session id)."""

    summary: str = ""
    folded: int = 0
    last_folded_id: str | None = None
    last_folded_at: datetime | None = None
    summarizer: str | None = None
    updated_at: datetime | None = None
    ended_at: datetime | None = None
    ended_through_id: str | None = None

    def to_value(self) -> dict[str, Any]:
        def iso(value: datetime | None) -> str | None:
            return None if value is None else value.isoformat()

        return {
            "summary": self.summary,
            "folded": self.folded,
            "last_folded_id": self.last_folded_id,
            "last_folded_at": iso(self.last_folded_at),
            "summarizer": self.summarizer,
            "updated_at": iso(self.updated_at),
            "ended_at": iso(self.ended_at),
            "ended_through_id": self.ended_through_id,
        }

    @classmethod
    def from_value(cls, value: Mapping[str, Any]) -> SessionState:
        def when(key: str) -> datetime | None:
            raw = value.get(key)
            return datetime.fromisoformat(raw) if isinstance(raw, str) and raw else None

        return cls(
            summary=str(value.get("summary") or ""),
            folded=int(value.get("folded") or 0),
            last_folded_id=value.get("last_folded_id"),
            last_folded_at=when("last_folded_at"),
            summarizer=value.get("summarizer"),
            updated_at=when("updated_at"),
            ended_at=when("ended_at"),
            ended_through_id=value.get("ended_through_id"),
        )


def state_read(scope: Scope) -> ItemRead:
    """The read of the session's state item (for `Store.read_many`)."""
    return ItemRead(namespaces.SESSION, scope.require_session())


def state_of(item: Item | None) -> SessionState:
    """The session state its item (`state_read`) holds; a fresh one before the first write."""
    return SessionState() if item is None else SessionState.from_value(item.value)


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """A finished session as the user-context update sees it."""

    scope: Scope
    turns: tuple[Turn, ...]
    """The session's messages not yet processed by an earlier `end_session`, oldest first."""
    summary: str
    recent: tuple[Turn, ...]
    """The turns not folded into `summary`."""


def turn_from_record(record: MemoryRecord) -> Turn:
    meta = record.metadata
    return Turn(
        role=str(meta.get("role") or "user"),
        content=record.content,
        at=record.created_at,
        id=record.id,
        speaker=meta.get("speaker"),
    )


def _context_line(content: str, speaker: str | None) -> str:
    return f"{speaker}: {content}" if speaker else content


class Conversation:
    """Messages, the session buffer, rolling summaries and session ends, for one store."""

    def __init__(
        self,
        *,
        store: Store,
        semantic: SemanticMemory,
        buffer: Buffer,
        clock: Clock,
        summarizer: Summarizer | None = None,
        window_size: int = 10,
        summary_threshold: int = 8,
        fallback: bool = False,
        fold_later: Callable[[Scope], object] | None = None,
        fold_waiting: Callable[[Scope, object], bool] | None = None,
    ) -> None:
        """`fallback=True`: when the buffer fails, log a warning and serve turns from the episode log
        (nothing is lost: every message is in the log first). Otherwise raise `BufferUnavailable`.

        `fold_later(scope)`: queue the session's summary fold instead of folding on the conversation
        path (for a slow summarizer, such as an LLM); the queued job calls `fold_from_log`.
        `fold_waiting(scope, job)`: whether the fold job `fold_later` returned still waits to run (an
        overdue fold is queued again only when it does not)."""
        if not isinstance(window_size, int) or window_size < 1:
            raise InvalidInput(f"window_size must be a positive integer, got {window_size!r}")
        if not isinstance(summary_threshold, int) or not 1 <= summary_threshold <= window_size:
            raise InvalidInput(
                f"summary_threshold must be between 1 and window_size ({window_size}), got {summary_threshold!r}"
            )
        self.store = store
        self.semantic = semantic
        self.buffer = buffer
        self.clock = clock
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self.window_size = window_size
        self.summary_threshold = summary_threshold
        self.fallback = fallback
        self.fold_later = fold_later
        self._local_locks = KeyedLocks()
        self._locks_guard = threading.Lock()
        self._stale: set[tuple[str, str]] = set()
        self._down_until = 0.0
        self._executor: ThreadPoolExecutor | None = None
        self._generations: dict[str, int] = {}
        self.fold_waiting = fold_waiting
        self._folds: dict[tuple[str, str], tuple[int, object]] = {}
        """Per session: turns appended since its last queued fold, and that fold's job id."""

    # -- writes ------------------------------------------------------------------------------
    def add_message(
        self,
        scope: Scope,
        role: str,
        content: str,
        *,
        at: datetime | str | None = None,
        speaker: str | None = None,
    ) -> Turn:
        """Append one message to the session (episode log, then buffer; folds when the window overflows)."""
        return self.add_messages(scope, [{"role": role, "content": content, "at": at, "speaker": speaker}])[0]

    @fenced
    def add_messages(self, scope: Scope, messages: Sequence[MessageLike]) -> list[Turn]:
        """Append messages in order: one embedding batch and one transaction for the episode log."""
        scope.require_session()
        if not messages:
            return []
        now = self.clock()
        parsed = [(m.role, validate_text(m.content), m.at, m.speaker) for m in to_messages(messages, now)]
        # each episode's keyword context: the turns just before it in the session (see core/retrieval.py)
        previous = [_context_line(t.content, t.speaker) for t in self.window(scope)[-CONTEXT_TURNS:]]
        items = []
        for role, content, at, speaker in parsed:
            metadata: dict[str, Any] = {"role": role} | ({"speaker": speaker} if speaker else {})
            items.append(
                NewMemory(
                    content=content,
                    kind=MemoryKind.EPISODE,
                    metadata=metadata,
                    created_at=at,
                    scope=scope,
                    context=context_text(previous),
                )
            )
            previous.append(_context_line(content, speaker))
        records = self.semantic.add_many(scope, items, dedupe=False)
        turns = [turn_from_record(r) for r in records]
        window = self._append(scope, turns)
        if self.fold_later is not None:
            self._queue_fold_if_due(scope, window, len(turns))
        elif window is None or len(window) > self.window_size:
            self._fold(scope)
        return turns

    def _queue_fold_if_due(self, scope: Scope, window: list[Turn] | None, added: int) -> None:
        """Queue the session's fold when `fold_is_due`; an overdue fold is queued again only when the one
        queued before (remembered in this process) no longer waits, so a session has one pending fold."""
        assert self.fold_later is not None
        key = (scope.user_id, scope.require_session())
        with self._locks_guard:
            since, queued = self._folds.pop(key, (0, None))
        since += added
        due = window is None or fold_is_due(
            len(window) - added,
            len(window),
            since,
            window_size=self.window_size,
            summary_threshold=self.summary_threshold,
        )
        overdue = window is not None and len(window) - added > self.window_size
        if due and overdue and queued is not None and self.fold_waiting is not None:
            due = not self.fold_waiting(scope, queued)
            since = 0 if not due else since
        if due:
            queued, since = self.fold_later(scope), 0
        with self._locks_guard:
            self._folds[key] = (since, queued)
            while len(self._folds) > MAX_TRACKED_SESSIONS:
                self._folds.pop(next(iter(self._folds)))

    # -- buffer health -----------------------------------------------------------------------
    def _buffer_usable(self) -> bool:
        """False for a while after a failure when `fallback` is on: the log serves without waiting on
        a dead server each call."""
        return not self.fallback or time.monotonic() >= self._down_until

    def _outage(self, scope: Scope, exc: BufferUnavailable) -> None:
        """Note a buffer failure: the session's buffered turns are now suspect (rebuilt on the next
        successful access); in fallback mode, log once and skip the buffer for a few seconds."""
        with self._locks_guard:
            self._stale.add((scope.user_id, scope.require_session()))
        if not self.fallback:
            return
        if time.monotonic() >= self._down_until:
            log.warning("%s; serving session turns from the episode log", exc)
        self._down_until = time.monotonic() + BUFFER_RETRY_SECONDS

    def _is_stale(self, scope: Scope) -> bool:
        with self._locks_guard:
            return (scope.user_id, scope.require_session()) in self._stale

    def _refresh(self, scope: Scope, current: list[Turn] | None) -> list[Turn]:
        """Make the buffer hold the session's unfolded turns from the log; return them."""
        rebuilt = self.unfolded_from_log(scope)
        if current is None or [t.id for t in rebuilt] != [t.id for t in current]:
            self.buffer.replace(scope, rebuilt)
        with self._locks_guard:
            self._stale.discard((scope.user_id, scope.require_session()))
        return rebuilt

    def _append(self, scope: Scope, turns: list[Turn]) -> list[Turn] | None:
        """Append to the buffer (rebuilding a lost or suspect session from the log); None when the
        buffer failed and `fallback` is on."""
        if not self._buffer_usable():
            self._outage(scope, BufferUnavailable(f"buffer at {self.buffer.url} recently failed"))
            return None
        try:
            result = self.buffer.append(scope, turns, max_turns=self.window_size + self.summary_threshold + len(turns))
            if result.existed and not self._is_stale(scope):
                return result.turns
            return self._refresh(scope, result.turns)
        except BufferUnavailable as exc:
            self._outage(scope, exc)
            if not self.fallback:
                raise BufferUnavailable(
                    f"{exc}. The {len(turns)} message(s) were saved to the episode log; the recent turns "
                    "will be rebuilt from it when the buffer is back (or use fallback=episodes)"
                ) from exc
            return None

    # -- folding -----------------------------------------------------------------------------
    @contextmanager
    def _local_lock(self, scope: Scope) -> Iterator[bool]:
        with self._local_locks.try_acquire((scope.user_id, scope.require_session())) as acquired:
            yield acquired

    @contextmanager
    def _fold_lock(self, scope: Scope) -> Iterator[bool]:
        """The buffer's session lock (shared by processes), or a local one while the buffer is down."""
        stack = ExitStack()
        held: bool | None = None
        if self._buffer_usable():
            try:
                held = stack.enter_context(self.buffer.fold_lock(scope))
            except BufferUnavailable as exc:
                if not self.fallback:
                    raise
                self._outage(scope, exc)
        if held is None:
            held = stack.enter_context(self._local_lock(scope))
        try:
            yield held
        finally:
            try:
                stack.close()
            except BufferUnavailable as exc:
                if not self.fallback:
                    raise
                self._outage(scope, exc)

    def _fold(self, scope: Scope) -> None:
        """Fold the oldest `summary_threshold` turns of the buffer into the summary while the window
        overflows. Runs under the session's fold lock; another process holding it is folding already.
        """
        with self._fold_lock(scope) as held:
            if not held:
                return
            state = self.state(scope)
            window = self.window(scope)
            ids = [t.id for t in window]
            if state.last_folded_id in ids:  # a fold whose buffer trim did not happen (crash): finish it
                self._trim(scope, state.last_folded_id)
                window = window[ids.index(state.last_folded_id) + 1 :]
            try:
                self._fold_window(scope, state, window)
            except LLMOutputError as exc:  # the message is saved; its fold is retried on the next one
                log.warning("session summary not updated, the turns stay unfolded until a later fold: %s", exc)

    @fenced
    def fold_from_log(self, scope: Scope) -> int:
        """The queued fold: fold the session's unfolded turns, read from the episode log (so turns the
        buffer's cap dropped while the job waited are summarized too), until at most `window_size` are
        left; return how many were folded. A session another worker is folding is left to it.

        A refused summary (`LLMOutputError`) is raised after the chunks before it are saved: the
        job fails with it and the queue runs it again later (see `work_queue`)."""
        with self._fold_lock(scope) as held:
            if not held:
                return 0
            state = self.state(scope)
            # The buffer holds the newest turns: trimming through a folded turn it still holds drops
            # every older one; a folded turn it no longer holds means it holds only newer ones.
            return self._fold_window(scope, state, self.unfolded_from_log(scope, state))

    def _fold_window(self, scope: Scope, state: SessionState, window: list[Turn]) -> int:
        """Fold `window` (the unfolded turns, oldest first) chunk by chunk down to `window_size`; each
        chunk's summary is saved before the buffer is trimmed through the chunk's last turn."""
        folded = 0
        while len(window) > self.window_size:
            chunk = window[: self.summary_threshold]
            summary = self.summarizer.summarize(state.summary or None, chunk)
            state = replace(
                state,
                summary=summary,
                folded=state.folded + len(chunk),
                last_folded_id=chunk[-1].id,
                last_folded_at=chunk[-1].at,
                summarizer=self.summarizer.name,
                updated_at=self.clock(),
            )
            self._save_state(scope, state)
            self._trim(scope, chunk[-1].id)
            window = window[len(chunk) :]
            folded += len(chunk)
        return folded

    def _trim(self, scope: Scope, turn_id: str | None) -> None:
        if turn_id is None or not self._buffer_usable():
            return
        try:
            self.buffer.trim_through(scope, turn_id)
        except BufferUnavailable as exc:
            self._outage(scope, exc)
            if not self.fallback:
                raise

    # -- reads -------------------------------------------------------------------------------
    def state(self, scope: Scope) -> SessionState:
        read = state_read(scope)
        return state_of(self.store.get_item(scope.user_id, read.namespace, read.key))

    def _save_state(self, scope: Scope, state: SessionState) -> None:
        self.store.put_item(scope.user_id, namespaces.SESSION, scope.require_session(), state.to_value())

    def summary(self, scope: Scope) -> str:
        """The session's rolling summary ("" before the first fold)."""
        return self.state(scope).summary

    def window(self, scope: Scope, *, generation: int | None = None) -> list[Turn]:
        """Every unfolded turn of the session, oldest first (normally at most `window_size`). `generation`:
        the user's erasure generation when the caller read it already (`context()` reads it with its other
        reads), else it is read here."""
        if not self._buffer_usable():
            return self.unfolded_from_log(scope)
        try:
            self._drop_if_erased(scope.user_id, generation)
            window = self.buffer.window(scope)
            if window is not None and not self._is_stale(scope):
                return window
            return self._refresh(scope, window)
        except BufferUnavailable as exc:
            self._outage(scope, exc)
            if not self.fallback:
                raise
            return self.unfolded_from_log(scope)

    def _drop_if_erased(self, user_id: str, generation: int | None = None) -> None:
        """Drop the user's buffered turns when the user was erased since this process buffered them.

        An erasure clears the buffer of the process that runs it (and Redis, shared by all), but not
        the in-process buffer of another process: the erasure generation tells (storage/fence.py).
        The buffer is a cache of the episode log, so a dropped session is rebuilt from the log."""
        current = expected_generation(user_id)
        if current is None:
            current = generation_of(self.store, user_id) if generation is None else generation
        with self._locks_guard:
            seen = self._generations.setdefault(user_id, current)
            self._generations[user_id] = current
        if seen != current:
            self.buffer.clear_user(user_id)

    def recent_turns(self, scope: Scope, n: int | None = None, *, generation: int | None = None) -> list[Turn]:
        """The last `n` turns of the session (default `window_size`), oldest first (`generation`: as in
        `window`)."""
        n = self.window_size if n is None else n
        if not isinstance(n, int) or n < 0:
            raise InvalidInput(f"n must be a non-negative integer, got {n!r}")
        window = self.window(scope, generation=generation)
        return window[max(0, len(window) - n) :]

    def session_episodes(self, scope: Scope, *, created_after: datetime | None = None) -> list[MemoryRecord]:
        """The session's episode records, oldest first (paged)."""
        where = MemoryFilter(
            kinds=(MemoryKind.EPISODE,), session_id=scope.require_session(), created_after=created_after
        )
        found: list[MemoryRecord] = []
        while True:
            page = self.store.list_memories(scope.user_id, where, limit=_PAGE, offset=len(found), newest_first=False)
            found.extend(page)
            if len(page) < _PAGE:
                return found

    def unfolded_from_log(self, scope: Scope, state: SessionState | None = None) -> list[Turn]:
        """The session's turns after the fold marker, rebuilt from the episode log."""
        state = state or self.state(scope)
        records = self.session_episodes(scope, created_after=state.last_folded_at)
        ids = [r.id for r in records]
        if state.last_folded_id in ids:
            records = records[ids.index(state.last_folded_id) + 1 :]
        return [turn_from_record(r) for r in records]

    # -- sessions ----------------------------------------------------------------------------
    def snapshot(self, scope: Scope) -> SessionSnapshot:
        """The session's unprocessed messages, summary and unfolded turns (store reads only)."""
        state = self.state(scope)
        turns = [turn_from_record(r) for r in self.session_episodes(scope)]
        ids = [t.id for t in turns]
        if state.ended_through_id in ids:
            turns = turns[ids.index(state.ended_through_id) + 1 :]
        recent = self.unfolded_from_log(scope, state)
        return SessionSnapshot(scope, tuple(turns), state.summary, tuple(recent))

    @fenced
    def end_session(
        self, scope: Scope, update: Callable[[SessionSnapshot], T], *, background: bool = False
    ) -> T | Future[T]:
        """End a session: snapshot it now, drop its buffered turns, then run `update(snapshot)` (the
        user-context update) here or, with `background=True`, on the layer's worker thread (a Future).

        The session is marked ended (up to the snapshot's last message) only after `update` succeeds,
        so a failed update can be retried by calling `end_session` again. The session can also resume:
        its recent turns are rebuilt from the episode log.
        """
        snapshot = self.snapshot(scope)
        if self._buffer_usable():
            try:
                self.buffer.clear_session(scope)
            except BufferUnavailable as exc:
                self._outage(scope, exc)
                if not self.fallback:
                    raise

        def run() -> T:
            result = update(snapshot)
            self._mark_ended(scope, snapshot)
            return result

        return self.submit(carry_fences(run)) if background else run()

    def _mark_ended(self, scope: Scope, snapshot: SessionSnapshot) -> None:
        state = self.state(scope)
        through = snapshot.turns[-1].id if snapshot.turns else state.ended_through_id
        self._save_state(scope, replace(state, ended_at=self.clock(), ended_through_id=through))

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run `fn` on the layer's background thread (one worker: updates of a user never race)."""
        with self._locks_guard:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstrata-session")
            return self._executor.submit(fn)

    @fenced
    def clear_session(self, scope: Scope) -> None:
        """Forget the buffered turns and the summary of a session. Its episodes stay in the log (and
        searchable), but recent turns restart empty: the fold marker moves to the last episode, so they
        are not rebuilt from the log."""
        self.buffer.clear_session(scope)
        episodes = self.session_episodes(scope)
        last = episodes[-1] if episodes else None
        state = SessionState(
            last_folded_id=last.id if last else None,
            last_folded_at=last.created_at if last else None,
            updated_at=self.clock(),
        )
        self.store.put_item(scope.user_id, namespaces.SESSION, scope.require_session(), state.to_value())

    def close(self, *, close_buffer: bool = True) -> None:
        """Wait for background work (session-end updates), then close the buffer."""
        with self._locks_guard:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        if close_buffer:
            self.buffer.close()


__all__ = [
    "FOLD",
    "Conversation",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "MessageLike",
    "SessionSnapshot",
    "SessionState",
    "Summarizer",
    "turn_from_record",
]
