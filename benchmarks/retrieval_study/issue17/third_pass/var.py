import sys, json, time, math, statistics as st
from collections import Counter, defaultdict
from dataclasses import replace
import numpy as np
from lab import open_memory, load, DATA, summary
from memstrata.models import Scope
from memstrata.bench.locomo_data import evidence_recall
from memstrata.layers.semantic import SemanticMemory, Strategy, _rank, _query_windows, _scoped, MAX_READ_QUERY_CHARS
from memstrata.core.retrieval import HybridParams
from memstrata.core.text import words, STOPWORDS, stem
from memstrata.storage.base import MemoryFilter, ScoredRow
from memstrata.core.scoring import min_max

convs = load(DATA)
m = open_memory()
P = HybridParams()
layer = SemanticMemory(store=m.store, embedder=m.embedder, clock=m.clock, track_access=False, params=P)
store, emb = m.store, m.embedder

def rank(q, sem, kw, at, params=P):
    windows = _query_windows(q, at, params)
    return _rank(Strategy.HYBRID, q, sem, kw, now=at, decay_rate=0.01, params=params,
                 named=frozenset(w.casefold() for w in words(q)), windows=windows)

def terms_of(text):
    out = []
    for w in words(text):
        w0 = w.split("'")[0]
        if w0 and w0 not in STOPWORDS and not w0.isdigit() and len(w0) > 2:
            out.append(w0)
    return out

def strip_speaker(text):
    return text.split(": ", 1)[1] if ": " in text[:40] else text

def run(variant, **kw_):
    rows = []
    t0 = time.perf_counter()
    for c in convs:
        sc = Scope(f"locomo-{c.sample_id}")
        user = sc.user_id
        speakers = {t.speaker.casefold() for t in c.turns}
        for q in c.questions:
            at = m.clock()
            where = replace(MemoryFilter(), as_of=at)
            sem, kw = layer._candidates(sc, q.question, Strategy.HYBRID, where, 50)
            hits = variant(q.question, sem, kw, at, user, where, speakers, **kw_)
            prov = [h.memory.source_ids for h in hits]
            rows.append(dict(conv=c.sample_id, cat=q.category, r10=evidence_recall(q.evidence, prov, 10)))
    return rows, time.perf_counter() - t0

def base(q, sem, kw, at, user, where, speakers):
    return rank(q, sem, kw, at)

def expansion(hits, q, speakers, m_docs, n_terms, use_ctx=False):
    qstems = {stem(w) for w in terms_of(q)}
    weight = Counter(); surface = {}
    top = hits[:m_docs]
    scores = [h.score for h in top]
    z = sum(scores) or 1.0
    for h in top:
        text = strip_speaker(h.memory.content)
        if use_ctx: text += " " + h.memory.context
        ts = [t for t in terms_of(text) if t not in speakers]
        if not ts: continue
        cnt = Counter(stem(t) for t in ts)
        for t in ts: surface.setdefault(stem(t), t)
        for s_, n in cnt.items():
            if s_ in qstems: continue
            weight[s_] += (h.score / z) * n / len(ts)
    return [(surface[s_], w) for s_, w in weight.most_common(n_terms)]

def combine(a, b, gamma):
    """minmax(a) + gamma*minmax(b) as one list of ScoredRow"""
    na = min_max([(r.record.id, r.score) for r in a]); nb = min_max([(r.record.id, r.score) for r in b])
    recs = {r.record.id: r.record for r in [*a, *b]}
    sc = {i: na.get(i, 0.0) + gamma * nb.get(i, 0.0) for i in recs}
    return sorted((ScoredRow(recs[i], s) for i, s in sc.items()), key=lambda r: -r.score)

def kwprf(q, sem, kw, at, user, where, speakers, m_docs=5, n_terms=10, gamma=0.3, mode="third", use_ctx=False):
    hits = rank(q, sem, kw, at)
    exp = expansion(hits, q, speakers, m_docs, n_terms, use_ctx)
    if not exp: return hits
    if mode == "third":
        kw2 = store.keyword_search(user, " ".join(t for t, _ in exp), where, limit=50)
        return rank(q, sem, combine(kw, kw2, gamma), at)
    else:
        kw2 = store.keyword_search(user, q + " " + " ".join(t for t, _ in exp), where, limit=50)
        return rank(q, sem, kw2, at)

def rocchio(q, sem, kw, at, user, where, speakers, m_docs=5, beta=0.5, pool_only=False, mix=None):
    hits = rank(q, sem, kw, at)
    qv = np.asarray(emb.embed_query(q), dtype=np.float32).reshape(-1)
    docs = [h.memory.content for h in hits[:m_docs]]
    dv = np.asarray(emb.embed_documents(docs), dtype=np.float32)
    cen = dv.mean(axis=0)
    qn = qv / (np.linalg.norm(qv) or 1); cn = cen / (np.linalg.norm(cen) or 1)
    q2 = qn + beta * cn
    q2 = q2 / np.linalg.norm(q2)
    if pool_only:
        recs = {r.record.id: r.record for r in [*kw, *sem]}
        ids = list(recs)
        V = np.asarray(emb.embed_documents([recs[i].content for i in ids]), dtype=np.float32)
        s = V @ q2
        sem2 = sorted((ScoredRow(recs[i], float(x)) for i, x in zip(ids, s)), key=lambda r: -r.score)[:50]
    else:
        sem2 = store.vector_search(user, q2.tolist(), where, limit=50)
    if mix is not None:
        return rank(q, sem, combine(kw, sem2, mix), at)
    return rank(q, sem2, kw, at)

def session_ev(q, sem, kw, at, user, where, speakers, lam=0.3, top=1):
    hits = rank(q, sem, kw, at)
    by = defaultdict(list)
    for h in hits: by[h.memory.scope.session_id].append(h.score)
    sess = {s_: sum(sorted(v, reverse=True)[:top]) / top for s_, v in by.items()}
    mx = max(sess.values()) or 1
    out = sorted(hits, key=lambda h: -(h.score + lam * sess[h.memory.scope.session_id] / mx * max(x.score for x in hits)))
    return out


def adjacent(q, sem, kw, at, user, where, speakers, pen=0.3, span=2):
    hits = rank(q, sem, kw, at)
    placed = []  # (session, turn)
    pool = [[h.score, n, h] for n, h in enumerate(hits)]
    out = []
    while pool:
        for p in pool:
            h = p[2]; s_ = h.memory.scope.session_id; t = h.memory.metadata.get("turn")
            near = sum(1 for (ss, tt) in placed if ss == s_ and abs(tt - t) <= span)
            p[0] = h.score * (1 - pen) ** near
        pool.sort(key=lambda p: (-p[0], p[1]))
        p = pool.pop(0); out.append(p[2]); placed.append((p[2].memory.scope.session_id, p[2].memory.metadata.get("turn")))
        if len(out) >= 10: out += [p[2] for p in pool]; break
    return out


def sess_scores(hits, lam, top=1):
    by = defaultdict(list)
    for h in hits: by[h.memory.scope.session_id].append(h.score)
    sess = {s_: sum(sorted(v, reverse=True)[:top]) / top for s_, v in by.items()}
    mx = max(x.score for x in hits) if hits else 1
    return sorted(hits, key=lambda h: -(h.score + lam * sess[h.memory.scope.session_id]))

def session2(q, sem, kw, at, user, where, speakers, lam=0.2, top=1, first=None, **kw_):
    hits = (first or base)(q, sem, kw, at, user, where, speakers, **kw_)
    return sess_scores(hits, lam, top)

def combo(q, sem, kw, at, user, where, speakers, lam=0.2, beta=0.5, m_docs=5):
    hits = rocchio(q, sem, kw, at, user, where, speakers, m_docs=m_docs, beta=beta)
    return sess_scores(hits, lam)

import re as _re
def noname(q, sem, kw, at, user, where, speakers, also_kw=False, post=None, **kw_):
    q2 = q
    for sp in speakers:
        q2 = _re.sub(r"\b" + _re.escape(sp) + r"(?:'s)?\b", " ", q2, flags=_re.I)
    q2 = " ".join(q2.split())
    qv = emb.embed_query(q2)
    sem2 = store.vector_search(user, qv, where, limit=50)
    kw2 = store.keyword_search(user, q2, where, limit=50) if also_kw else kw
    hits = rank(q, sem2, kw2, at)
    if post: hits = sess_scores(hits, post)
    return hits

def noname2(q, sem, kw, at, user, where, speakers, vw=0.3, post=None, beta=0.0, m_docs=5, top=1):
    q2 = q
    for sp in speakers:
        q2 = _re.sub(r"\b" + _re.escape(sp) + r"(?:'s)?\b", " ", q2, flags=_re.I)
    q2 = " ".join(q2.split())
    params = replace(P, vector_weight=vw)
    qv = np.asarray(emb.embed_query(q2), dtype=np.float32).reshape(-1)
    sem2 = store.vector_search(user, qv.tolist(), where, limit=50)
    hits = rank(q, sem2, kw, at, params)
    if beta:
        dv = np.asarray(emb.embed_documents([h.memory.content for h in hits[:m_docs]]), dtype=np.float32)
        cen = dv.mean(axis=0); cen /= (np.linalg.norm(cen) or 1); qn = qv / (np.linalg.norm(qv) or 1)
        q3 = qn + beta * cen; q3 /= np.linalg.norm(q3)
        sem3 = store.vector_search(user, q3.tolist(), where, limit=50)
        hits = rank(q, sem3, kw, at, params)
    if post: hits = sess_scores(hits, post, top)
    return hits

from memstrata.core.text import query_terms
def vecq(q, sem, kw, at, user, where, speakers, mode="terms", vw=0.3):
    q2 = q
    for sp in speakers:
        q2 = _re.sub(r"\b" + _re.escape(sp) + r"(?:'s)?\b", " ", q2, flags=_re.I)
    if mode == "terms":
        q2 = " ".join(query_terms(q2))
    elif mode == "nowh":
        q2 = _re.sub(r"^(what|when|where|who|how|why|which|did|does|do|is|are|was|were|has|have|would|could)\b( \w+)?", "", q2.strip(), flags=_re.I)
    q2 = " ".join(q2.split()) or q
    qv = emb.embed_query(q2)
    sem2 = store.vector_search(user, qv, where, limit=50)
    return rank(q, sem2, kw, at, replace(P, vector_weight=vw))

def deep(q, sem, kw, at, user, where, speakers, depth=100):
    L = SemanticMemory(store=store, embedder=emb, clock=m.clock, track_access=False, params=replace(P, depth=depth))
    s2, k2 = L._candidates(Scope(user), q, Strategy.HYBRID, where, depth)
    return rank(q, s2, k2, at, replace(P, depth=depth))
VARIANTS = {}
if __name__ == "__main__":
    spec = sys.argv[1]
    fn, args = spec.split(":", 1) if ":" in spec else (spec, "")
    kwargs = eval(f"dict({args})")
    rows, dt = run(globals()[fn], **kwargs)
    s = summary(rows)
    print(spec, s, f"{dt:.1f}s", flush=True)
    json.dump(rows, open(f"./rows_{spec.replace(':','_').replace(',','_').replace('=','')}.json", "w"))
