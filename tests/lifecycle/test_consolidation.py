"""Consolidation: thresholds, provenance, what is never touched, determinism, LLM path, policies."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from memstrata import (
    ConsolidationIncomplete,
    ConsolidationOptions,
    EventType,
    InvalidInput,
    MemoryKind,
    NewMemory,
    ProviderError,
    Scope,
    SearchFilter,
)
from memstrata.core.compress import Window, extractive_summary, plan_groups, summary_id
from memstrata.llm.scripted import ScriptedLLM
from memstrata.models import new_record
from memstrata.storage.base import MemoryFilter
from tests.lifecycle.conftest import T0, Clock, use_policy

USER = "alice"


def old_events(memory: Any, count: int, *, days_ago: float = 45, kind: str = "event", **extra: Any) -> list[Any]:
    """`count` memories `days_ago` days old (one hour apart), each with its own provenance id."""
    items = [
        NewMemory(
            f"Alice went hiking on trail number {i} with her friend Dana{i}",
            kind=MemoryKind.parse(kind),
            created_at=T0 - timedelta(days=days_ago) + timedelta(hours=i),
            source_ids=(f"D1:{i}",),
            **extra,
        )
        for i in range(count)
    ]
    return memory.add_many(items, scope=USER, dedupe=False)


def test_below_min_count_nothing_is_compressed(memory: Any) -> None:
    originals = old_events(memory, 9)
    report = memory.consolidate(scope=USER)
    assert report.compressed == 0 and report.summaries == ()
    assert report.skipped == "9 eligible memories, fewer than min_count=10"
    assert {r.id for r in memory.list(scope=USER)} == {r.id for r in originals}


def test_at_min_count_old_memories_become_one_summary(memory: Any) -> None:
    originals = old_events(memory, 10)
    young = memory.add(
        "Alice booked a dentist appointment", scope=USER, kind="event", created_at=T0 - timedelta(days=29)
    )
    report = memory.consolidate(scope=USER)
    assert (report.eligible, report.compressed, report.method) == (10, 10, "extractive")
    current = memory.list(scope=USER)
    [summary] = [r for r in current if r.kind is MemoryKind.SUMMARY]
    assert {r.id for r in current} == {summary.id, young.id}
    assert summary.content.startswith("[Compressed memory] 10 events, 2026-01-15: ")
    assert all(f"Dana{i}" in summary.content for i in range(10))
    assert summary.metadata["replaces"] == [r.id for r in originals]
    assert (
        summary.metadata["compressed_kind"] == "event" and summary.metadata["period"] == "term:alic"
    )  # the term all ten share (stemmed)


def test_age_and_threshold_are_parameters(memory: Any) -> None:
    old_events(memory, 4, days_ago=8)
    assert memory.consolidate(scope=USER).compressed == 0
    report = memory.consolidate(
        scope=USER, options=ConsolidationOptions(older_than_days=timedelta(days=7), min_count=3)
    )
    assert report.compressed == 4


def test_provenance_history_and_as_of(memory: Any, clock: Clock) -> None:
    originals = old_events(memory, 12)
    before = clock.now
    clock.advance(minutes=5)
    report = memory.consolidate(scope=USER)
    summary = memory.get(report.summaries[0], scope=USER)
    assert summary.source_ids == tuple(f"D1:{i}" for i in range(12))
    for original in originals:
        retired = memory.get(original.id, scope=USER)
        assert retired.valid_to == clock.now and retired.superseded_by == summary.id
        assert retired.content == original.content
        events = memory.history(original.id, scope=USER)
        assert [e.event for e in events] == [EventType.ADD, EventType.COMPRESS]
        assert events[-1].before == original.content and events[-1].details == {"summary_id": summary.id}
    [added] = memory.history(summary.id, scope=USER)
    assert added.event is EventType.ADD and added.details["replaces"] == [r.id for r in originals]
    hits = memory.search("hiking trail Dana3", scope=USER, k=20)
    assert [h.memory.id for h in hits] == [summary.id]
    past = memory.search("hiking trail Dana3", scope=USER, k=20, filters=SearchFilter(as_of=before))
    assert summary.id not in {h.memory.id for h in past} and originals[3].id in {h.memory.id for h in past}
    everything = memory.list(scope=USER, filters=SearchFilter(include_superseded=True))
    assert len(everything) == 13


def test_pinned_profile_backed_and_other_kinds_are_never_compressed(memory: Any) -> None:
    old_events(memory, 10)
    pinned = old_events(memory, 1, pinned=True)[0]
    [profile_backed] = memory.add_many(
        [NewMemory("Alice lives in Lisbon", created_at=T0 - timedelta(days=90), kind=MemoryKind.EVENT)],
        scope=USER,
    )
    fact = memory.set_fact("home", "city", "Lisbon", scope=USER, source=profile_backed.id)
    context = {"facts": [{"text": "lives in Lisbon", "memory_id": profile_backed.id}]}
    memory.store.put_item(USER, "context", "user", context)
    preferences = memory.add_many(
        [
            NewMemory(
                f"Alice prefers tea flavour {i}",
                kind=MemoryKind.PREFERENCE,
                created_at=T0 - timedelta(days=60),
            )
            for i in range(12)
        ],
        scope=USER,
    )
    superseded_successor = memory.supersede(pinned.id, "Alice hiked trail 0 twice", scope=USER)
    report = memory.consolidate(scope=USER)
    assert report.compressed == 10
    current = {r.id for r in memory.list(scope=USER, limit=1000)}
    assert {profile_backed.id, superseded_successor.id, *(p.id for p in preferences)} <= current
    assert memory.get(pinned.id, scope=USER).superseded_by == superseded_successor.id
    assert memory.facts(scope=USER) == [fact]
    assert memory.store.get_item(USER, "context", "user").value == context


def test_groups_by_kind_and_month_and_splits_big_groups(memory: Any) -> None:
    old_events(memory, 6, days_ago=45)  # January
    old_events(memory, 5, days_ago=75)  # December
    old_events(memory, 3, days_ago=45, kind="fact")
    memory = use_policy(memory, consolidate_max_group=4, consolidate_window=Window.MONTH)
    report = memory.consolidate(scope=USER)
    shape = [(g["kind"], g["period"], g["replaces"]) for g in report.groups]
    assert shape == [
        ("event", "2025-12", 3),
        ("event", "2025-12", 2),
        ("event", "2026-01", 3),
        ("event", "2026-01", 3),
        ("fact", "2026-01", 3),
    ]
    assert report.compressed == 14 and len(report.summaries) == 5


def test_dry_run_writes_nothing(memory: Any) -> None:
    old_events(memory, 10)
    report = memory.consolidate(scope=USER, options=ConsolidationOptions(dry_run=True))
    assert report.skipped == "dry run" and report.groups[0]["replaces"] == 10
    assert len(memory.list(scope=USER)) == 10 and not memory.list(scope=USER, filters=SearchFilter(kinds="summary"))


def test_deterministic_and_rerun_is_a_no_op(make_memory: Callable[..., Any]) -> None:
    texts = []
    for name in ("one", "two"):
        memory = make_memory(name)
        originals = old_events(memory, 10)
        report = memory.consolidate(scope=USER)
        assert report.summaries == (summary_id(USER, [r.id for r in originals]),)
        texts.append(memory.get(report.summaries[0], scope=USER).content)
        again = memory.consolidate(scope=USER)
        assert again.compressed == 0 and len(memory.list(scope=USER, filters=SearchFilter(kinds="summary"))) == 1
    assert texts[0] == texts[1]


def test_interrupted_consolidation_rewrites_its_own_summary(memory: Any) -> None:
    """A summary saved without its retirements (a crash between writes) is overwritten, not doubled."""
    originals = old_events(memory, 10)
    orphan_id = summary_id(USER, [r.id for r in originals])
    orphan = new_record(scope=originals[0].scope, content="half written", kind=MemoryKind.SUMMARY, memory_id=orphan_id)
    memory.store.save(USER, [orphan], (), memory.embedder.embed_documents([orphan.content]))
    memory.consolidate(scope=USER)
    [summary] = memory.list(scope=USER, filters=SearchFilter(kinds="summary"))
    assert summary.id == orphan_id and summary.content.startswith("[Compressed memory]")


def test_llm_summary_with_prompt_from_the_originals(memory: Any) -> None:
    originals = old_events(memory, 10)
    llm = ScriptedLLM(["Here is the summary:\n[Compressed memory] The user hiked ten trails with Dana."])
    memory = use_policy(memory, llm=llm)
    report = memory.consolidate(scope=USER)
    assert report.method == "llm" and report.refused == ()
    summary = memory.get(report.summaries[0], scope=USER)
    assert summary.content == "[Compressed memory] (2026-01-15) The user hiked ten trails with Dana."
    assert summary.metadata["method"] == "llm"
    assert all(r.content in llm.calls[0].prompt for r in originals)


def test_unusable_llm_answer_compresses_nothing_and_keeps_the_originals(memory: Any) -> None:
    originals = old_events(memory, 10)
    memory = use_policy(memory, llm=ScriptedLLM(["<think>hmm</think>"]))
    report = memory.consolidate(scope=USER)
    assert (report.compressed, report.summaries, report.method) == (0, (), "none")
    [refused] = report.refused
    assert refused["id"] == report.groups[0]["id"] and "LLMOutputError" in refused["reason"]
    assert report.skipped == "the LLM's summary was refused for all 1 group"
    assert {r.id for r in memory.list(scope=USER)} == {r.id for r in originals}


def test_provider_failure_changes_nothing(memory: Any) -> None:
    old_events(memory, 10)
    memory = use_policy(memory, llm=ScriptedLLM([ProviderError("down")]))
    with pytest.raises(ConsolidationIncomplete, match="No group was compressed before it") as caught:
        memory.consolidate(scope=USER)
    assert isinstance(caught.value.__cause__, ProviderError)
    assert caught.value.report.compressed == 0 and caught.value.report.failed["error"] == "ProviderError: down"
    assert len(memory.list(scope=USER)) == 10
    assert memory.consolidate(scope=USER, options=ConsolidationOptions(use_llm=False)).compressed == 10


def test_use_llm_without_llm_is_an_error(memory: Any) -> None:
    old_events(memory, 10)
    with pytest.raises(InvalidInput, match="no LLM is configured"):
        memory.consolidate(scope=USER, options=ConsolidationOptions(use_llm=True))
    with pytest.raises(InvalidInput, match="summaries are not compressed again"):
        memory.consolidate(scope=USER, options=ConsolidationOptions(kinds=["summary"]))


def test_every_n_turns_policy_queues_consolidation_off_the_conversation_path(memory: Any) -> None:
    old_events(memory, 10)
    memory = use_policy(memory, consolidate_every_turns=20)
    session = Scope(USER, session_id="s1")
    for i in range(20):
        memory.add_message("user", f"message {i}", scope=session)
    assert memory.list(scope=USER, filters=SearchFilter(kinds="summary")) == []  # nothing compressed inline
    assert memory.queue_status().counts["pending"] == 1
    memory.add_message("user", "one more", scope=session)  # already queued: not queued twice
    assert memory.queue_status().counts["pending"] == 1
    assert memory.process_queue() == 1
    assert len(memory.list(scope=USER, filters=SearchFilter(kinds="summary"))) >= 1
    state = memory.store.get_item(USER, "lifecycle", "consolidation").value
    assert state["turns"] == 0 and state["last_compressed"] == 10 and state["queued"] is False


def test_scheduled_policy_runs_when_due(memory: Any, clock: Clock) -> None:
    old_events(memory, 10)
    memory = use_policy(memory, consolidate_interval_hours=24)
    first = memory.maintain()
    assert first.consolidated[USER].compressed == 10
    old_events(memory, 10, days_ago=40)
    assert memory.maintain().consolidated == {}
    clock.advance(hours=25)
    assert memory.maintain().consolidated[USER].compressed == 10


def test_extractive_summary_keeps_rare_facts_within_budget(memory: Any) -> None:
    filler = [f"Alice said the weather was nice and sunny today again {i}" for i in range(30)]
    facts = ["Alice's passport number ends in 4471", "Alice's sister Mara moved to Porto in May"]
    records = memory.add_many(
        [
            NewMemory(t, kind=MemoryKind.NOTE, created_at=T0 - timedelta(days=40, hours=-i))
            for i, t in enumerate(filler + facts)
        ],
        scope=USER,
        dedupe=False,
    )
    text = extractive_summary(records, max_chars=400)
    assert len(text) <= 400 and "4471" in text and "Mara moved to Porto" in text
    assert "left out" in text


def test_plan_groups_ignores_singletons_and_sorts_by_window() -> None:
    records = [
        new_record(scope=_scope(), content=f"note {i}", kind=MemoryKind.NOTE, created_at=T0 - timedelta(days=d))
        for i, d in enumerate([40, 41, 100])
    ]
    groups = plan_groups(records, window=Window.MONTH)
    assert [(g.period, len(g.records)) for g in groups] == [("2026-01", 2)]
    assert [len(g.records) for g in plan_groups(records, window=Window.DAY)] == []


def test_locomo_style_questions_find_evidence_through_provenance(memory: Any, clock: Clock) -> None:
    """Sessions of dated turns (episodes with dia_id provenance) compressed months later: each question
    about a compressed period still reaches its evidence through the summary's source_ids."""
    sessions = {
        1: (
            T0 - timedelta(days=120),
            [
                ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
                ("Melanie", "That's great! I painted a lake sunrise last year."),
                ("Caroline", "I'm researching adoption agencies, I want to give kids a loving home."),
                ("Melanie", "I'm off to go swimming with the kids."),
            ]
            * 3,
        ),
        2: (
            T0 - timedelta(days=90),
            [
                ("Caroline", "I gave a talk at a school about my transgender journey."),
                ("Melanie", "We went camping at the beach and roasted marshmallows."),
                ("Caroline", "My grandma gave me a necklace from Sweden."),
                ("Melanie", "I signed up for a pottery class on Friday."),
            ]
            * 3,
        ),
    }
    for number, (start, turns) in sessions.items():
        memory.add_many(
            [
                NewMemory(
                    f"{who}: {text}",
                    kind=MemoryKind.EPISODE,
                    created_at=start + timedelta(minutes=i),
                    source_ids=(f"D{number}:{i + 1}",),
                    metadata={"speaker": who},
                )
                for i, (who, text) in enumerate(turns)
            ],
            scope=USER,
            dedupe=False,
        )
    questions = [
        ("When did Caroline go to the LGBTQ support group?", {"D1:1"}),
        ("What did Caroline research?", {"D1:3"}),
        ("Where did Caroline's necklace come from?", {"D2:3"}),
        ("What class did Melanie sign up for?", {"D2:4"}),
    ]
    report = memory.consolidate(
        scope=USER, options=ConsolidationOptions(kinds=["episode"])
    )  # turns are compressed only when asked
    assert report.compressed == 24 and len(report.summaries) == 2
    assert memory.store.count_memories(USER, MemoryFilter(kinds=(MemoryKind.EPISODE,))) == 0
    for question, evidence in questions:
        hits = memory.search(question, scope=USER, k=1)
        assert hits and hits[0].memory.kind is MemoryKind.SUMMARY
        assert evidence <= set(hits[0].memory.source_ids), question


def _scope() -> Any:
    from memstrata import Scope

    return Scope(user_id=USER)


def test_memories_owned_by_the_langgraph_store_are_left_alone(memory: Any) -> None:
    """The LangGraph integration keeps one NOTE memory per indexed text; compressing them would break it."""
    memory.add_many(
        [
            NewMemory(
                f"indexed text {i}",
                kind=MemoryKind.NOTE,
                created_at=T0 - timedelta(days=60),
                metadata={"source": "langgraph", "langgraph_key": f"k{i}"},
            )
            for i in range(12)
        ],
        scope=USER,
    )
    report = memory.consolidate(scope=USER)
    assert report.compressed == 0 and report.eligible == 0


def test_memories_about_one_topic_over_five_weeks_become_one_summary(memory: Any) -> None:
    """Grouped by topic, not by calendar week; a word of any original still finds the summary."""
    items = [
        NewMemory(
            f"Ran {5 + i} km of marathon training, split {i}",
            kind=MemoryKind.EVENT,
            created_at=T0 - timedelta(days=40 + 3 * i),
        )
        for i in range(12)
    ]
    memory.add_many(items, scope=USER, dedupe=False)
    report = memory.consolidate(scope=USER, options=ConsolidationOptions(min_count=2))
    assert report.compressed == 12 and len(report.summaries) == 1
    hits = memory.search("split 7", scope=USER, strategy="keyword")
    assert hits and hits[0].memory.kind is MemoryKind.SUMMARY
    week = memory.consolidate(scope=Scope("other"), options=ConsolidationOptions(min_count=2, window="week"))
    assert week.compressed == 0  # the week window is still available
