"""Consolidation planning and offline extractive compression (pure: no I/O, no clock).

`plan_groups` decides what to compress: current, unpinned memories of the chosen kinds created before
a cutoff, grouped by agent, kind and topic (the default: the entity a memory is linked to, else its
slot, else its conversation session, else its term most shared with the others; see `topic_of`) or
by calendar window (day, ISO week or month, UTC), each group split into chronological chunks of at
most `max_group`. Grouping by topic keeps a summary about one thing, so a query about it still
finds it. Given the same memories and cutoff it always
returns the same groups, and `summary_id` gives each group the same id, so a consolidation that is
interrupted and run again overwrites its own half-written summary instead of adding a second one.

`extractive_summary` writes the "[Compressed memory] …" text without a model: near-duplicates are
dropped (the most recent wording wins), and when everything does not fit in `max_chars` the memories
that add the most unseen, rare terms are kept. Kept memories appear in time order under their dates.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from ..errors import InvalidInput
from ..models import MemoryKind, MemoryRecord
from .summarize import salience, split_sentences
from .text import unique_content_terms

COMPRESSED_PREFIX = "[Compressed memory]"
"""How every consolidated summary begins (its content, for people and for the model alike)."""

DEFAULT_KINDS: tuple[MemoryKind, ...] = (
    MemoryKind.FACT,
    MemoryKind.EVENT,
    MemoryKind.NOTE,
)
"""Kinds compressed by default. Preferences, tasks, procedures and summaries are left alone: the first
three are looked up one by one (profile, open items, how-tos), and summaries are already compressed.
Episodes (the conversation turns as said) are the record retrieval answers from: compressing them
cost LongMemEval turn recall@10 (BENCHMARKS.md), so they are compressed only when asked for."""

_PLURAL = {
    MemoryKind.FACT: "facts",
    MemoryKind.PREFERENCE: "preferences",
    MemoryKind.EVENT: "events",
    MemoryKind.NOTE: "notes",
    MemoryKind.TASK: "tasks",
    MemoryKind.EPISODE: "conversation turns",
    MemoryKind.SUMMARY: "summaries",
    MemoryKind.PROCEDURE: "procedures",
}
DUPLICATE_JACCARD = 0.8


class Window(StrEnum):
    TOPIC = "topic"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"

    @classmethod
    def parse(cls, value: object) -> Window:
        try:
            return cls(str(value))
        except ValueError:
            raise InvalidInput(f"unknown consolidation window {value!r}; use topic, day, week or month") from None


@dataclass(frozen=True, slots=True)
class Group:
    """Memories compressed together into one summary, oldest first."""

    agent_id: str | None
    kind: MemoryKind
    period: str
    records: tuple[MemoryRecord, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.records)


def period_of(at: datetime, window: Window) -> str:
    """The calendar window `at` falls in (UTC): '2024-03-02', '2024-W09' or '2024-03'."""
    moment = at.astimezone(UTC)
    if window is Window.DAY:
        return moment.strftime("%Y-%m-%d")
    if window is Window.WEEK:
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    return moment.strftime("%Y-%m")


_FREE_TEXT_SLOTS = frozenset({"event", "note", "task", "plan"})


def topic_of(record: MemoryRecord, shared: Collection[str] = ()) -> str:
    """What a memory is about, for grouping: 'entity:sarah' (the first entity it is linked to),
    'slot:location' (its slot), 'session:s1' (the conversation it was said in), else 'term:marathon'
    (its content term that occurs in most of the other memories, from `shared`, most shared first), else 'misc'."""
    entities = record.metadata.get("entities")
    if isinstance(entities, list) and entities and isinstance(entities[0], str):
        return f"entity:{' '.join(entities[0].casefold().split())}"
    attribute = record.metadata.get("attribute")
    if isinstance(attribute, str) and attribute and attribute not in _FREE_TEXT_SLOTS:
        return f"slot:{attribute}"
    if record.scope.session_id:
        return f"session:{record.scope.session_id}"
    terms = set(unique_content_terms(record.content))
    return next((f"term:{t}" for t in shared if t in terms), "misc")


def _shared_terms(records: Sequence[MemoryRecord]) -> list[str]:
    """Content terms found in two or more of `records`, most frequent first (ties alphabetical)."""
    counts: dict[str, int] = {}
    for record in records:
        for term in set(unique_content_terms(record.content)):
            counts[term] = counts.get(term, 0) + 1
    return sorted((t for t, n in counts.items() if n >= 2), key=lambda t: (-counts[t], t))


def eligible(
    records: Sequence[MemoryRecord],
    *,
    cutoff: datetime,
    kinds: Collection[MemoryKind],
    protected: Collection[str] = (),
    managed_sources: Collection[str] = (),
) -> list[MemoryRecord]:
    """Records consolidation may compress: current, unpinned, of `kinds`, created before `cutoff`,
    not expiring (the sweep removes those), not referenced by a profile fact (`protected` ids), and
    not owned by another component (`metadata["source"]` in `managed_sources`, e.g. the vectors of
    the LangGraph store, which must stay one memory per indexed text)."""
    protected_ids = set(protected)
    return [
        r
        for r in records
        if r.kind in kinds
        and r.valid_to is None
        and r.superseded_by is None
        and not r.pinned
        and r.expires_at is None
        and r.created_at < cutoff
        and r.id not in protected_ids
        and r.metadata.get("source") not in managed_sources
    ]


def plan_groups(
    records: Sequence[MemoryRecord], *, window: Window = Window.TOPIC, max_group: int = 20, min_group: int = 2
) -> list[Group]:
    """Deterministic groups of `records` (already filtered by `eligible`), oldest window first.

    Groups smaller than `min_group` are left out: one memory gains nothing from being "compressed".
    """
    if max_group < 2:
        raise InvalidInput(f"max_group must be at least 2, got {max_group}")
    buckets: dict[tuple[str, str, str], list[MemoryRecord]] = {}
    shared = _shared_terms(records) if window is Window.TOPIC else []
    for record in sorted(records, key=lambda r: (r.created_at, r.id)):
        group = topic_of(record, shared) if window is Window.TOPIC else period_of(record.created_at, window)
        key = (record.scope.agent_id or "", record.kind.value, group)
        buckets.setdefault(key, []).append(record)
    groups: list[Group] = []
    for (agent, kind, period), members in sorted(buckets.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
        if len(members) < min_group:
            continue
        for chunk in _balanced_chunks(members, max_group):
            groups.append(Group(agent or None, MemoryKind(kind), period, tuple(chunk)))
    return groups


def _balanced_chunks(members: list[MemoryRecord], max_size: int) -> list[list[MemoryRecord]]:
    count = math.ceil(len(members) / max_size)
    size, extra = divmod(len(members), count)
    chunks, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        chunks.append(members[start:end])
        start = end
    return chunks


def summary_id(user_id: str, ids: Sequence[str]) -> str:
    """A stable id for the summary of exactly these memories."""
    digest = hashlib.sha256("\x1f".join([user_id, *sorted(ids)]).encode("utf-8")).hexdigest()
    return f"cmp-{digest[:32]}"


def merged_source_ids(records: Sequence[MemoryRecord]) -> tuple[str, ...]:
    """The union of the records' provenance, in first-seen order (records oldest first)."""
    return tuple(dict.fromkeys(source for r in records for source in r.source_ids))


def extractive_summary(records: Sequence[MemoryRecord], *, max_chars: int = 1500, unit_chars: int = 280) -> str:
    """ "[Compressed memory] 12 events, 2024-03-02 to 2024-03-28: 2024-03-02: … | 2024-03-05: …".

    Records are oldest first and of one kind. At most `max_chars` characters (the header included);
    each memory is cut to `unit_chars` at a sentence or word boundary.
    """
    if not records:
        raise InvalidInput("extractive_summary needs at least one memory")
    if max_chars < 200:
        raise InvalidInput(f"max_chars must be at least 200, got {max_chars}")
    ordered = sorted(records, key=lambda r: (r.created_at, r.id))
    units = _deduplicated([(r.created_at, _shorten(r.content, unit_chars), r.importance) for r in ordered])
    first, last = ordered[0].created_at, ordered[-1].created_at
    kind = _PLURAL.get(ordered[0].kind, ordered[0].kind.value)
    span = _day(first) if _day(first) == _day(last) else f"{_day(first)} to {_day(last)}"
    header = f"{COMPRESSED_PREFIX} {len(ordered)} {kind}, {span}"
    kept = _select(units, budget=max_chars - len(header) - 50)
    omitted = len(ordered) - len(kept)
    if omitted:
        header += f" ({omitted} repeated or less informative left out)"
    return f"{header}: {_render(kept)}"[:max_chars]


_Unit = tuple[datetime, str, float]


def _shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters: whole sentences when the first one fits, else at a word."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    kept = ""
    for sentence in split_sentences(flat):
        if len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    return kept or flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def _deduplicated(units: list[_Unit]) -> list[_Unit]:
    """Drop near-duplicates (term Jaccard >= 0.8), keeping the most recent wording."""
    kept: list[tuple[_Unit, set[str]]] = []
    for unit in reversed(units):
        terms = set(unique_content_terms(unit[1])) or {unit[1].casefold()}
        if any(len(terms & seen) / len(terms | seen) >= DUPLICATE_JACCARD for _, seen in kept):
            continue
        kept.append((unit, terms))
    return [unit for unit, _ in reversed(kept)]


def _select(units: list[_Unit], *, budget: int) -> list[_Unit]:
    """All units if they fit; else a greedy pick of the units that add the most unseen, rare terms and
    salience (names, numbers, dates, preferences: `core.summarize.salience`) per character."""
    if sum(len(u[1]) + 14 for u in units) <= budget:
        return units
    terms = [set(unique_content_terms(u[1])) for u in units]
    frequency: dict[str, int] = {}
    for unit_terms in terms:
        for term in unit_terms:
            frequency[term] = frequency.get(term, 0) + 1
    weight = {t: math.log(1 + len(units) / f) for t, f in frequency.items()}
    chosen: set[int] = set()
    covered: set[str] = set()
    used = 0
    while True:
        best, best_score = -1, 0.0
        for index, unit in enumerate(units):
            if index in chosen or used + len(unit[1]) + 14 > budget:
                continue
            gain = sum(weight[t] for t in terms[index] - covered) + salience(unit[1])
            score = gain * (0.5 + unit[2]) / math.sqrt(20 + len(unit[1]))
            if score > best_score:
                best, best_score = index, score
        if best < 0:
            break
        chosen.add(best)
        covered |= terms[best]
        used += len(units[best][1]) + 14
    return [unit for index, unit in enumerate(units) if index in chosen]


def _render(units: list[_Unit]) -> str:
    days: dict[str, list[str]] = {}
    for at, text, _ in units:
        days.setdefault(_day(at), []).append(text if text[-1:] in ".!?…" else f"{text}.")
    return " | ".join(f"{day}: {' '.join(texts)}" for day, texts in days.items())


def _day(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d")


def older_than(value: timedelta | float | int) -> timedelta:
    """A consolidation age: a `timedelta`, or a number of days."""
    if isinstance(value, timedelta):
        age = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        age = timedelta(days=value)
    else:
        raise InvalidInput(f"older_than must be a timedelta or a number of days, got {value!r}")
    if age < timedelta(0):
        raise InvalidInput("older_than must not be negative")
    return age


__all__ = [
    "COMPRESSED_PREFIX",
    "DEFAULT_KINDS",
    "Group",
    "Window",
    "eligible",
    "extractive_summary",
    "merged_source_ids",
    "older_than",
    "period_of",
    "plan_groups",
    "summary_id",
    "topic_of",
]
