"""Scratch lab, issue 17 fifth pass: capture every question's hybrid candidates with their features.

    python capture.py locomo|lme      # needs locomo4.db / lme4.db from ../fourth_pass/lab4.py ingest (cwd)

Searches every question with the default `hybrid` search (k = 50, as `lab4.py score` does) and, around the
layer's `_rank`, records each candidate of the union of both lists (depth 50): its raw and normalized
keyword / vector scores and ranks, the default ranking's score and rank, what the boosts know (speaker, role,
time match, "states a time"), its session and turn, its text's length and overlap with the query, and its
provenance (for scoring recall). Writes `cands_<bench>.pkl`: one dict per question. `ltr.py` fits on it.
"""

import os
import pickle
import sys

from memstrata.bench import longmemeval
from memstrata.bench.locomo_data import load as load_locomo
from memstrata.bench.longmemeval_data import load as load_lme
from memstrata.core.diversity import asked_role
from memstrata.core.retrieval import HybridParams, named_speakers, normalize
from memstrata.core.temporal import asks_when, window_matches
from memstrata.core.text import unique_content_terms
from memstrata.layers import semantic
from memstrata.layers.time_cues import TimeCues
from memstrata.memory import Memory
from memstrata.models import Scope

LOCOMO = os.environ.get("LOCOMO", "/work/shared/data/locomo/locomo-dev.json")
LME = os.environ.get("LONGMEMEVAL", "/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz")
DB = {"locomo": "./locomo4.db", "lme": "./lme4.db"}

CAPTURED: list[dict] = []
_original_rank = semantic._rank


def _capturing_rank(strategy, query, sem_rows, kw_rows, **options):
    hits = _original_rank(strategy, query, sem_rows, kw_rows, **options)
    params = HybridParams()
    records = {r.record.id: r.record for r in [*kw_rows, *sem_rows]}
    kw = [(r.record.id, r.score) for r in kw_rows][: params.depth]
    vec = [(r.record.id, r.score) for r in sem_rows][: params.depth]
    kw_norm, vec_norm = normalize(kw), normalize(vec)
    kw_raw, vec_raw = dict(kw), dict(vec)
    kw_rank = {i: r for r, (i, _) in enumerate(kw)}
    vec_rank = {i: r for r, (i, _) in enumerate(vec)}
    base = {h.memory.id: (rank, h.score) for rank, h in enumerate(hits)}
    speakers = {i: r.metadata.get("speaker") for i, r in records.items()}
    named = named_speakers(query, (s for s in speakers.values() if isinstance(s, str)))
    cues = options.get("cues") or TimeCues()
    windows = options.get("windows") or ()
    all_ids = {i: 1.0 for i in records}
    matches = window_matches(all_ids, {i: r.created_at for i, r in records.items()}, windows,
                             {i: cues.periods(r) for i, r in records.items()} if windows else {})
    q_terms = set(unique_content_terms(query))
    role = asked_role(query)
    cands = []
    for i, rec in records.items():
        terms = set(unique_content_terms(rec.content))
        ctx_terms = set(unique_content_terms(rec.context or ""))
        cands.append({
            "id": i,
            "prov": list(rec.source_ids),
            "kw_raw": kw_raw.get(i), "vec_raw": vec_raw.get(i),
            "kw_norm": kw_norm.get(i, 0.0), "vec_norm": vec_norm.get(i, 0.0),
            "kw_rank": kw_rank.get(i), "vec_rank": vec_rank.get(i),
            "base_rank": base[i][0] if i in base else None, "base_score": base[i][1] if i in base else 0.0,
            "speaker_named": speakers.get(i) in named,
            "role": rec.metadata.get("role"), "role_match": role is not None and rec.metadata.get("role") == role,
            "time_match": matches.get(i, 0.0),
            "timed": bool(cues.states_time(rec)),
            "session": rec.scope.session_id, "turn": rec.metadata.get("turn"),
            "created": rec.created_at.timestamp(),
            "n_words": len(rec.content.split()),
            "has_q": "?" in rec.content,
            "q_overlap": len(q_terms & terms) / max(1, len(q_terms)),
            "q_overlap_ctx": len(q_terms & ctx_terms) / max(1, len(q_terms)),
        })
    CAPTURED.append({
        "query": query, "named": sorted(named), "asks_when": asks_when(query), "role": role,
        "has_window": bool(windows), "n_terms": len(q_terms), "cands": cands,
    })
    return hits


semantic._rank = _capturing_rank


def capture(bench):
    out = []
    with Memory(store=DB[bench], embedder="static", track_access=False) as m:
        if bench == "locomo":
            for c in load_locomo(LOCOMO):
                scope = Scope(f"locomo-{c.sample_id}")
                for q in c.questions:
                    CAPTURED.clear()
                    m.search(q.question, scope=scope, k=50)
                    out.append({**CAPTURED[-1], "group": c.sample_id, "cat": q.category,
                                "evidence": list(q.evidence)})
        else:
            for case in load_lme(LME):
                CAPTURED.clear()
                longmemeval.search(m, case, k=50)
                out.append({**CAPTURED[-1], "group": case.question_type, "qid": case.question_id})
    with open(f"cands_{bench}.pkl", "wb") as f:
        pickle.dump(out, f)
    print(bench, len(out), "questions,", sum(len(q["cands"]) for q in out), "candidates")


if __name__ == "__main__":
    capture(sys.argv[1])
