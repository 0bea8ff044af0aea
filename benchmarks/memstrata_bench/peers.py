"""`memstrata-bench peers`: memstrata and other memory stores side by side on LoCoMo, in one run.

Same data (every turn of each LoCoMo conversation, one document "Speaker: text" per turn, one user or
namespace per conversation), same questions, same machine, same process, and the same embedding model
wherever the peer accepts one (memstrata's bundled static model, wrapped):

* `memstrata` — `Memory` on a SQLite file, default hybrid search (the reference of every ratio);
  `memstrata-postgres` — the same on a throwaway PostgreSQL database (when one can be made);
* `langgraph-inmemory` — LangGraph `InMemoryStore` with an index whose `embed` is the static model;
* `langgraph-sqlite` — LangGraph `SqliteStore` (sqlite-vec), opened through `sqlean` because this
  Python's `sqlite3` cannot load extensions;
* `langgraph-postgres` — LangGraph `PostgresStore` with pgvector (HNSW, cosine) on a throwaway database;
* `mem0` — mem0 OSS `Memory` with `add(..., infer=False)` (no LLM call), its default local Qdrant
  vector store, and the static model swapped in as its embedding model; `threshold=0` in search so it
  returns k results like the others. Offline, mem0's BM25 keyword scoring (fastembed downloads its
  model from a hub) and spaCy entity boosts are unavailable, so it ranks by vector similarity;
* `bm25` — plain BM25 with English stopwords and the Snowball stemmer (bm25s + PyStemmer).

For each: evidence recall@k (as `bench locomo` defines it), search latency per question (query
embedding included), ingest time; then `ratios`: recall@10 and search p95 of every system divided by
memstrata's from the same run. The peers live in a separate virtualenv (benchmarks/peers/setup.sh);
`memstrata-bench peers` re-runs itself there when they are not importable here.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from memstrata import ConfigurationError, InvalidInput, SearchFilter
from memstrata.distribution import DISTRIBUTION
from memstrata.embedders.base import Embedder

from . import longmemeval_data, selfrun
from .locomo_data import Conversation, Question, evidence_recall, load
from .longmemeval_data import visible_until
from .report import latency_summary

DEFAULT_KS = (1, 5, 10, 20)
REFERENCE = "memstrata"
ALL_PEERS = (
    "memstrata",
    "memstrata-postgres",
    "langgraph-inmemory",
    "langgraph-sqlite",
    "langgraph-postgres",
    "mem0",
    "bm25",
)
PEER_PACKAGES = (
    "memstrata",
    "numpy",
    "langgraph",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "mem0ai",
    "qdrant-client",
    "bm25s",
    "PyStemmer",
    "sqlite-vec",
    "sqlean.py",
    "psycopg",
    "pgvector",
)
PYTHON_ENV = "MEMSTRATA_PEERS_PYTHON"
VENV_ENV = "MEMSTRATA_PEERS_VENV"
INPROCESS_ENV = "MEMSTRATA_PEERS_INPROCESS"
Progress = Callable[[str, float], None]


class Peer(Protocol):
    """A memory system under test: one namespace per LoCoMo conversation."""

    name: str

    def ingest(self, conversation: Conversation) -> None: ...

    def search(self, conversation: Conversation, question: Question, k: int) -> list[str]:
        """The dia_ids of the top-k documents, best first."""
        ...

    def close(self) -> None: ...


# -- pure scoring -----------------------------------------------------------------------------------
def ratios(
    systems: dict[str, dict[str, Any]], reference: str = REFERENCE, k: int = 10, metric: str = "recall"
) -> dict[str, dict[str, Any]]:
    """`metric`@k and search p95 of each system divided by the reference's (None when not computable)."""
    ref = systems.get(reference)
    if not ref or "error" in ref:
        return {}
    out = {}
    key = f"{metric}@{k}"
    for name, result in systems.items():
        if "error" in result:
            continue
        out[name] = {
            key: _ratio(result["overall"].get(key), ref["overall"].get(key)),
            "search_p95": _ratio(result.get("search_ms_p95"), ref.get("search_ms_p95")),
            "search_p50": _ratio(result.get("search_ms_p50"), ref.get("search_ms_p50")),
        }
    return out


def _ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or not reference:
        return None
    return round(value / reference, 3)


def mean_recalls(rows: Sequence[dict[int, float]], ks: Sequence[int]) -> dict[str, float]:
    if not rows:
        return {f"recall@{k}": 0.0 for k in ks}
    return {f"recall@{k}": round(sum(r[k] for r in rows) / len(rows), 4) for k in ks}


Scorer = Callable[[Conversation, Question, list[str]], dict[str, float]]
Summarizer = Callable[[Sequence[tuple[str, dict[str, float]]]], dict[str, Any]]


def locomo_scorer(ks: Sequence[int]) -> tuple[Scorer, Summarizer]:
    """LoCoMo's evidence recall@k per question, and its means overall and by category."""

    def score(conversation: Conversation, question: Question, found: list[str]) -> dict[str, float]:
        provenance: list[tuple[str, ...]] = [(dia_id,) for dia_id in found]
        return {f"recall@{k}": evidence_recall(question.evidence, provenance, k) for k in ks}

    def summarize(rows: Sequence[tuple[str, dict[str, float]]]) -> dict[str, Any]:
        by_k = [{k: r[f"recall@{k}"] for k in ks} for _, r in rows]
        cats = ("1", "2", "3", "4")
        return {
            "overall": mean_recalls(by_k, ks),
            "by_category": {
                c: mean_recalls([{k: r[f"recall@{k}"] for k in ks} for cat, r in rows if cat == c], ks) for c in cats
            },
        }

    return score, summarize


def evaluate(
    peer: Peer,
    conversations: Sequence[Conversation],
    ks: Sequence[int],
    progress: Progress | None,
    scorer: tuple[Scorer, Summarizer] | None = None,
) -> dict[str, Any]:
    """Ingest every conversation, then ask every question; the scorer's metrics (LoCoMo recall@k by
    default) and latency."""
    ks = sorted(ks)
    score, summarize = scorer or locomo_scorer(ks)
    started = time.perf_counter()
    for conversation in conversations:
        peer.ingest(conversation)
    ingest_s = time.perf_counter() - started
    total = sum(len(c.questions) for c in conversations) or 1
    rows: list[tuple[str, dict[str, float]]] = []
    latencies: list[float] = []
    for conversation in conversations:
        peer.search(conversation, conversation.questions[0], max(ks)) if len(conversation.questions) > 1 else None
        for question in conversation.questions:
            t = time.perf_counter()
            found = peer.search(conversation, question, max(ks))
            latencies.append((time.perf_counter() - t) * 1000)
            rows.append((question.category, score(conversation, question, found)))
            if progress:
                progress(peer.name, len(rows) / total)
    turns = sum(len(c.turns) for c in conversations)
    return {
        **summarize(rows),
        "questions": len(rows),
        "ingest_s": round(ingest_s, 2),
        "ingest_per_s": round(turns / ingest_s, 1) if ingest_s else None,
        **latency_summary(latencies, "search_ms"),
    }


# -- adapters -------------------------------------------------------------------------------------
def _namespace(conversation: Conversation) -> str:
    return f"locomo-{conversation.sample_id}"


class MemstrataPeer:
    """memstrata itself, ingested exactly as `bench locomo` does."""

    def __init__(self, name: str, store: Any, embedder: Embedder) -> None:
        from memstrata import Memory

        self.name = name
        self.memory = Memory(store=store, embedder=embedder)

    def ingest(self, conversation: Conversation) -> None:
        if conversation.questions and conversation.questions[0].asked_at is not None:  # LongMemEval
            from .longmemeval import store_turns

            store_turns(self.memory, conversation, _namespace(conversation))
            return
        from .locomo import ingest

        ingest(self.memory, conversation)

    def search(self, conversation: Conversation, question: Question, k: int) -> list[str]:
        as_of = visible_until(question.asked_at) if question.asked_at else None
        hits = self.memory.search(
            question.question, scope=_namespace(conversation), k=k, filters=SearchFilter(as_of=as_of)
        )
        return [dia for h in hits for dia in h.memory.source_ids[:1]]

    def close(self) -> None:
        self.memory.close()


class LangGraphPeer:
    """Any LangGraph `BaseStore` with a vector index (`embed` = the shared embedder)."""

    def __init__(self, name: str, store: Any) -> None:
        self.name = name
        self.store = store

    def ingest(self, conversation: Conversation) -> None:
        from langgraph.store.base import PutOp

        ns = ("locomo", conversation.sample_id)
        ops = [PutOp(ns, t.dia_id, {"text": t.document}) for t in conversation.turns]
        for start in range(0, len(ops), 256):
            self.store.batch(ops[start : start + 256])

    def search(self, conversation: Conversation, question: Question, k: int) -> list[str]:
        ns = ("locomo", conversation.sample_id)
        return [item.key for item in self.store.search(ns, query=question.question, limit=k)]

    def close(self) -> None:
        return None


def langgraph_index(embedder: Embedder) -> Any:
    """A LangGraph index config (`IndexConfig`) whose `embed` is `embedder`."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in embedder.embed_documents(list(texts))]

    return {"dims": embedder.dimensions, "embed": embed, "fields": ["text"]}


class Mem0Peer:
    """mem0 OSS: `add(infer=False)` stores each turn verbatim; search by the conversation's user_id."""

    def __init__(self, workdir: Path, embedder: Embedder) -> None:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("MEM0_DIR", str(workdir / "mem0-home"))
        from mem0 import Memory as Mem0Memory

        self.name = "mem0"
        config = {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "locomo",
                    "path": str(workdir / "qdrant"),
                    "embedding_model_dims": embedder.dimensions,
                    "on_disk": True,
                },
            },
            "embedder": {
                "provider": "openai",
                "config": {"api_key": "unused", "embedding_dims": embedder.dimensions},
            },
            "llm": {"provider": "openai", "config": {"api_key": "unused"}},
            "history_db_path": str(workdir / "mem0-history.db"),
        }
        self.memory = Mem0Memory.from_config(config)
        self.memory.embedding_model = _Mem0Embedding(embedder)

    def ingest(self, conversation: Conversation) -> None:
        for turn in conversation.turns:
            self.memory.add(
                [{"role": "user", "content": turn.document}],
                user_id=_namespace(conversation),
                metadata={"dia_id": turn.dia_id},
                infer=False,
            )

    def search(self, conversation: Conversation, question: Question, k: int) -> list[str]:
        found = self.memory.search(
            question.question, filters={"user_id": _namespace(conversation)}, top_k=k, threshold=0.0
        )
        return [str((r.get("metadata") or {}).get("dia_id", r.get("dia_id", ""))) for r in found["results"]]

    def close(self) -> None:
        client = getattr(self.memory.vector_store, "client", None)
        if client is not None:
            client.close()


class _Mem0Embedding:
    """mem0's embedder interface (`embed(text, memory_action)`) over a memstrata embedder."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        vector = (
            self.embedder.embed_query(text) if memory_action == "search" else self.embedder.embed_documents([text])[0]
        )
        return [float(x) for x in vector]


class BM25Peer:
    """bm25s with English stopwords and the Snowball stemmer; one index per conversation."""

    def __init__(self) -> None:
        import Stemmer

        self.name = "bm25"
        self.stemmer = Stemmer.Stemmer("english")
        self.indexes: dict[str, tuple[Any, list[str]]] = {}

    def _tokens(self, texts: list[str]) -> Any:
        import bm25s

        return bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)

    def ingest(self, conversation: Conversation) -> None:
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(self._tokens([t.document for t in conversation.turns]), show_progress=False)
        self.indexes[conversation.sample_id] = (retriever, [t.dia_id for t in conversation.turns])

    def search(self, conversation: Conversation, question: Question, k: int) -> list[str]:
        import bm25s

        retriever, ids = self.indexes[conversation.sample_id]
        tokens = bm25s.tokenize(
            [question.question], stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False
        )
        if not tokens or not tokens[0]:
            return []
        docs, scores = retriever.retrieve(tokens, k=min(k, len(ids)), show_progress=False)
        return [ids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def close(self) -> None:
        return None


@contextmanager
def open_peer(name: str, embedder: Embedder, workdir: Path) -> Iterator[Peer]:
    """Build one peer (with its throwaway storage) and close it afterwards."""
    from .latency import throwaway_postgres

    with ExitStack() as stack:
        peer: Peer
        if name == "memstrata":
            peer = MemstrataPeer(name, f"sqlite:///{workdir / 'memstrata.db'}", embedder)
        elif name == "memstrata-postgres":
            from memstrata.storage.postgres import PostgresStore

            app, owner = stack.enter_context(throwaway_postgres())
            peer = MemstrataPeer(name, PostgresStore.open(app, owner_url=owner), embedder)
        elif name == "langgraph-inmemory":
            from langgraph.store.memory import InMemoryStore

            peer = LangGraphPeer(name, InMemoryStore(index=langgraph_index(embedder)))
        elif name == "langgraph-sqlite":
            import sqlean
            from langgraph.store.sqlite import SqliteStore

            conn = sqlean.connect(str(workdir / "langgraph.db"), check_same_thread=False, isolation_level=None)
            stack.callback(conn.close)
            store = SqliteStore(conn, index=langgraph_index(embedder))
            store.setup()
            peer = LangGraphPeer(name, store)
        elif name == "langgraph-postgres":
            from langgraph.store.postgres import PostgresStore as LGPostgresStore

            _, owner = stack.enter_context(throwaway_postgres())
            index = {
                **langgraph_index(embedder),
                "ann_index_config": {"kind": "hnsw"},
                "distance_type": "cosine",
            }
            lg = stack.enter_context(LGPostgresStore.from_conn_string(owner, index=index))
            lg.setup()
            peer = LangGraphPeer(name, lg)
        elif name == "mem0":
            peer = Mem0Peer(workdir, embedder)
        elif name == "bm25":
            peer = BM25Peer()
        else:
            raise InvalidInput(f"unknown peer {name!r}; known: {', '.join(ALL_PEERS)}")
        try:
            yield peer
        finally:
            peer.close()


def versions() -> dict[str, str | None]:
    """Installed versions by package name; memstrata's is read from its distribution (`memstrata-ai`)."""
    found: dict[str, str | None] = {}
    for package in PEER_PACKAGES:
        try:
            found[package] = metadata.version(DISTRIBUTION if package == "memstrata" else package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def run(
    data: str | Path,
    *,
    peers: Sequence[str] = ALL_PEERS,
    conversations: int | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    embedder: Embedder | str | None = None,
    progress: Progress | None = None,
    benchmark: str = "locomo",
) -> dict[str, Any]:
    """Every peer on the same conversations; a peer that fails to start is reported, not fatal.

    `benchmark="longmemeval"` reads a LongMemEval file instead (`conversations` then limits the
    questions, each with its own haystack) and scores with its session and turn metrics."""
    from memstrata.embedders.registry import resolve_embedder

    from .latency import source_revision

    unknown = [p for p in peers if p not in ALL_PEERS]
    if unknown:
        raise InvalidInput(f"unknown peers {unknown}; known: {', '.join(ALL_PEERS)}")
    chosen, scorer, metric = _suite(benchmark, data, conversations, ks)
    ks = (longmemeval_data.SEARCH_K,) if benchmark == "longmemeval" else ks
    shared = (
        embedder if embedder is not None and not isinstance(embedder, str) else resolve_embedder(embedder or "static")
    )
    order = [REFERENCE, *[p for p in peers if p != REFERENCE]]
    systems: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="memstrata-peers-") as tmp:
        for name in order:
            workdir = Path(tmp) / name
            workdir.mkdir()
            try:
                with open_peer(name, shared, workdir) as peer:
                    systems[name] = evaluate(peer, chosen, ks, progress, scorer)
            except Exception as exc:  # noqa: BLE001 - a missing or broken peer is a result, not a crash
                systems[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    return {
        "benchmark": "peers" if benchmark == "locomo" else f"peers-{benchmark}",
        "data": Path(data).name,
        "conversations": len(chosen),
        "turns": sum(len(c.turns) for c in chosen),
        "questions": sum(len(c.questions) for c in chosen),
        "embedder": shared.name,
        "reference": REFERENCE,
        "systems": systems,
        "ratios": ratios(systems, metric=metric),
        "versions": versions(),
        "source": source_revision(),
    }


BENCHMARKS = ("locomo", "longmemeval")


def _suite(
    benchmark: str, data: str | Path, limit: int | None, ks: Sequence[int]
) -> tuple[list[Conversation], tuple[Scorer, Summarizer], str]:
    """The conversations, scorer and headline metric of a benchmark."""
    if benchmark == "locomo":
        return load(data)[: limit or None], locomo_scorer(sorted(ks)), "recall"
    if benchmark != "longmemeval":
        raise InvalidInput(f"unknown benchmark {benchmark!r}; use one of {', '.join(BENCHMARKS)}")
    cases = {c.conversation.sample_id: c for c in longmemeval_data.load(data, limit=limit)}

    def score(conversation: Conversation, question: Question, found: list[str]) -> dict[str, float]:
        return longmemeval_data.score_case(cases[conversation.sample_id], found)

    def summarize(rows: Sequence[tuple[str, dict[str, float]]]) -> dict[str, Any]:
        by_type = {t: longmemeval_data.mean_metrics([r for cat, r in rows if cat == t]) for t in longmemeval_data.TYPES}
        return {
            "overall": longmemeval_data.mean_metrics([r for _, r in rows]),
            "by_type": {t: m for t, m in by_type.items() if m},
        }

    return [c.conversation for c in cases.values()], (score, summarize), "turn_recall"


# -- running in the peers virtualenv -----------------------------------------------------------------
def peers_importable() -> bool:
    try:
        import bm25s  # noqa: F401
        import langgraph.store.sqlite  # noqa: F401
        import mem0  # noqa: F401
    except ImportError:
        return False
    return True


def peers_python() -> Path:
    """The benchmark virtualenv's interpreter: $MEMSTRATA_PEERS_PYTHON, $MEMSTRATA_PEERS_VENV/bin/python,
    or <repo>/.venv-peers/bin/python."""
    if os.environ.get(PYTHON_ENV):
        return Path(os.environ[PYTHON_ENV])
    venv = os.environ.get(VENV_ENV) or str(selfrun.TOOL_ROOT.parent / ".venv-peers")
    return Path(venv) / "bin" / "python"


def reexec(argv: Sequence[str]) -> int:
    """Run `memstrata-bench <argv>` with the peers virtualenv's interpreter; return its exit code."""
    python = peers_python()
    if not python.exists():
        setup = selfrun.TOOL_ROOT / "peers" / "setup.sh"
        raise ConfigurationError(
            f"the peers' virtualenv is missing ({python}); create it with `bash {setup}` "
            f"or point {PYTHON_ENV} at a Python that has benchmarks/peers/requirements.txt installed"
        )
    return subprocess.call([*selfrun.command(str(python)), *argv], env=selfrun.environment(**{INPROCESS_ENV: "1"}))


def should_reexec(probe: Callable[[], bool] = peers_importable) -> bool:
    return not os.environ.get(INPROCESS_ENV) and not probe()


__all__ = ["ALL_PEERS", "Peer", "evaluate", "mean_recalls", "ratios", "reexec", "run", "should_reexec"]


def markdown_table(result: dict[str, Any]) -> str:
    """The systems of a peers result as a Markdown table, ratios to memstrata last (pure)."""
    ks = sorted({int(k.split("@")[1]) for s in result.get("systems", {}).values() for k in s.get("overall", {})})
    head = (
        "| system | " + " | ".join(f"recall@{k}" for k in ks) + " | search p50 / p95 / p99 ms | ingest s "
        "| recall@10 ÷ memstrata | search p95 ÷ memstrata |\n|" + "---|" * (len(ks) + 5) + "\n"
    )
    rows = []
    for name, system in result.get("systems", {}).items():
        if "error" in system:
            rows.append(f"| {name} | not run: {system['error']} |")
            continue
        ratio = result.get("ratios", {}).get(name, {})
        recalls = " | ".join(f"{system['overall'].get(f'recall@{k}', 0.0):.3f}" for k in ks)
        rows.append(
            f"| {name} | {recalls} | {system['search_ms_p50']:.2f} / {system['search_ms_p95']:.2f} / "
            f"{system['search_ms_p99']:.2f} | {system['ingest_s']:.1f} | {ratio.get('recall@10')} "
            f"| {ratio.get('search_p95')} |"
        )
    return head + "\n".join(rows) + "\n"
