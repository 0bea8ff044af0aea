"""Query plans, checked with EXPLAIN on a loaded database as the application role.

One big tenant (4000 rows) and 300 small tenants (10 rows each), loaded once for the module.
The plans asserted here are the reasons behind the schema in docs/postgres.md:
HNSW for a big tenant (with iterative scans so filters still return k rows), the user_id btree
for small tenants, and the postings' primary key for keyword search.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql

from memstrata.models import MemoryKind
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres import queries as q
from memstrata.storage.postgres.keyword import search_terms
from memstrata.storage.postgres.migrations import index_existing_memories
from tests.support.pg import connect_admin, database_of, postgres_urls, user_of

pytestmark = pytest.mark.postgres

BIG, SMALL = "big", "small7"
BIG_ROWS, SMALL_TENANTS, SMALL_ROWS = 4000, 300, 10
LOAD = """
INSERT INTO memories (user_id, id, kind, metadata, content, created_at, updated_at, valid_from, content_hash,
                      embedding)
SELECT u, u || '-' || g, CASE WHEN g %% 20 = 0 THEN 'note' ELSE 'fact' END,
       CASE WHEN g %% 20 = 0 THEN '{"topic": "rare"}'::jsonb ELSE '{}'::jsonb END,
       'word' || (g %% 500) || ' alpha' || (g %% 13) || ' lorem ipsum dolor',
       now() - g * interval '1 second', now(), now() - interval '1 day', md5(u || g),
       (SELECT array_agg(random() - 0.5)::real[] FROM generate_series(1, 64) WHERE g > 0)::vector
FROM unnest(%s::text[]) u, generate_series(1, %s) g
"""


@pytest.fixture(scope="module")
def loaded() -> Iterator[tuple[PostgresStore, str]]:
    """A store over the loaded database, and the app URL. Rows are loaded before `bind_embedder`
    so the HNSW index is built once, in bulk (about 2.5 s here)."""
    with postgres_urls() as (app_url, owner_url):
        store = PostgresStore.open(app_url, owner_url=owner_url)
        with connect_admin(database_of(app_url)) as admin:
            admin.execute(LOAD, [[BIG], BIG_ROWS])
            admin.execute(LOAD, [[f"small{i}" for i in range(SMALL_TENANTS)], SMALL_ROWS])
        store.bind_embedder("random-64", 64)
        with psycopg.connect(owner_url) as owner, owner.cursor() as cur:  # rows loaded by SQL get their terms
            index_existing_memories(cur)
        with connect_admin(database_of(app_url)) as admin:
            admin.execute("ANALYZE memories")
        try:
            yield store, app_url
        finally:
            store.close()


def query_vector(seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).random(64) - 0.5).astype(np.float32)


def explain(store: PostgresStore, user: str, query: str, params: list[Any]) -> str:
    with store.transaction(user) as cur:
        cur.execute("EXPLAIN " + query, params)
        return "\n".join(row[0] for row in cur.fetchall())


def vector_plan(store: PostgresStore, user: str, where: MemoryFilter) -> str:
    w, v = q.Where(user, where), query_vector()
    return explain(store, user, q.vector_sql(w), [v, *w.params, v, 10, w.params[0]])


def test_big_tenant_vector_search_uses_hnsw(loaded: tuple[PostgresStore, str]) -> None:
    store, _ = loaded
    plan = vector_plan(store, BIG, MemoryFilter())
    assert "Index Scan using memories_embedding_hnsw" in plan, plan
    # RLS folds into a one-time check of app.user_id: no per-row cost
    assert "One-Time Filter: (current_setting('app.user_id'::text, true) = 'big'::text)" in plan, plan


def test_small_tenant_vector_search_uses_the_user_btree_and_an_exact_sort(
    loaded: tuple[PostgresStore, str],
) -> None:
    store, _ = loaded
    plan = vector_plan(store, SMALL, MemoryFilter())
    assert "hnsw" not in plan, plan
    assert "Index Cond: (user_id = 'small7'::text)" in plan, plan
    assert "Sort Key: ((m.embedding <=>" in plan, plan


def test_filtered_hnsw_search_still_returns_k_rows_thanks_to_iterative_scan(
    loaded: tuple[PostgresStore, str],
) -> None:
    """A filter keeping 5% of the big tenant, searched through HNSW (the planner's choice for filters it
    cannot serve from a btree; forced here with enable_sort = off): plain HNSW (ef_search 40) finds
    about 2 of them, the iterative scan the store turns on finds all 10."""
    store, _ = loaded
    rare = MemoryFilter(metadata={"topic": "rare"})
    w, v = q.Where(BIG, rare), query_vector()
    with store.transaction(BIG) as cur:
        cur.execute("SET LOCAL enable_sort = off")
        cur.execute("EXPLAIN " + q.vector_sql(w), [v, *w.params, v, 10, w.params[0]])
        assert "memories_embedding_hnsw" in "\n".join(row[0] for row in cur.fetchall())
        cur.execute(q.vector_sql(w), [v, *w.params, v, 10, w.params[0]])
        assert len(cur.fetchall()) == 10
        cur.execute("SET LOCAL hnsw.iterative_scan = off")
        cur.execute(q.vector_sql(w), [v, *w.params, v, 10, w.params[0]])
        assert len(cur.fetchall()) < 10  # the failure mode the setting prevents
    for seed in range(5):
        rows = store.vector_search(BIG, query_vector(seed), rare, limit=10)
        assert len(rows) == 10 and all(r.record.metadata == {"topic": "rare"} for r in rows)


def test_kind_filter_of_a_big_tenant_is_exact_through_the_kind_index(loaded: tuple[PostgresStore, str]) -> None:
    store, _ = loaded
    notes = MemoryFilter(kinds=(MemoryKind.NOTE,))
    assert "memories_user_kind" in vector_plan(store, BIG, notes)
    for seed in range(3):
        rows = store.vector_search(BIG, query_vector(seed), notes, limit=10)
        assert len(rows) == 10 and all(r.record.kind is MemoryKind.NOTE for r in rows)


def recall_at_10(store: PostgresStore, ids: list[str], matrix: np.ndarray) -> float:
    recalls = []
    for seed in range(20):
        v = query_vector(seed)
        exact = {ids[i] for i in np.argsort(-(matrix @ (v / np.linalg.norm(v))))[:10]}
        found = {r.record.id for r in store.vector_search(BIG, v, MemoryFilter(), limit=10)}
        recalls.append(len(exact & found) / 10)
    return float(np.mean(recalls))


def test_hnsw_recall_grows_with_ef_search(loaded: tuple[PostgresStore, str]) -> None:
    """Uniform random vectors are HNSW's hardest case (measured: ~0.8 at ef_search 40, 1.0 at 200)."""
    store, app_url = loaded
    with store.transaction(BIG) as cur:
        cur.execute("SELECT id, embedding FROM memories WHERE user_id = %s", [BIG])
        rows = cur.fetchall()
    ids = [row[0] for row in rows]
    matrix = np.stack([row[1].to_numpy() for row in rows])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    default = recall_at_10(store, ids, matrix)
    with PostgresStore.open(app_url, ef_search=200) as wide:
        wider = recall_at_10(wide, ids, matrix)
    assert default >= 0.6 and wider >= 0.95 and wider >= default, (default, wider)


def keyword_plans(app_url: str, user: str, query: str, params: list[Any]) -> list[str]:
    """Plans of every statement `query` runs, nested ones included, executed AS THE APP ROLE.

    auto_explain is loaded by a superuser session that then switches to the app role
    (`SET ROLE`): row-level security applies from then on, and the plans arrive as notices.
    """
    notices: list[str] = []
    with connect_admin(database_of(app_url)) as conn:
        conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
        conn.execute("LOAD 'auto_explain'")
        conn.execute("SET auto_explain.log_min_duration = 0")
        conn.execute("SET auto_explain.log_nested_statements = on")
        conn.execute("SET auto_explain.log_level = notice")
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(user_of(app_url))))
        with conn.transaction():
            conn.execute("SELECT set_config('app.user_id', %s, true)", [user])
            notices.clear()
            conn.execute(query, params).fetchall()
    return notices


def postings_plans(plans: list[str]) -> list[str]:
    """The plans of the statements that rank from keyword_postings."""
    return [p for p in plans if "FROM keyword_postings k" in p]


def test_keyword_search_ranks_from_the_postings_primary_key(loaded: tuple[PostgresStore, str]) -> None:
    """Each looked-up term is one range of keyword_postings' primary key (which holds the frequency and
    the length): no memory row is read to rank, and memories are fetched by primary key for the best."""
    store, app_url = loaded
    w = q.Where(BIG, MemoryFilter())
    plans = keyword_plans(app_url, BIG, q.keyword_sql(w), [BIG, ["word5", "word7"], 64, *w.params, 10])
    inner = postings_plans(plans)
    assert inner and "using keyword_postings_pkey on keyword_postings k" in inner[0], plans
    assert "Index Cond: ((user_id = 'big'::text) AND (term = q.term))" in inner[0], plans
    assert "memories_keyword_terms" not in "\n".join(plans)  # dropped by migration 11
    assert "Seq Scan on memories" not in inner[0], plans
    rows = store.keyword_search(BIG, "word5 word7", MemoryFilter(), limit=10)
    assert len(rows) == 10 and all({"word5", "word7"} & set(r.record.content.split()) for r in rows)


def test_keyword_search_of_a_small_tenant_reads_only_its_own_postings(loaded: tuple[PostgresStore, str]) -> None:
    """The postings key starts with the user: a 10-row tenant's search reads its own postings, however
    many other tenants hold the same terms (the GIN index's posting lists held every tenant's rows)."""
    store, app_url = loaded
    w = q.Where(SMALL, MemoryFilter())
    plans = keyword_plans(app_url, SMALL, q.keyword_sql(w), [SMALL, ["word5", "lorem"], 64, *w.params, 10])
    inner = postings_plans(plans)
    assert inner and "Index Cond: ((user_id = 'small7'::text) AND (term = q.term))" in inner[0], plans
    assert len(store.keyword_search(SMALL, "lorem", MemoryFilter(), limit=10)) == SMALL_ROWS


def test_hybrid_function_uses_hnsw_and_the_postings(loaded: tuple[PostgresStore, str]) -> None:
    _, app_url = loaded
    plans = keyword_plans(
        app_url,
        BIG,
        "SELECT * FROM hybrid_memory_search(ARRAY['word5', 'word7'], %s::vector, %s, 10)",
        [str(query_vector().tolist()), BIG],
    )
    joined = "\n".join(plans)
    assert "memories_embedding_hnsw" in joined and "using keyword_postings_pkey" in joined, joined


def test_plans_of_the_app_role_are_custom_plans(loaded: tuple[PostgresStore, str]) -> None:
    """The pool's sessions force custom plans and iterative scans (settings read per connection)."""
    store, _ = loaded
    with store.transaction(None) as cur:
        cur.execute("SELECT current_setting('plan_cache_mode'), current_setting('hnsw.iterative_scan')")
        assert cur.fetchone() == ("force_custom_plan", "relaxed_order")
        cur.execute("SELECT current_setting('hnsw.ef_search')")
        assert cur.fetchone() == ("40",)
    with psycopg.connect(loaded[1]) as raw:  # the raw role itself has no special settings
        assert raw.execute("SELECT current_setting('plan_cache_mode')").fetchone() == ("auto",)


@pytest.mark.parametrize("text", ["word5 alpha3", "lorem", "word17", "nothing matches this"])
def test_hybrid_function_is_exact_on_a_big_tenant(loaded: tuple[PostgresStore, str], text: str) -> None:
    """The candidate set (n nearest UNION keyword matches) never misses a top-n row: compare with a
    brute-force scan. ef_search is raised so that HNSW's nearest are the exact nearest here."""
    store, _ = loaded
    vector = query_vector(3)
    with store.transaction(BIG) as cur:
        cur.execute("SET LOCAL hnsw.ef_search = 1000")
        terms = search_terms(BIG, text)
        cur.execute("SELECT combined_score FROM hybrid_memory_search(%s, %s, %s, 10)", [terms, vector, BIG])
        got = [row[0] for row in cur.fetchall()]
        cur.execute(
            "WITH b AS (SELECT array_agg(term) AS t, array_agg(idf) AS i, max(average_length) AS a "
            "FROM memstrata_bm25_terms(%s, %s)), "
            "s AS (SELECT m.embedding, CASE WHEN m.keyword_terms && b.t THEN memstrata_bm25(m.keyword_terms, "
            "m.keyword_frequencies, m.keyword_length, b.t, b.i, b.a) END AS r FROM memories m, b WHERE m.user_id = %s) "
            "SELECT 0.7 * (1 - (s.embedding <=> %s)) + 0.3 * coalesce(s.r / max(s.r) OVER (), 0) AS score "
            "FROM s ORDER BY score DESC LIMIT 10",
            [BIG, terms, BIG, vector],
        )
        brute = [row[0] for row in cur.fetchall()]
    assert got == pytest.approx(brute, abs=1e-6)
