"""`memstrata-bench heldout`: how well the tuned ranking settings carry over to questions they were not tuned on.

The ranking settings (`HybridParams`: vector weight, role boost, when boost) were chosen on the development
sets. To estimate what they are worth on unseen questions, every setting of a small grid around the
defaults is scored on every question, and then, fold by fold, the setting that does best on the other folds
is scored on the held-out fold (cross-validation of the choice itself):

* LoCoMo: leave one conversation out (5 folds on the dev split), evidence recall@10 per question;
* LongMemEval: leave one question out (95 folds), split halves (even / odd questions) and leave one
  question type out, turn recall@10.

The estimate is the mean over all questions of the held-out scores, with its spread over the folds
(min / median / max of the per-fold means) and the held-out mean of each question category or type. Next
to it stand the in-sample score of the defaults and of the best setting in hindsight, and plain BM25
(`Strategy.KEYWORD`, nothing to tune) per category or type: the floor no category should fall below.
The choosing and scoring are pure functions over the per-question scores (`held_out`), so they are
tested without a store.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memstrata import Memory, Scope, Strategy
from memstrata.core.retrieval import HybridParams
from memstrata.layers.semantic import SemanticMemory
from memstrata.storage.base import MemoryFilter

from . import locomo, longmemeval
from .latency import bench_store, open_postgres
from .locomo_data import evidence_recall
from .locomo_data import load as load_locomo
from .longmemeval_data import load as load_longmemeval
from .longmemeval_data import score_case, visible_until

Progress = Callable[[str], None]
Scores = Mapping[str, Sequence[float]]
"""Per setting label, one score per question (the same question order for every label)."""

VECTOR_WEIGHTS = (0.3, 0.2, 0.4)
ROLE_BOOSTS = (2.0, 0.0)
WHEN_BOOSTS = (2.0, 0.0)


def grid(base: HybridParams | None = None) -> dict[str, HybridParams]:
    """The settings compared, by label; the defaults come first, so they win ties."""
    start = base or HybridParams()
    return {
        f"vw{vw}-role{role:g}-when{when:g}": replace(start, vector_weight=vw, role_boost=role, when_boost=when)
        for vw in VECTOR_WEIGHTS
        for role in ROLE_BOOSTS
        for when in WHEN_BOOSTS
    }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def choose(scores: Scores, questions: Sequence[int], other: Mapping[str, float] | None = None) -> str:
    """The label with the best mean score over `questions` (indices); the first label wins a tie.

    `other`: each label's mean score on the other benchmark; the choice then maximizes the average of the
    two means (each benchmark weighs the same, whatever its number of questions), as the shipped defaults
    were chosen on both benchmarks."""
    best, best_score = "", float("-inf")
    for label, per_question in scores.items():
        score = _mean([per_question[i] for i in questions])
        if other is not None:
            score = (score + other[label]) / 2
        if score > best_score + 1e-12:
            best, best_score = label, score
    return best


def held_out(
    scores: Scores,
    fold_of: Sequence[str],
    group_of: Sequence[str] | None = None,
    *,
    list_folds: bool = True,
    other: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Cross-validate the choice of setting: for each fold, choose on the other folds, score on this one.

    `fold_of[i]` names the fold of question i, `group_of[i]` its category (optional); `other` (each
    label's mean on the other benchmark) makes every choice also weigh that benchmark (`choose`). Returns the
    question-weighted `estimate`, the `spread` of the per-fold scores (min / median / max), the held-out
    mean of each group (`by_group`), how often each label was chosen, and (with `list_folds`) every fold:
    its size, the label chosen without it, the held-out score."""
    if not scores:
        return {"estimate": 0.0, "folds": []}
    held = [0.0] * len(fold_of)
    folds: list[dict[str, Any]] = []
    for fold in dict.fromkeys(fold_of):
        inside = [i for i, f in enumerate(fold_of) if f == fold]
        chosen = choose(scores, [i for i, f in enumerate(fold_of) if f != fold], other)
        for i in inside:
            held[i] = scores[chosen][i]
        folds.append(
            {
                "fold": fold,
                "questions": len(inside),
                "chosen": chosen,
                "recall@10": round(_mean([held[i] for i in inside]), 4),
            }
        )
    per_fold = [f["recall@10"] for f in folds]
    result: dict[str, Any] = {
        "estimate": round(_mean(held), 4),
        "spread": {"min": min(per_fold), "median": round(statistics.median(per_fold), 4), "max": max(per_fold)},
        "chosen": {
            label: sum(f["chosen"] == label for f in folds) for label in dict.fromkeys(f["chosen"] for f in folds)
        },
    }
    if group_of is not None:
        result["by_group"] = group_means(held, group_of)
    if list_folds:
        result["folds"] = folds
    return result


def group_means(values: Sequence[float], group_of: Sequence[str]) -> dict[str, float]:
    """The mean of `values` per group (groups in order of first appearance)."""
    return {
        group: round(_mean([v for v, g in zip(values, group_of, strict=True) if g == group]), 4)
        for group in dict.fromkeys(group_of)
    }


def in_sample(scores: Scores) -> dict[str, Any]:
    """The mean score of every label, the defaults' (the first label) and the best in hindsight."""
    means = {label: round(_mean(values), 4) for label, values in scores.items()}
    best = max(means, key=lambda label: means[label])
    return {"default": means[next(iter(means))], "best": {"label": best, "recall@10": means[best]}, "all": means}


# -- scoring every setting on every question ----------------------------------------------------------
def _layer(memory: Memory, params: HybridParams) -> SemanticMemory:
    return SemanticMemory(
        store=memory.store, embedder=memory.embedder, clock=memory.clock, track_access=False, params=params
    )


def locomo_scores(
    memory: Memory, data: str | Path, settings: Mapping[str, HybridParams]
) -> tuple[Scores, list[str], list[str], list[float]]:
    """Evidence recall@10 of every LoCoMo question under every setting, each question's conversation and
    category, and its recall@10 with plain BM25."""
    conversations = load_locomo(data)
    for conversation in conversations:
        memory.store.erase_user(f"locomo-{conversation.sample_id}")
        locomo.ingest(memory, conversation)
    folds = [c.sample_id for c in conversations for _ in c.questions]
    categories = [q.category for c in conversations for q in c.questions]
    scores: dict[str, list[float]] = {}
    for label, params in settings.items():
        layer = _layer(memory, params)
        scores[label] = [
            evidence_recall(
                q.evidence,
                [h.memory.source_ids for h in layer.search(Scope(f"locomo-{c.sample_id}"), q.question, k=10)],
                10,
            )
            for c in conversations
            for q in c.questions
        ]
    layer = _layer(memory, HybridParams())
    keyword = [
        evidence_recall(
            q.evidence,
            [
                h.memory.source_ids
                for h in layer.search(Scope(f"locomo-{c.sample_id}"), q.question, k=10, strategy=Strategy.KEYWORD)
            ],
            10,
        )
        for c in conversations
        for q in c.questions
    ]
    return scores, folds, categories, keyword


def longmemeval_scores(
    memory: Memory, data: str | Path, settings: Mapping[str, HybridParams]
) -> tuple[Scores, list[str], list[str], list[float]]:
    """Turn recall@10 of every scored LongMemEval question under every setting, each question's id and
    type, and its turn recall@10 with plain BM25."""
    cases = [c for c in load_longmemeval(data) if c.evidence_turns]
    for case in cases:
        longmemeval.ingest(memory, case, "turn")

    def recalls(params: HybridParams, strategy: Strategy = Strategy.HYBRID) -> list[float]:
        layer = _layer(memory, params)
        rows = []
        for case in cases:
            where = MemoryFilter(as_of=visible_until(case.asked_at))
            hits = layer.search(Scope(longmemeval.user_of(case)), case.question, k=10, where=where, strategy=strategy)
            ranked = [h.memory.source_ids[0] for h in hits if h.memory.source_ids]
            rows.append(score_case(case, ranked)["turn_recall@10"])
        return rows

    scores = {label: recalls(params) for label, params in settings.items()}
    keyword = recalls(HybridParams(), Strategy.KEYWORD)
    return scores, [c.question_id for c in cases], [c.question_type for c in cases], keyword


def chosen_on_both(
    locomo_run: tuple[Scores, list[str], list[str], list[float]],
    longmemeval_run: tuple[Scores, list[str], list[str], list[float]],
) -> dict[str, Any]:
    """The leave-one-out estimates when every choice is made on both benchmarks, as the shipped defaults
    were: a LoCoMo fold is scored with the setting best on the other four conversations and all of
    LongMemEval (each benchmark's mean weighing the same), a LongMemEval fold with the setting best on the
    other questions and all of LoCoMo. The held-out fold never takes part in its own choice."""
    locomo, conversations, categories, _ = locomo_run
    longmemeval, ids, types, _ = longmemeval_run
    locomo_means = {label: _mean(values) for label, values in locomo.items()}
    longmemeval_means = {label: _mean(values) for label, values in longmemeval.items()}
    return {
        "locomo_leave_one_conversation_out": held_out(locomo, conversations, categories, other=longmemeval_means),
        "longmemeval_leave_one_question_out": held_out(longmemeval, ids, types, list_folds=False, other=locomo_means),
        "longmemeval_leave_one_type_out": held_out(longmemeval, types, types, other=locomo_means),
    }


def run(
    *,
    locomo_data: str | Path | None = None,
    longmemeval_data: str | Path | None = None,
    store: str | None = None,
    embedder: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Score the grid on the given benchmarks and estimate held-out recall for each."""
    settings = grid()
    result: dict[str, Any] = {"benchmark": "heldout", "grid": list(settings), "default": next(iter(settings))}
    with (
        bench_store(store) as target,
        Memory(
            store=target.url if target.owner_url is None else open_postgres(target),
            embedder=embedder or "static",
            track_access=False,
        ) as memory,
    ):
        started = time.perf_counter()
        locomo_run = None if locomo_data is None else locomo_scores(memory, locomo_data, settings)
        if progress and locomo_run:
            progress(f"LoCoMo: {len(settings)} settings x {len(locomo_run[1])} questions")
        longmemeval_run = None if longmemeval_data is None else longmemeval_scores(memory, longmemeval_data, settings)
        if progress and longmemeval_run:
            progress(f"LongMemEval: {len(settings)} settings x {len(longmemeval_run[1])} questions")
        if locomo_run is not None:
            scores, conversations, categories, keyword = locomo_run
            result["locomo"] = {
                "data": Path(str(locomo_data)).name,
                "questions": len(conversations),
                "in_sample": in_sample(scores),
                "in_sample_by_category": group_means(next(iter(scores.values())), categories),
                "leave_one_conversation_out": held_out(scores, conversations, categories),
                "keyword": {"recall@10": round(_mean(keyword), 4), "by_category": group_means(keyword, categories)},
            }
        if longmemeval_run is not None:
            scores, ids, types, keyword = longmemeval_run
            halves = ["even" if i % 2 == 0 else "odd" for i in range(len(ids))]
            result["longmemeval"] = {
                "data": Path(str(longmemeval_data)).name,
                "questions": len(types),
                "in_sample": in_sample(scores),
                "in_sample_by_type": group_means(next(iter(scores.values())), types),
                "leave_one_question_out": held_out(scores, ids, types, list_folds=False),
                "split_half": held_out(scores, halves, types),
                "leave_one_type_out": held_out(scores, types, types),
                "keyword": {"recall@10": round(_mean(keyword), 4), "by_type": group_means(keyword, types)},
            }
        if locomo_run is not None and longmemeval_run is not None:
            result["both"] = chosen_on_both(locomo_run, longmemeval_run)
        result["store"] = memory.store.url.split("://")[0]
        result["embedder"] = memory.embedder.name
        result["seconds"] = round(time.perf_counter() - started, 1)
    return result
