"""Consolidation: compress old memories into "[Compressed memory] …" summaries, keeping provenance.

What is compressed and how it is grouped is decided by the pure `core.compress` (current, unpinned
memories of the chosen kinds older than the cutoff, not behind a profile fact; grouped by agent, kind
and topic, or calendar window). The summary keeps the originals' text as keyword-only context, so a
word of any of them still finds it. Each group becomes one SUMMARY memory whose `source_ids` are the union of the
originals' and whose `metadata["replaces"]` lists them. The originals get `valid_to` and
`superseded_by` (search skips them; `as_of` before the consolidation still finds them) and a COMPRESS
history event.

Nothing is retired unless its replacement is whole. With an LLM, the summary is asked for whole
(`llm.whole.complete_whole`: an answer cut off at its token limit is asked again once with a larger
budget) and checked (`prompts.free_text`); a refused answer (cut off twice, empty, a refusal, not a
summary of the group) writes nothing for its group: the originals stay current, the group is listed
in `ConsolidationReport.refused`, and the next run asks again. Each group is one transaction (one
`save`: the summary with its vector, the retired originals and their history events), so a group is
either compressed whole or untouched. When a group fails (the endpoint, the embedder, the store) the
run stops there and raises `ConsolidationIncomplete`, whose message and `report` say how many groups
were compressed before it (they stay compressed) and which group failed (it and the later ones are
untouched); running again continues with what is left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, StrictBool, StrictFloat, StrictInt

from ... import namespaces
from ...core.compress import (
    COMPRESSED_PREFIX,
    Group,
    Window,
    eligible,
    extractive_summary,
    merged_source_ids,
    older_than,
    plan_groups,
    summary_id,
)
from ...embedders.base import Embedder
from ...errors import BackendError, ConsolidationIncomplete, InvalidInput, LLMOutputError
from ...filters import ValueObject
from ...llm.base import LLMClient
from ...llm.whole import complete_whole
from ...models import MAX_CONTENT_BYTES, EventType, MemoryKind, MemoryRecord, Scope, content_hash, new_event
from ...prompts.consolidate import build_consolidation_messages, consolidation_sources, parse_consolidation
from ...storage.base import MemoryFilter, Store
from ...storage.fence import fence, fenced
from ._paging import all_items, all_memories, strings_in
from .policy import LIFECYCLE, LifecyclePolicy
from .portability import Progress
from .turn_tally import TurnTally


def _days(value: object) -> object:
    """An age may be given as a timedelta; it is kept as a number of days."""
    return value / timedelta(days=1) if isinstance(value, timedelta) else value


def _listed(value: object) -> object:
    return [value] if isinstance(value, str) else value


class ConsolidationOptions(ValueObject):
    """What one consolidation run compresses and how. Unset fields take the lifecycle policy's values.

    Built once by the caller (`Memory.consolidate(options=...)`, the CLI from its flags, the REST body,
    which is this model) and passed unchanged down to the `Consolidator`.
    """

    older_than_days: Annotated[StrictFloat | None, BeforeValidator(_days)] = Field(
        default=None,
        ge=0,
        le=36500,
        allow_inf_nan=False,
        description="compress memories older than this many days (default: the policy's, 30)",
    )
    min_count: StrictInt | None = Field(
        default=None, ge=1, le=100_000, description="only when at least this many qualify (default: 10)"
    )
    kinds: Annotated[tuple[MemoryKind, ...] | None, BeforeValidator(_listed)] = Field(
        default=None, description="kinds to compress (default: the policy's)"
    )
    window: Window | None = Field(default=None, description="grouping: topic, day, week or month")
    use_llm: StrictBool | None = Field(
        default=None, description="summarize with the LLM (default: when one is configured; false: offline)"
    )
    dry_run: StrictBool = Field(default=False, description="report the groups, change nothing")


DEFAULT_OPTIONS = ConsolidationOptions()


def as_options(value: ConsolidationOptions | None) -> ConsolidationOptions:
    """`value`, or the defaults for None; anything else is `InvalidInput`."""
    if value is None:
        return DEFAULT_OPTIONS
    if not isinstance(value, ConsolidationOptions):
        raise InvalidInput(f"options must be ConsolidationOptions, got {type(value).__name__}")
    return value


STATE_KEY = "consolidation"
MANAGED_SOURCES = (namespaces.LANGGRAPH_SOURCE,)
"""`metadata["source"]` values of memories that other components own and consolidation leaves alone."""


@dataclass(frozen=True, slots=True)
class ConsolidationReport:
    user_id: str
    eligible: int
    """Memories that met the criteria (kind, age, current, unpinned, not behind a profile fact)."""
    compressed: int
    """Memories retired into summaries."""
    summaries: tuple[str, ...] = ()
    """The ids of the summaries written (dry runs: none)."""
    method: str = "none"
    """"extractive", "llm", "mixed" (some groups by each), or "none" (no summary written)."""
    skipped: str | None = None
    """Why nothing was compressed, when nothing was."""
    groups: tuple[dict[str, Any], ...] = ()
    """One entry per planned group: id, kind, period, agent_id, how many memories it replaces (dry runs too)."""
    refused: tuple[dict[str, Any], ...] = ()
    """Groups left as they were because the LLM's summary was refused: each its `groups` entry with
    `reason`. Their originals stay current; the next run asks again."""
    failed: dict[str, Any] | None = None
    """Only on the report of a `ConsolidationIncomplete`: the group that failed (its `groups` entry,
    with `position`, 1-based, and `error`). It and the groups after it are untouched."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What happened to one group: compressed (by `method`), or refused (with `reason`)."""

    method: str | None = None
    reason: str | None = None


class Consolidator:
    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        clock: Callable[[], datetime],
        policy: LifecyclePolicy,
        llm: Callable[[], LLMClient | None],
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.policy = policy
        self._llm = llm
        self._tally = TurnTally()

    @fenced
    def consolidate(
        self, user_id: str, options: ConsolidationOptions = DEFAULT_OPTIONS, progress: Progress | None = None
    ) -> ConsolidationReport:
        """See `Lifecycle.consolidate`; `progress(done, total)` is called after each compressed group."""
        policy = self.policy
        age = older_than(
            policy.consolidate_older_than_days if options.older_than_days is None else options.older_than_days
        )
        minimum = policy.consolidate_min_count if options.min_count is None else options.min_count
        chosen = options.kinds if options.kinds is not None else policy.consolidate_kinds
        if MemoryKind.SUMMARY in chosen:
            raise InvalidInput("summaries are not compressed again; leave 'summary' out of kinds")
        now = self.clock()
        cutoff = now - age
        candidates = all_memories(self.store, user_id, MemoryFilter(kinds=chosen, created_before=cutoff, as_of=now))
        pool = eligible(
            candidates,
            cutoff=cutoff,
            kinds=chosen,
            protected=self._profile_references(user_id),
            managed_sources=MANAGED_SOURCES,
        )
        if len(pool) < minimum:
            reason = f"{len(pool)} eligible memories, fewer than min_count={minimum}"
            return ConsolidationReport(user_id, len(pool), 0, skipped=reason)
        window = Window.parse(options.window or policy.consolidate_window)
        groups = plan_groups(pool, window=window, max_group=policy.consolidate_max_group)
        if not groups:
            return ConsolidationReport(user_id, len(pool), 0, skipped="no window holds two or more memories")
        plan = tuple(_group_info(user_id, g) for g in groups)
        if options.dry_run:
            return ConsolidationReport(user_id, len(pool), 0, skipped="dry run", groups=plan)
        llm = self._llm() if options.use_llm is not False else None
        if options.use_llm and llm is None:
            raise InvalidInput("use_llm=True, but no LLM is configured")
        written: list[tuple[dict[str, Any], str]] = []
        refused: list[dict[str, Any]] = []
        for position, (group, info) in enumerate(zip(groups, plan, strict=True), 1):
            try:
                outcome = self._compress(user_id, group, now, llm)
            except BackendError as exc:
                failed = info | {"position": position, "error": f"{type(exc).__name__}: {exc}"}
                report = _report(user_id, len(pool), plan, written, refused, failed=failed)
                raise ConsolidationIncomplete(incomplete_message(report, len(groups)), report=report) from exc
            if outcome.method is not None:
                written.append((info, outcome.method))
            else:
                refused.append(info | {"reason": outcome.reason})
            if progress is not None:
                progress(position, len(groups))
        report = _report(user_id, len(pool), plan, written, refused)
        if not written:
            return replace(report, skipped=f"the LLM's summary was refused for all {_groups(len(refused))}")
        return report

    def _compress(self, user_id: str, group: Group, now: datetime, llm: LLMClient | None) -> _Outcome:
        text, method = self._summary_text(group, now, llm)
        if text is None:
            return _Outcome(reason=method)
        summary = _summary_record(user_id, group, text, now, method)
        retired = [replace(r, valid_to=now, superseded_by=summary.id, updated_at=now) for r in group.records]
        events = [new_event(r, EventType.COMPRESS, before=r.content, at=now, summary_id=summary.id) for r in retired]
        events.append(new_event(summary, EventType.ADD, after=text, at=now, replaces=list(group.ids)))
        # One save, one transaction: the summary with its vector, the originals keeping theirs, the
        # history events. The vector is computed first, so an embedder failure writes nothing either.
        self.store.save(user_id, [summary, *retired], events, self.embedder.embed_documents([summary.content]))
        return _Outcome(method=method)

    def _summary_text(self, group: Group, now: datetime, llm: LLMClient | None) -> tuple[str | None, str]:
        """(text, method), or (None, why the LLM's answer was refused)."""
        max_chars = self.policy.consolidate_max_chars
        if llm is None:
            return extractive_summary(group.records, max_chars=max_chars), "extractive"
        memories = [(r.created_at.date(), r.content) for r in group.records]
        messages = build_consolidation_messages(memories, today=now.date())
        try:
            response = complete_whole(llm, messages, max_tokens=1024)
            text = parse_consolidation(response.text, sources=consolidation_sources(memories))
            if len(text.encode("utf-8")) > MAX_CONTENT_BYTES // 2:
                raise LLMOutputError("the compressed memory is too long")
        except LLMOutputError as exc:  # includes TruncatedAnswer; other ProviderErrors stop the run
            return None, f"{type(exc).__name__}: {exc}"
        first, last = _day(group.records[0].created_at), _day(group.records[-1].created_at)
        span = first if first == last else f"{first} to {last}"
        return f"{COMPRESSED_PREFIX} ({span}) {text.removeprefix(COMPRESSED_PREFIX).strip()}", "llm"

    def _profile_references(self, user_id: str) -> set[str]:
        """Every string in the user's profile facts and user context; memory ids among them are kept."""
        found: set[str] = set()
        for namespace in (namespaces.PROFILE, namespaces.USER_CONTEXT):
            for item in all_items(self.store, user_id, namespace):
                found.update(strings_in(item.value))
        return found

    # -- when to run ---------------------------------------------------------------------------------
    def count_turns(self, user_id: str, turns: int = 1) -> bool:
        """Count a user's conversation turns. True when the turn policy wants a consolidation now and
        none is queued yet: the caller queues one, and `run_and_record` resets the count when it runs.

        The turns are counted in this process (`TurnTally`); the user's state is read and written once
        every `consolidate_every_turns` turns, not on every turn, in a unit of work of its own."""
        every = self.policy.consolidate_every_turns
        if not every or turns <= 0:
            return False
        counted = self._tally.add(user_id, turns, every)
        if not counted:
            return False
        try:
            with fence(self.store, user_id):
                state = self.state(user_id)
                count = int(state.get("turns", 0)) + counted
                due = count >= every and not state.get("queued")
                self.store.put_item(
                    user_id, LIFECYCLE, STATE_KEY, {**state, "turns": count, "queued": bool(due or state.get("queued"))}
                )
        except BaseException:
            self._tally.give_back(user_id, counted)
            raise
        return due

    def forget_turns(self, user_id: str) -> None:
        """Drop the turns of the user counted in this process (after the user's erasure)."""
        self._tally.forget(user_id)

    def due(self, user_id: str, now: datetime) -> bool:
        """Whether the scheduled policy (`consolidate_interval_hours`) wants a run now."""
        interval = self.policy.consolidate_interval_hours
        if interval is None:
            return False
        last = self.state(user_id).get("last_run_at")
        return last is None or datetime.fromisoformat(last) <= now - timedelta(hours=interval)

    def run_and_record(
        self, user_id: str, state: dict[str, Any] | None = None, *, job_id: str | None = None
    ) -> ConsolidationReport:
        """Consolidate and record the run in the user's state. A queued job's id is recorded with it,
        and a job whose id is recorded already does nothing (its re-run after a crash changes nothing)."""
        if job_id is not None and self.state(user_id).get("last_job") == job_id:
            return ConsolidationReport(user_id, 0, 0, skipped="this job already ran")
        report = self.consolidate(user_id)
        value = {
            **(state if state is not None else self.state(user_id)),
            "turns": 0,
            "queued": False,
            "last_run_at": self.clock().isoformat(),
            "last_compressed": report.compressed,
            "last_job": job_id,
        }
        self.store.put_item(user_id, LIFECYCLE, STATE_KEY, value)
        return report

    def state(self, user_id: str) -> dict[str, Any]:
        item = self.store.get_item(user_id, LIFECYCLE, STATE_KEY)
        return dict(item.value) if item else {}


def _summary_record(user_id: str, group: Group, text: str, now: datetime, method: str) -> MemoryRecord:
    first, last = group.records[0], group.records[-1]
    sessions = {r.scope.session_id for r in group.records}
    session = sessions.pop() if len(sessions) == 1 else None
    return MemoryRecord(
        id=summary_id(user_id, group.ids),
        scope=Scope.from_storage(user_id, group.agent_id, session),
        kind=MemoryKind.SUMMARY,
        content=text,
        created_at=last.created_at,
        updated_at=now,
        metadata={
            "replaces": list(group.ids),
            "compressed_kind": group.kind.value,
            "period": group.period,
            "period_start": first.created_at.isoformat(),
            "period_end": last.created_at.isoformat(),
            "method": method,
        },
        importance=max(r.importance for r in group.records),
        valid_from=now,
        source_ids=merged_source_ids(group.records),
        content_hash=content_hash(text),
        context=_replaced_text(group.records),
    )


def _replaced_text(records: Sequence[MemoryRecord]) -> str:
    """The originals' full text, indexed for keyword search only (`MemoryRecord.context`): a word of any
    of them still finds the summary that replaced it, whatever the summary kept."""
    return "\n".join(" ".join(r.content.split()) for r in records)[: MAX_CONTENT_BYTES // 2]


def _group_info(user_id: str, group: Group) -> dict[str, Any]:
    return {
        "id": summary_id(user_id, group.ids),
        "kind": group.kind.value,
        "period": group.period,
        "agent_id": group.agent_id,
        "replaces": len(group.records),
    }


def _day(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d")


def _report(
    user_id: str,
    eligible_count: int,
    plan: Sequence[dict[str, Any]],
    written: Sequence[tuple[dict[str, Any], str]],
    refused: Sequence[dict[str, Any]],
    *,
    failed: dict[str, Any] | None = None,
) -> ConsolidationReport:
    """The report of a run that compressed `written` (group entry, method) and left `refused`."""
    methods = {method for _, method in written}
    method = "none" if not methods else methods.pop() if len(methods) == 1 else "mixed"
    return ConsolidationReport(
        user_id,
        eligible_count,
        compressed=sum(int(info["replaces"]) for info, _ in written),
        summaries=tuple(info["id"] for info, _ in written),
        method=method,
        groups=tuple(plan),
        refused=tuple(refused),
        failed=failed,
    )


def _groups(count: int) -> str:
    return f"{count} group" if count == 1 else f"{count} groups"


def incomplete_message(report: ConsolidationReport, total: int) -> str:
    """What a consolidation that stopped at `report.failed` did and did not do, in one message (pure)."""
    failed = report.failed or {}
    position = int(failed.get("position", 0))
    done = len(report.summaries)
    kept = (
        f"{_groups(done)} ({report.compressed} memories) compressed before it and kept: {', '.join(report.summaries)}"
        if done
        else "No group was compressed before it"
    )
    left = f"group {position} is" if position == total else f"groups {position}-{total} are"
    refused = f"; {_groups(len(report.refused))} left as they were (LLM answer refused)" if report.refused else ""
    return (
        f"consolidation of {report.user_id!r} stopped at group {position} of {total} (summary {failed.get('id')}, "
        f"{failed.get('replaces')} {failed.get('kind')} memories): {failed.get('error')}. {kept}{refused}; "
        f"{left} unchanged, their memories still current. Run the consolidation again to continue."
    )
