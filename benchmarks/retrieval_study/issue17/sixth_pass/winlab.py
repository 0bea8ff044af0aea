"""Lab: candidates from the period a query names. Usage: winlab.py N,KW,SLACK ...

For a query that names a period (`core.temporal` windows), a vector search (N best) and a keyword
search (KW best) restricted to memories dated inside the window widened by SLACK x its slack; their
rows replace the tail of the two candidate lists (each list keeps `depth` rows), so the time boost can
lift memories that neither whole-store list held."""
import json, os, sys
from dataclasses import replace
import memstrata.layers.semantic as S
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fourth_pass"))
import lab4  # noqa: E402  (the lab stores and scoring of the fourth pass)

orig = S.SemanticLayer._candidates if hasattr(S, "SemanticLayer") else None
cls = [v for v in vars(S).values() if isinstance(v, type) and hasattr(v, "_candidates")][0]
orig = cls._candidates
CFG = {"n": 0, "kw": 0, "slack": 1.0}
STATS = {"q": 0, "win": 0}

def cands(self, scope, query, strategy, where, depth):
    semantic, keyword = orig(self, scope, query, strategy, where, depth)
    STATS["q"] += 1
    if not CFG["n"] and not CFG["kw"]:
        return semantic, keyword
    windows = S._query_windows(query[:S.MAX_READ_QUERY_CHARS], where.as_of, S._params_of(strategy, self.params))
    if not windows:
        return semantic, keyword
    STATS["win"] += 1
    nsem, nkw = len(semantic), len(keyword)
    seen_s = {r.record.id for r in semantic}
    seen_k = {r.record.id for r in keyword}
    for w in windows:
        sl = w.slack * CFG["slack"]
        lo, hi = w.start - sl, w.end + sl
        if where.created_after: lo = max(lo, where.created_after)
        if where.created_before: hi = min(hi, where.created_before)
        inner = replace(where, created_after=lo, created_before=hi)
        if CFG["n"]:
            vec = self.embedder.embed_query(query[:S.MAX_EMBEDDED_QUERY_CHARS])
            for r in self.store.vector_search(scope.user_id, vec, inner, limit=CFG["n"]):
                if r.record.id not in seen_s:
                    semantic.append(r); seen_s.add(r.record.id)
        if CFG["kw"]:
            for r in self.store.keyword_search(scope.user_id, query, inner, limit=CFG["kw"]):
                if r.record.id not in seen_k:
                    keyword.append(r); seen_k.add(r.record.id)
    depth = self.params.depth
    for lst, base in ((semantic, nsem), (keyword, nkw)):
        extra = lst[base:]
        if extra:
            keep = lst[: max(0, min(base, depth - len(extra)))]
            lst[:] = sorted(keep + extra, key=lambda r: -r.score)
    return semantic, keyword
cls._candidates = cands

for spec in sys.argv[1:]:
    n, kw, slack = spec.split(",")
    CFG.update(n=int(n), kw=int(kw), slack=float(slack))
    res = {}
    for bench in ("locomo", "lme"):
        STATS.update(q=0, win=0)
        with lab4.open_memory(bench) as m:
            rows, out = (lab4.score_locomo if bench == "locomo" else lab4.score_lme)(m)
        out.pop("conv", None)
        res[bench] = (out, dict(STATS))
        json.dump(rows, open(f"rowswin_{bench}_{spec}.json", "w"))
    print(spec, json.dumps(res), flush=True)
