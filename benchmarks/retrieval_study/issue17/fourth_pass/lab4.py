"""Scratch lab, issue 17 fourth pass: what the vector of a stored turn holds (candidate generation).

    python lab4.py ingest locomo|lme          # one ingest with the checkout's code into locomo4.db / lme4.db
    python lab4.py score locomo|lme VARIANT.. # rewrite every vector as VARIANT says, then search every question

VARIANT: `content` (v(turn)), `blend:a` (normalize(v(turn) + a * v(context))), `prev:a` (the same with
the previous turn only), `joined` (v("context\nturn")). Vectors are rewritten in place in the lab store
(the keyword index is untouched), so one ingest serves every variant. Rows go to rows4_<bench>_<variant>.json.
"""

import hashlib
import json
import os
import sqlite3
import statistics as st
import sys
import time

import numpy as np

from memstrata.bench import locomo, longmemeval
from memstrata.bench.locomo_data import evidence_recall
from memstrata.bench.locomo_data import load as load_locomo
from memstrata.bench.longmemeval_data import load as load_lme
from memstrata.bench.longmemeval_data import score_case
from memstrata.embedders.base import normalize_rows
from memstrata.memory import Memory
from memstrata.models import Scope

LOCOMO = os.environ.get("LOCOMO", "/work/shared/data/locomo/locomo-dev.json")
LME = os.environ.get("LONGMEMEVAL", "/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz")
DB = {"locomo": "./locomo4.db", "lme": "./lme4.db"}


def open_memory(bench):
    return Memory(store=DB[bench], embedder="static", track_access=False)


def ingest(bench):
    with open_memory(bench) as m:
        t = time.perf_counter()
        if bench == "locomo":
            for c in load_locomo(LOCOMO):
                m.store.erase_user(f"locomo-{c.sample_id}")
                locomo.ingest(m, c)
        else:
            for case in load_lme(LME):
                longmemeval.ingest(m, case, "turn")
        print("ingest", bench, round(time.perf_counter() - t, 1), "s")


def set_keyword_context(bench, how):
    """`prev2` (as ingested: the two turns before) or `prev2next1` (and the turn after): the context column."""
    conn = sqlite3.connect(DB[bench])
    rows = conn.execute("SELECT user_id, id, content, session_id, json_extract(metadata, '$.turn') FROM memories").fetchall()
    by_pos = {(r[0], r[3], r[4]): r[2] for r in rows}
    updates = []
    for user, mid, _content, session, turn in rows:
        before = [by_pos.get((user, session, turn - i)) for i in (2, 1)]
        parts = [b for b in before if b]
        if how == "prev2next1" and by_pos.get((user, session, turn + 1)):
            parts.append(by_pos[(user, session, turn + 1)])
        updates.append((" ".join(parts), user, mid))
    conn.executemany("UPDATE memories SET context = ? WHERE user_id = ? AND id = ?", updates)
    conn.commit()
    conn.close()


def rewrite(bench, variant, embedder):
    if variant.startswith("kwctx:"):
        return set_keyword_context(bench, variant.split(":")[1])
    conn = sqlite3.connect(DB[bench])
    rows = conn.execute(
        "SELECT user_id, id, content, context, session_id, json_extract(metadata, '$.turn') FROM memories ORDER BY rowid"
    ).fetchall()
    def embedded(name, texts):  # embeddings cached per lab store (the ingest fixes the texts)
        digest = hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:10]
        path = f"{DB[bench]}.{name}.{digest}.npy"
        if not os.path.exists(path):
            np.save(path, embedder.embed_documents(texts))
        return np.load(path)

    content = embedded("content", [r[2] for r in rows])
    if variant == "content":
        vectors = content
    elif variant == "joined":
        vectors = embedded("joined", [(r[3] + "\n" + r[2]).strip() for r in rows])
    else:
        name, a, *limit = variant.split(":")
        if name in ("blend", "short"):
            ctx = [r[3] for r in rows]
        elif name == "tail":  # the context's last `limit` words (the end of the turn just before)
            ctx = [" ".join(r[3].split()[-int(limit[0]):]) for r in rows]
        else:  # prev / next: the turn before / after, same user and session
            by_pos = {(r[0], r[4], r[5]): r[2] for r in rows}
            step = -1 if name == "prev" else 1
            ctx = [by_pos.get((r[0], r[4], (r[5] or 0) + step), "") for r in rows]
        cv = embedded(f"tail{limit[0]}" if name == "tail" else "blend" if name == "short" else name,
                      [c or "" for c in ctx])
        weight = np.full((len(rows), 1), float(a), dtype=np.float32)
        if name == "short":  # only turns of at most `limit` words take their context
            weight[[len(r[2].split()) > int(limit[0]) for r in rows]] = 0.0
            name = "blend"
        vectors = normalize_rows(content + weight * cv)
    conn.executemany(
        "UPDATE memories SET embedding = ? WHERE user_id = ? AND id = ?",
        [(v.astype(np.float32).tobytes(), r[0], r[1]) for v, r in zip(vectors, rows, strict=True)],
    )
    conn.execute("UPDATE vector_versions SET version = version + 1")
    conn.commit()
    conn.close()


def score_locomo(m):
    rows = []
    for c in load_locomo(LOCOMO):
        scope = Scope(f"locomo-{c.sample_id}")
        for q in c.questions:
            hits = m.search(q.question, scope=scope, k=50)
            prov = [h.memory.source_ids for h in hits]
            rows.append({"conv": c.sample_id, "cat": q.category, "r10": evidence_recall(q.evidence, prov, 10),
                         "r50": evidence_recall(q.evidence, prov, 50)})
    out = {"all": round(st.mean(r["r10"] for r in rows), 4), "r50": round(st.mean(r["r50"] for r in rows), 4)}
    for cat in "1234":
        out["c" + cat] = round(st.mean(r["r10"] for r in rows if r["cat"] == cat), 3)
    out["conv"] = [round(st.mean(r["r10"] for r in rows if r["conv"] == c), 3) for c in sorted({r["conv"] for r in rows})]
    return rows, out


def score_lme(m):
    rows = []
    for case in load_lme(LME):
        ranked = longmemeval.search(m, case, k=50)
        rows.append({"type": case.question_type, **score_case(case, ranked)})
    out = {"turn_r10": round(st.mean(r["turn_recall@10"] for r in rows if "turn_recall@10" in r), 4),
           "all10": round(st.mean(r["session_recall_all@10"] for r in rows), 4)}
    for t in sorted({r["type"] for r in rows}):
        out[t] = round(st.mean(r["turn_recall@10"] for r in rows if r["type"] == t and "turn_recall@10" in r), 3)
    return rows, out


if __name__ == "__main__":
    command, bench = sys.argv[1], sys.argv[2]
    if command == "ingest":
        ingest(bench)
        sys.exit()
    for variant in sys.argv[3:]:
        with open_memory(bench) as m:
            rewrite(bench, variant, m.embedder)
        with open_memory(bench) as m:
            t = time.perf_counter()
            rows, out = (score_locomo if bench == "locomo" else score_lme)(m)
        json.dump(rows, open(f"rows4_{bench}_{os.environ.get('TAG', '')}{variant.replace(':', '_')}.json", "w"))
        print(bench, variant, json.dumps(out), round(time.perf_counter() - t, 1), "s", flush=True)
