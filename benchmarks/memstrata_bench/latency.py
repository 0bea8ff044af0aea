"""`memstrata-bench latency`: add throughput and search/context latency at a given size.

One run = one store holding `memories` synthetic memories spread evenly over `users` users:

1. **load** — the corpus goes in through `Memory.add_many` in batches (`dedupe=False`: bulk import).
   On a throwaway PostgreSQL database larger than `DEFER_INDEX_AT` rows the HNSW index is dropped
   before the load and rebuilt after it (the documented bulk-import recipe: COPY/insert first,
   index after); the rebuild time is reported as `index_build_s`.
2. **add** — at that size, `add_per_s` is memories/s of `add_many` batches of `ADD_BATCH` fresh memories
   with the default `dedupe=True` (batch mode); `add_messages_per_s` is chat messages/s of `add_messages`
   batches of `ADD_BATCH` turns (buffer, episode log, summary folding); `add_one_ms_*` is one `add()` at a time.
3. **search** — `queries` sampled queries (hybrid, k=10, the default `Memory.search`). Every query is
   timed three ways: the query embedding alone (`embed_ms_*`), the whole `search()` with its embedding
   (`search_ms_*`) and `search()` with the vector precomputed (`search_no_embed_ms_*`, i.e. excluding
   embedding). The two searches alternate order from query to query so neither always runs warm.
   The store calls inside a search are then timed alone on the same queries: `store_vector_ms_*`,
   `store_keyword_ms_*` (top 50 each), `store_hybrid_ms_*` (both in the one read a hybrid search makes,
   `Store.hybrid_candidates`) and `store_access_ms_*` (recording the access of the top k).
   A throwaway Postgres store is ANALYZEd after the load, as autovacuum would soon do in production.
4. **context** — `Memory.context(query, 1000, scope=...)` for `context_queries` queries (when available).
5. **footprint** — resident memory of this process (`rss_*`) and bytes on disk per memory.

`busy_cores` > 0 keeps that many CPU cores busy with spinning processes while steps 3 and 4 are timed:
the same point under a known extra load (this machine is shared; the default is a quiet run).

The corpus is synthetic and deterministic (seeded): each memory is 6-18 content words drawn with a
Zipf-Mandelbrot law (rank offset 100, where English stopwords would sit) from the vocabulary of the
bundled static model's tokenizer, interleaved with about 40 % stopwords, so it looks like chat text
to the full-text index (the most common content word is in ~3 % of memories, as in real text);
each query is 4 content words of a stored memory plus one random word. Nothing is downloaded.
"""

from __future__ import annotations

import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from memstrata import ConfigurationError, InvalidInput, MemoryKind, NewMemory, Scope, StoreError
from memstrata.core.text import STOPWORDS
from memstrata.embedders.base import Embedder, Vectors

from .report import latency_summary
from .selfrun import memstrata_source

DEFAULT_QUERIES = 200
DEFAULT_CONTEXT_QUERIES = 50
LOAD_BATCH = 1000
ADD_BATCH = 256
ADD_BATCHES = 4
ADD_ONE = 30
WARMUP = 10
DEFER_INDEX_AT = 20_000
CONTEXT_TOKENS = 1000
ZIPF_EXPONENT = 1.1
ZIPF_OFFSET = 100
STOPWORD_SHARE = 0.4
ADMIN_ENV = ("MEMSTRATA_BENCH_POSTGRES_URL", "MEMSTRATA_TEST_POSTGRES_URL")
DEFAULT_ADMIN_URL = "postgresql://root@127.0.0.1:5432/postgres"
POSTGRES_KINDS = ("postgres", "citus")
"""Bench store kinds that are the PostgreSQL store (`citus`: a throwaway schema distributed on Citus)."""
_WORD = re.compile(r"^[a-z]{3,12}$")
_FILLERS = sorted(w for w in STOPWORDS if "'" not in w and len(w) > 1)

Progress = Callable[[str, float], None]
"""progress(stage, fraction done in [0, 1])."""


# -- synthetic corpus (pure) ----------------------------------------------------------------------
def vocabulary(tokens: Sequence[str]) -> list[str]:
    """Whole lower-case words of 3-12 letters that are not stopwords, in the order given."""
    return [t for t in dict.fromkeys(tokens) if _WORD.match(t) and t not in STOPWORDS]


def model_vocabulary() -> list[str]:
    """`vocabulary` of the bundled static model's tokenizer (in token-id order, roughly by frequency)."""
    import json

    from memstrata.embedders.static import DEFAULT_MODEL_DIR

    raw = json.loads((DEFAULT_MODEL_DIR / "tokenizer.json").read_text(encoding="utf-8"))
    vocab: dict[str, int] = raw["model"]["vocab"]
    return vocabulary(sorted(vocab, key=vocab.__getitem__))


def zipf_weights(n: int, exponent: float = ZIPF_EXPONENT, offset: int = ZIPF_OFFSET) -> np.ndarray:
    """Probabilities of ranks 1..n under a Zipf-Mandelbrot law, p(r) ~ 1 / (r + offset) ** exponent."""
    if n < 1:
        raise InvalidInput("a vocabulary needs at least one word")
    weights = 1.0 / (np.arange(1, n + 1, dtype=np.float64) + offset) ** exponent
    return np.asarray(weights / weights.sum())


def synthetic_texts(
    rng: np.random.Generator,
    words: Sequence[str],
    weights: np.ndarray,
    count: int,
    *,
    lo: int = 6,
    hi: int = 18,
) -> list[str]:
    """`count` texts of `lo`..`hi` words drawn from `words` with `weights` (deterministic given the rng)."""
    lengths = rng.integers(lo, hi + 1, size=count)
    picks = rng.choice(len(words), size=int(lengths.sum()), p=weights)
    fillers = rng.choice(len(_FILLERS), size=int(lengths.sum()))
    glue = rng.random(int(lengths.sum())) < STOPWORD_SHARE / (1 - STOPWORD_SHARE)
    texts, start = [], 0
    for length in lengths:
        parts = []
        for i in range(start, start + length):
            if glue[i]:
                parts.append(_FILLERS[fillers[i]])
            parts.append(words[picks[i]])
        start += length
        text = " ".join(parts)
        texts.append(text[0].upper() + text[1:] + ".")
    return texts


def make_query(rng: np.random.Generator, text: str, words: Sequence[str]) -> str:
    """Four content words of a stored text plus one random word: a query that has a right answer."""
    own = [w for w in text.rstrip(".").lower().split() if w not in STOPWORDS] or text.lower().split()
    picked = [own[i] for i in sorted(rng.choice(len(own), size=min(4, len(own)), replace=False))]
    return " ".join([*picked, words[int(rng.integers(len(words)))]])


def spread(memories: int, users: int) -> list[int]:
    """How many memories each user gets: as even as possible, larger shares first."""
    if memories < 1 or users < 1:
        raise InvalidInput(f"need at least one memory and one user, got {memories} memories, {users} users")
    if users > memories:
        raise InvalidInput(f"{users} users cannot each hold a memory of {memories}")
    base, extra = divmod(memories, users)
    return [base + (1 if i < extra else 0) for i in range(users)]


def user_id(run: str, index: int) -> str:
    return f"bench-{run}-{index:06d}"


# -- process footprint ----------------------------------------------------------------------------
def parse_status(text: str) -> dict[str, int]:
    """Bytes of VmRSS / VmHWM from the text of /proc/<pid>/status (absent keys are left out)."""
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM") and value.strip().endswith("kB"):
            found[key] = int(value.split()[0]) * 1024
    return found


def rss_bytes() -> dict[str, int]:
    """Current and peak resident memory of this process (Linux /proc; ru_maxrss elsewhere)."""
    try:
        return parse_status(Path("/proc/self/status").read_text(encoding="ascii"))
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        return {"VmHWM": int(peak)}


# -- embedder wrapper -------------------------------------------------------------------------------
class TimedEmbedder:
    """Delegates to `inner`, but can answer queries from precomputed vectors (to time search without
    embedding). Same name and dimensions as `inner`, so the store accepts it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.precomputed: dict[str, Vectors] = {}
        self.use_precomputed = False

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str, /) -> Vectors:
        if self.use_precomputed and text in self.precomputed:
            return self.precomputed[text]
        return self.inner.embed_query(text)


# -- stores -----------------------------------------------------------------------------------------
@dataclass
class BenchStore:
    """Where a run writes: the store URL, an owner URL for DDL (throwaway Postgres), and cleanup."""

    kind: str
    url: str
    owner_url: str | None = None
    path: Path | None = None
    throwaway: bool = True
    notes: list[str] = field(default_factory=list)


def admin_url() -> str:
    return next((os.environ[v] for v in ADMIN_ENV if os.environ.get(v)), DEFAULT_ADMIN_URL)


@contextmanager
def throwaway_postgres(admin: str | None = None) -> Iterator[tuple[str, str]]:
    """A fresh database with pgvector, an owner role and a NOSUPERUSER NOBYPASSRLS app role;
    yields (app_url, owner_url) and drops everything afterwards."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict

    admin = admin or admin_url()
    suffix = secrets.token_hex(4)
    dbname, owner, app = (
        f"memstrata_bench_{suffix}",
        f"memstrata_bench_owner_{suffix}",
        f"memstrata_bench_app_{suffix}",
    )
    passwords = {owner: secrets.token_hex(8), app: secrets.token_hex(8)}
    params = conninfo_to_dict(admin)
    host, port = params.get("host") or "127.0.0.1", params.get("port") or 5432

    def url(role: str) -> str:
        return f"postgresql://{quote(role)}:{quote(passwords[role])}@{host}:{port}/{dbname}"

    try:
        conn = psycopg.connect(admin, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach PostgreSQL for a throwaway benchmark database: {exc}") from exc
    with conn:
        for role in (owner, app):
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(passwords[role])
                )
            )
        try:
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(dbname), sql.Identifier(owner)))
            with psycopg.connect(admin, autocommit=True, dbname=dbname) as db:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            yield url(app), url(owner)
        finally:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))
            for role in (app, owner):
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@contextmanager
def bench_store(spec: str | None) -> Iterator[BenchStore]:
    """`sqlite` (default), `postgres` or `citus` = a throwaway store; any other value is a store URL used as is."""
    spec = spec or "sqlite"
    if spec == "sqlite":
        with tempfile.TemporaryDirectory(prefix="memstrata-bench-") as tmp:
            path = Path(tmp) / "bench.db"
            yield BenchStore("sqlite", f"sqlite:///{path}", path=path)
    elif spec in ("postgres", "postgresql"):
        with throwaway_postgres() as (app, owner):
            yield BenchStore("postgres", app, owner_url=owner)
    elif spec == "citus":
        from .citus_store import throwaway_citus

        with throwaway_citus() as (app, owner):
            yield BenchStore("citus", app, owner_url=owner)
    elif spec.startswith(("postgresql://", "postgres://")):
        yield BenchStore("postgres", spec, throwaway=False)
    elif spec.startswith("sqlite://"):
        path = Path(spec.removeprefix("sqlite://").removeprefix("/"))
        yield BenchStore("sqlite", spec, path=path, throwaway=False)
    else:
        raise ConfigurationError(f"--store must be sqlite, postgres, citus or a store URL, got {spec!r}")


def disk_bytes(target: BenchStore) -> int | None:
    """Bytes the store occupies: SQLite file + WAL; Postgres memories + history tables with indexes."""
    if target.kind == "sqlite" and target.path is not None:
        return sum(p.stat().st_size for p in (target.path, Path(f"{target.path}-wal")) if p.exists())
    if target.kind in POSTGRES_KINDS and target.owner_url is not None:
        import psycopg

        size = "citus_total_relation_size" if target.kind == "citus" else "pg_total_relation_size"
        with psycopg.connect(target.owner_url, autocommit=True) as conn:
            row = conn.execute(f"SELECT {size}('memories') + {size}('history')").fetchone()
        return int(row[0]) if row else None
    return None


@contextmanager
def deferred_vector_index(target: BenchStore, enabled: bool) -> Iterator[dict[str, float]]:
    """Drop the HNSW index(es) on `memories` for a bulk load, rebuild them after, time the rebuild."""
    timing: dict[str, float] = {}
    if not enabled or target.kind not in POSTGRES_KINDS or target.owner_url is None:
        yield timing
        return
    import psycopg

    with psycopg.connect(target.owner_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memories' AND indexdef ILIKE '%using hnsw%'"
        ).fetchall()
        for name, _ in rows:
            conn.execute(f'DROP INDEX "{name}"')
    yield timing
    with psycopg.connect(target.owner_url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")
        started = time.perf_counter()
        for _, definition in rows:
            conn.execute(definition)
        timing["index_build_s"] = round(time.perf_counter() - started, 2)


def analyze(target: BenchStore) -> float | None:
    """ANALYZE a throwaway Postgres store after its bulk load (what autovacuum does within minutes in
    production), so the planner sees the real table; returns the seconds it took."""
    if target.kind not in POSTGRES_KINDS or target.owner_url is None:
        return None
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(target.owner_url, autocommit=True) as conn:
        conn.execute("ANALYZE memories")
        conn.execute("ANALYZE history")
    return round(time.perf_counter() - started, 2)


# -- the run ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LatencyConfig:
    memories: int
    users: int
    queries: int = DEFAULT_QUERIES
    context_queries: int = DEFAULT_CONTEXT_QUERIES
    k: int = 10
    seed: int = 7
    defer_index: bool = True
    load_batch: int = LOAD_BATCH
    posting_budget: int | None = -1
    """SQLite keyword posting budget (`SQLiteStore.posting_budget`): -1 keeps the store's default, None = no limit."""
    busy_cores: int = 0
    """Spinning processes kept running while search and context are timed (`busy_cores`)."""


@contextmanager
def busy_cores(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Keep `count` CPU cores busy inside the block: one spinning Python process each (yielded)."""
    if count < 0:
        raise InvalidInput(f"busy cores must be 0 or more, got {count}")
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield spinners
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _load(
    memory: Any,
    config: LatencyConfig,
    run: str,
    words: list[str],
    weights: np.ndarray,
    rng: np.random.Generator,
    progress: Progress | None,
) -> tuple[float, list[tuple[str, str]]]:
    """Load the corpus; return (seconds, sampled (user, text) pairs to build queries from)."""
    shares = spread(config.memories, config.users)
    wanted = max(config.queries + WARMUP, config.context_queries) * 2
    keep = min(1.0, wanted / config.memories * 1.5)
    samples: list[tuple[str, str]] = []
    done, started = 0, time.perf_counter()
    for index, share in enumerate(shares):
        user = user_id(run, index)
        for start in range(0, share, config.load_batch):
            texts = synthetic_texts(rng, words, weights, min(config.load_batch, share - start))
            items = [NewMemory(content=t, kind=MemoryKind.FACT) for t in texts]
            memory.add_many(items, scope=Scope(user_id=user), dedupe=False)
            samples.extend((user, t) for t in texts if rng.random() < keep)
            done += len(texts)
            if progress:
                progress("load", done / config.memories)
    return time.perf_counter() - started, samples


def _add_rates(
    memory: Any, config: LatencyConfig, run: str, words: list[str], weights: np.ndarray, rng: np.random.Generator
) -> dict[str, float]:
    users = [user_id(run, i) for i in rng.choice(config.users, size=ADD_BATCHES + ADD_ONE)]
    added, started = 0, time.perf_counter()
    for user in users[:ADD_BATCHES]:
        texts = synthetic_texts(rng, words, weights, ADD_BATCH)
        memory.add_many([NewMemory(content=t) for t in texts], scope=Scope(user_id=user))
        added += len(texts)
    batch_s = time.perf_counter() - started
    messages_per_s = _add_messages_rate(memory, users[:ADD_BATCHES], words, weights, rng)
    one_ms = []
    for user, text in zip(users[ADD_BATCHES:], synthetic_texts(rng, words, weights, ADD_ONE), strict=True):
        t = time.perf_counter()
        memory.add(text, scope=Scope(user_id=user))
        one_ms.append(_ms(t))
    return {
        "add_per_s": round(added / batch_s, 1),
        "add_messages_per_s": messages_per_s,
        **latency_summary(one_ms, "add_one_ms"),
    }


def _add_messages_rate(
    memory: Any, users: Sequence[str], words: list[str], weights: np.ndarray, rng: np.random.Generator
) -> float:
    """Messages/s of `add_messages` batches of `ADD_BATCH` chat turns (user and assistant alternating) into a
    new session per batch: the conversation path (buffer, episode log, summary folding), not bare memories."""
    added, started = 0, time.perf_counter()
    for index, user in enumerate(users):
        texts = synthetic_texts(rng, words, weights, ADD_BATCH)
        turns = [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]
        memory.add_messages(turns, scope=Scope(user_id=user, session_id=f"bench-session-{index}"))
        added += len(turns)
    return round(added / (time.perf_counter() - started), 1)


def _search(
    memory: Any,
    embedder: TimedEmbedder,
    queries: list[tuple[str, str]],
    k: int,
    progress: Progress | None,
    sources: dict[tuple[str, str], str],
) -> dict[str, float]:
    """Timings, and `source_at_k`: the share of queries whose source memory (the stored text the query was
    made from) is among the k hits — a quality check on every speed-up."""
    for user, query in queries[:WARMUP]:  # load caches (SQLite vector matrices, Postgres buffers)
        memory.search(query, scope=Scope(user_id=user), k=k)
    embed_ms: list[float] = []
    live_ms: list[float] = []
    store_ms: list[float] = []
    hits: list[int] = []
    found_source: list[bool] = []
    measured = queries[WARMUP:]
    for i, (user, query) in enumerate(measured):
        t = time.perf_counter()
        embedder.precomputed[query] = embedder.inner.embed_query(query)
        embed_ms.append(_ms(t))
        for precomputed in (False, True) if i % 2 == 0 else (True, False):
            embedder.use_precomputed = precomputed
            t = time.perf_counter()
            found = memory.search(query, scope=Scope(user_id=user), k=k)
            (store_ms if precomputed else live_ms).append(_ms(t))
        embedder.use_precomputed = False
        hits.append(len(found))
        found_source.append(any(h.memory.content == sources[user, query] for h in found))
        if progress:
            progress("search", (i + 1) / len(measured))
    return {
        **latency_summary(live_ms, "search_ms"),
        **latency_summary(store_ms, "search_no_embed_ms"),
        **latency_summary(embed_ms, "embed_ms"),
        "search_hits_mean": round(statistics.fmean(hits), 2) if hits else 0.0,
        "source_at_k": round(statistics.fmean(found_source), 4) if found_source else 0.0,
        "queries": len(measured),
    }


def _breakdown(memory: Any, embedder: TimedEmbedder, queries: list[tuple[str, str]], k: int) -> dict[str, float]:
    """The store calls one hybrid search makes, timed one by one (where the search time goes)."""
    from memstrata.storage.base import MemoryFilter

    store, depth, now = memory.store, max(k * 5, 50), memory.clock()
    vector_ms, keyword_ms, hybrid_ms, access_ms = [], [], [], []
    for user, query in queries:
        vector = embedder.precomputed.get(query)
        vector = embedder.inner.embed_query(query) if vector is None else vector
        t = time.perf_counter()
        rows = store.vector_search(user, vector, MemoryFilter(), limit=depth)
        vector_ms.append(_ms(t))
        t = time.perf_counter()
        store.keyword_search(user, query, MemoryFilter(), limit=depth)
        keyword_ms.append(_ms(t))
        t = time.perf_counter()
        store.hybrid_candidates(user, vector, query, MemoryFilter(), limit=depth)
        hybrid_ms.append(_ms(t))
        t = time.perf_counter()
        store.record_access(user, [r.record.id for r in rows[:k]], now)
        access_ms.append(_ms(t))
    return {
        **latency_summary(vector_ms, "store_vector_ms"),
        **latency_summary(keyword_ms, "store_keyword_ms"),
        **latency_summary(hybrid_ms, "store_hybrid_ms"),
        **latency_summary(access_ms, "store_access_ms"),
    }


def _context(memory: Any, queries: list[tuple[str, str]], progress: Progress | None) -> dict[str, float]:
    build = getattr(memory, "context", None)
    if build is None or not queries:
        return {}
    build(queries[0][1], CONTEXT_TOKENS, scope=Scope(user_id=queries[0][0]))  # warm-up
    ms = []
    for i, (user, query) in enumerate(queries):
        t = time.perf_counter()
        build(query, CONTEXT_TOKENS, scope=Scope(user_id=user))
        ms.append(_ms(t))
        if progress:
            progress("context", (i + 1) / len(queries))
    return {**latency_summary(ms, "context_ms"), "context_queries": len(ms), "context_tokens": CONTEXT_TOKENS}


def run(
    config: LatencyConfig,
    *,
    store: str | None = None,
    embedder: Embedder | str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One latency point (see the module docstring); returns the JSON-ready result."""
    from memstrata import Memory
    from memstrata.embedders.registry import resolve_embedder

    if config.queries < 1:
        raise InvalidInput("--queries must be at least 1")
    if config.busy_cores < 0:
        raise InvalidInput(f"--busy-cores must be 0 or more, got {config.busy_cores}")
    spread(config.memories, config.users)
    inner = (
        embedder if embedder is not None and not isinstance(embedder, str) else resolve_embedder(embedder or "static")
    )
    timed = TimedEmbedder(inner)
    rng = np.random.default_rng(config.seed)
    words = model_vocabulary()
    weights = zipf_weights(len(words))
    run_id = secrets.token_hex(3)
    rss_start = rss_bytes()
    with ExitStack() as stack:
        target = stack.enter_context(bench_store(store))
        memory = stack.enter_context(
            Memory(store=target.url if target.owner_url is None else open_postgres(target), embedder=timed)
        )
        if config.posting_budget != -1 and hasattr(memory.store, "posting_budget"):
            memory.store.posting_budget = config.posting_budget
        defer = (
            config.defer_index
            and target.throwaway
            and target.kind in POSTGRES_KINDS
            and config.memories >= DEFER_INDEX_AT
        )
        with deferred_vector_index(target, defer) as index_timing:
            load_s, samples = _load(memory, config, run_id, words, weights, rng, progress)
        analyze_s = analyze(target)
        rss_loaded = rss_bytes()
        order = rng.permutation(len(samples))
        picks = [samples[i] for i in order]
        sources = {(u, make_query(rng, t, words)): t for u, t in picks[: config.queries + WARMUP]}
        queries = list(sources)
        contexts = [(u, make_query(rng, t, words)) for u, t in picks[: config.context_queries]]
        with busy_cores(config.busy_cores):
            searched = _search(memory, timed, queries, config.k, progress, sources)
            parts = _breakdown(memory, timed, queries[WARMUP:], config.k)
            context = _context(memory, contexts, progress)
        adds = _add_rates(memory, config, run_id, words, weights, rng)
        rss_end = rss_bytes()
        disk = disk_bytes(target)
        if not target.throwaway:
            for index in range(config.users):
                memory.store.erase_user(user_id(run_id, index))
    total = config.memories + ADD_BATCH * ADD_BATCHES + ADD_ONE
    return {
        "benchmark": "latency",
        "store": target.kind,
        "memories": config.memories,
        "users": config.users,
        "memories_per_user": round(config.memories / config.users, 1),
        "embedder": inner.name,
        "strategy": "hybrid",
        "k": config.k,
        "seed": config.seed,
        "posting_budget": getattr(memory.store, "posting_budget", None),
        "busy_cores": config.busy_cores,
        "load_s": round(load_s, 2),
        "load_per_s": round(config.memories / load_s, 1) if load_s else None,
        "index_deferred": defer,
        **index_timing,
        "analyze_s": analyze_s,
        **adds,
        **searched,
        **parts,
        **context,
        "rss_mb_start": round(rss_start.get("VmRSS", 0) / 2**20, 1),
        "rss_mb_loaded": round(rss_loaded.get("VmRSS", 0) / 2**20, 1),
        "rss_mb_end": round(rss_end.get("VmRSS", 0) / 2**20, 1),
        "rss_mb_peak": round(rss_end.get("VmHWM", 0) / 2**20, 1),
        "rss_bytes_per_memory": round((rss_end.get("VmRSS", 0) - rss_start.get("VmRSS", 0)) / total, 1),
        "disk_bytes": disk,
        "disk_bytes_per_memory": round(disk / total, 1) if disk else None,
        "notes": target.notes,
        "source": source_revision(),
    }


def open_postgres(target: BenchStore) -> Any:
    """The PostgresStore of a benchmark target (migrations through its owner URL), sealed when a master key
    is configured (`MEMSTRATA_MASTER_KEY`, as `open_store` does)."""
    from memstrata.storage.crypto import configured_key_provider
    from memstrata.storage.postgres import PostgresStore

    return PostgresStore.open(target.url, owner_url=target.owner_url, key_provider=configured_key_provider())


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so a stopped run still drops its throwaway store (CLI use only)."""
    import signal

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def source_revision() -> dict[str, Any]:
    """The git commit of the memstrata checkout being measured, and whether its code has local changes."""

    root = memstrata_source()
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", "memstrata"], cwd=root, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {"commit": commit.stdout.strip(), "local_changes": bool(status.stdout.strip())}


# -- progress bar -----------------------------------------------------------------------------------
class ProgressBar:
    """A one-line text progress bar on stderr: `label [#####-----] 50% stage`."""

    def __init__(self, label: str, *, width: int = 30, stream: Any = None) -> None:
        self.label = label
        self.width = width
        self.stream = stream or sys.stderr
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = ""
        self._stage = ""

    @staticmethod
    def render(label: str, fraction: float, stage: str, width: int = 30) -> str:
        fraction = min(max(fraction, 0.0), 1.0)
        filled = int(round(fraction * width))
        return f"{label} [{'#' * filled}{'-' * (width - filled)}] {fraction * 100:3.0f}% {stage}"

    def __call__(self, stage: str, fraction: float) -> None:
        line = self.render(self.label, fraction, stage, self.width)
        if line == self._last:
            return
        if self.interactive:
            self.stream.write("\r" + line.ljust(90))
        elif stage != self._stage or fraction >= 1.0:  # a log file gets one line per stage and its end
            self.stream.write(line + "\n")
        self._last, self._stage = line, stage
        self.stream.flush()

    def done(self, message: str = "") -> None:
        """End the bar's line (interactive) or write `message` (if any) as a line."""
        if self.interactive:
            self.stream.write("\r" + (message or self._last).ljust(90) + "\n")
        elif message:
            self.stream.write(message + "\n")
        self.stream.flush()


__all__ = [
    "BenchStore",
    "LatencyConfig",
    "ProgressBar",
    "TimedEmbedder",
    "bench_store",
    "make_query",
    "model_vocabulary",
    "parse_status",
    "run",
    "spread",
    "synthetic_texts",
    "throwaway_postgres",
    "vocabulary",
    "zipf_weights",
]
