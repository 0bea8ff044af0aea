"""SQL functions installed by the migrations (text only; `migrations.py` runs them).

Two kinds:

* **SECURITY DEFINER helpers** that run as the schema owner, for the reads row-level security
  would make slow or impossible for the application role:
  `memstrata_keyword_matches` and `memstrata_keyword_top` (keyword matches: until migration 11 through
  a GIN index, whose operators are not LEAKPROOF, so under RLS the planner could not use it; since then
  ranked from `keyword_postings`; the store calls the second, migration 5) and `memstrata_user_ids` (the
  admin listing needs every user). All are bound to the caller's `app.user_id` setting or reveal no
  content, and EXECUTE on them is revoked from PUBLIC and granted to the application role only.
* **Supabase-RPC-style functions** `match_memories` and `hybrid_memory_search` (the names Supabase users call),
  SECURITY INVOKER: they run under the caller's row-level security.

`search_path` is pinned per function by `migrations.py` (schema, vector's schema, pg_temp).
"""

from __future__ import annotations

from ...core import bm25
from ...core.retrieval import KEYWORD_COLUMN_WEIGHTS
from ..base import current_at_sql
from .queries import WRITE_COLUMNS

_CONTENT, _CONTEXT, _DATE = KEYWORD_COLUMN_WEIGHTS
RANK_WEIGHTS = f"'{{0, {_DATE}, {_CONTEXT}, {_CONTENT}}}'::real[]"
"""ts_rank weights {D, C, B, A}: tsv holds content as A, context as B, the date as C (migrations.py),
weighted like the SQLite store's bm25 columns (`KEYWORD_COLUMN_WEIGHTS`)."""

CURRENT_AT_SERVER_NOW = """
      (m.valid_to IS NULL OR m.valid_to > now())
      AND (m.valid_from IS NULL OR m.valid_from <= now())
      AND (m.expires_at IS NULL OR m.expires_at > now())"""
"""What migrations 3 to 11 installed: current at the database server's clock. Kept so that those
migrations create what they created; migration 12 replaces it with `CURRENT_AS_OF`."""

AS_OF = "as_of"
AS_OF_PARAMETER = f",\n  {AS_OF} timestamptz DEFAULT now()"
"""The time the RPC functions judge "current" at (since migration 12): the caller's clock, e.g. the
store's injected clock; the database server's `now()` only when the caller passes none."""
CURRENT_AS_OF = current_at_sql(AS_OF)
"""The shared rule (`storage.base.current_at_sql`) at the caller's `as_of`."""

OR_TSQUERY = """
CREATE FUNCTION memstrata_or_tsquery(p_words text[]) RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET client_min_messages = warning
AS $fn$
DECLARE
  q tsquery;
  part tsquery;
  w text;
BEGIN
  -- Each word is parsed and stemmed by the english configuration on its own, then OR-ed:
  -- user text is never parsed as tsquery syntax. NULL when no word has a lexeme.
  FOREACH w IN ARRAY coalesce(p_words, '{}'::text[]) LOOP
    part := plainto_tsquery('english', w);
    IF numnode(part) > 0 THEN
      q := CASE WHEN q IS NULL THEN part ELSE q || part END;
    END IF;
  END LOOP;
  RETURN q;
END
$fn$"""

MATCH_COLUMNS = """m.user_id, m.id, m.seq, m.agent_id, m.session_id, m.kind, m.content, m.metadata,
           m.importance, m.created_at, m.updated_at, m.valid_from, m.valid_to, m.superseded_by,
           m.expires_at, m.source_ids, m.access_count, m.last_accessed_at, m.content_hash, m.pinned,
           m.context"""

MATCH_COLUMN_TYPES = """  user_id text, id text, seq bigint, agent_id text, session_id text, kind text, content text,
  metadata jsonb, importance double precision, created_at timestamptz, updated_at timestamptz,
  valid_from timestamptz, valid_to timestamptz, superseded_by text, expires_at timestamptz,
  source_ids text[], access_count integer, last_accessed_at timestamptz, content_hash text,
  pinned boolean, context text"""
"""The `RETURNS TABLE` columns (names and types) of `MATCH_COLUMNS`, indented as the migrations' function
text has them: every keyword function returns these, then its rank (and similarity) column. The text is
part of what migrations 3, 5, 9 and 11 ran, so it must stay as it is, byte for byte."""

KEYWORD_MATCHES = f"""
CREATE FUNCTION memstrata_keyword_matches(
  p_user_id text,
  p_query tsquery,
  p_limit integer DEFAULT NULL,
  p_embedding vector DEFAULT NULL
) RETURNS TABLE (
{MATCH_COLUMN_TYPES}, rank real, similarity double precision
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
BEGIN
  -- Runs as the owner so the GIN index on tsv is usable; isolation is re-established here:
  -- only the user named by this transaction's app.user_id, exactly as the RLS policy does.
  -- Returns whole rows (without embedding and tsv) so callers filter without a join: the
  -- p_limit best by rank (all, unordered, when NULL), with the cosine similarity to p_embedding
  -- when given (NULL otherwise, or when the row has no vector).
  IF p_query IS NULL OR numnode(p_query) = 0
     OR p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  IF p_limit IS NULL THEN
    RETURN QUERY
      SELECT {MATCH_COLUMNS}, ts_rank({RANK_WEIGHTS}, m.tsv, p_query),
             1 - (m.embedding <=> p_embedding)
      FROM memories m WHERE m.user_id = p_user_id AND m.tsv @@ p_query;
  ELSE
    RETURN QUERY
      SELECT r.* FROM (
        SELECT {MATCH_COLUMNS}, ts_rank({RANK_WEIGHTS}, m.tsv, p_query) AS rank,
               1 - (m.embedding <=> p_embedding)
        FROM memories m WHERE m.user_id = p_user_id AND m.tsv @@ p_query
      ) r
      ORDER BY r.rank DESC, r.created_at DESC, r.seq DESC
      LIMIT p_limit;
  END IF;
END
$fn$"""

MATCH_WITH_ACCESS = MATCH_COLUMNS.replace("m.access_count", "coalesce(a.access_count, m.access_count)").replace(
    "m.last_accessed_at", "coalesce(a.last_accessed_at, m.last_accessed_at)"
)
"""`MATCH_COLUMNS` with the access statistics of `memory_access` (joined as `a`) where it has a row."""

ACCESS_BY_USER = "LEFT JOIN memory_access a ON a.user_id = p_user_id AND a.memory_id = m.id"
"""The access join naming the user as a parameter: Citus 13 crashes planning `a.user_id = m.user_id`
after a CTE under row-level security."""

COMMON_WORD_ROWS = 256
"""A user with at most this many memories is keyword-searched through the user_id btree, not GIN (since
migration 9). In migrations 5-8 also: a query word found in more of a user's memories than this was
*common* for that user and selected keyword candidates only together with another query word."""

KEYWORD_TOP = f"""
CREATE FUNCTION memstrata_keyword_top(p_user_id text, p_words text[], p_limit integer)
RETURNS TABLE (
{MATCH_COLUMN_TYPES}, rank real
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
DECLARE
  q tsquery := memstrata_or_tsquery(p_words);
  wanted tsquery;
  common tsquery[] := '{{}}';
  part tsquery;
  w text;
BEGIN
  -- The store's keyword search: the p_limit best of the user's candidate rows by ts_rank over every
  -- query word, as whole rows with their current access statistics (memory_access), best first.
  -- Same isolation check as memstrata_keyword_matches. Every statement names the user, so on Citus
  -- each one is routed to the user's shard; callers select from this function alone (a statement
  -- joining it with a distributed table would run it on a shard, where it cannot read tables).
  IF q IS NULL OR numnode(q) = 0 OR p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  -- A user with at most {COMMON_WORD_ROWS} rows: all of them are read through the user_id btree and
  -- ranked (`IS TRUE` keeps the planner off the GIN index, whose posting lists hold EVERY user's
  -- rows: at 100k rows in all it already cost 1 ms more than reading 100 rows, and grows with the table).
  IF (SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.user_id = p_user_id
                            LIMIT {COMMON_WORD_ROWS} + 1) s) <= {COMMON_WORD_ROWS} THEN
    RETURN QUERY
      WITH top AS MATERIALIZED (
        SELECT m.id, ts_rank({RANK_WEIGHTS}, m.tsv, q) AS rank, m.created_at, m.seq
        FROM memories m WHERE m.user_id = p_user_id AND (m.tsv @@ q) IS TRUE
        ORDER BY 2 DESC, m.created_at DESC, m.seq DESC
        LIMIT p_limit
      )
      SELECT {MATCH_WITH_ACCESS}, t.rank
      FROM top t JOIN memories m ON m.user_id = p_user_id AND m.id = t.id
      {ACCESS_BY_USER}
      ORDER BY t.rank DESC, t.created_at DESC, t.seq DESC;
    RETURN;
  END IF;
  -- A bigger user: a word in more than {COMMON_WORD_ROWS} of the user's rows (common) only selects
  -- candidates together with another query word (a lone common word keeps all its rows). ts_rank has
  -- no IDF: rows holding one common word tie, by the thousands. With no common word every match is
  -- ranked (on narrow columns; whole rows are built for the p_limit best only, fetched again by
  -- primary key, never by ctid: on Citus a ctid join is not routed to the user's shard and ctids
  -- repeat across shards, so it would return other tenants' rows).
  FOREACH w IN ARRAY p_words LOOP
    part := plainto_tsquery('english', w);
    CONTINUE WHEN numnode(part) = 0;
    IF (SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.user_id = p_user_id AND m.tsv @@ part
                              LIMIT {COMMON_WORD_ROWS} + 1) s) > {COMMON_WORD_ROWS} THEN
      common := common || part;
    ELSE
      wanted := CASE WHEN wanted IS NULL THEN part ELSE wanted || part END;
    END IF;
  END LOOP;
  IF cardinality(common) = 0 OR (cardinality(common) = 1 AND wanted IS NULL) THEN
    wanted := q;
  ELSE
    FOR i IN 1 .. cardinality(common) LOOP
      FOR j IN i + 1 .. cardinality(common) LOOP
        part := common[i] && common[j];
        wanted := CASE WHEN wanted IS NULL THEN part ELSE wanted || part END;
      END LOOP;
    END LOOP;
  END IF;
  RETURN QUERY
    WITH top AS MATERIALIZED (
      SELECT m.id, ts_rank({RANK_WEIGHTS}, m.tsv, q) AS rank, m.created_at, m.seq
      FROM memories m WHERE m.user_id = p_user_id AND m.tsv @@ wanted
      ORDER BY 2 DESC, m.created_at DESC, m.seq DESC
      LIMIT p_limit
    )
    SELECT {MATCH_WITH_ACCESS}, t.rank
    FROM top t JOIN memories m ON m.user_id = p_user_id AND m.id = t.id
    {ACCESS_BY_USER}
    ORDER BY t.rank DESC, t.created_at DESC, t.seq DESC;
END
$fn$"""

USER_IDS = """
CREATE FUNCTION memstrata_user_ids(p_limit integer) RETURNS SETOF text
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
DECLARE
  m_next text;
  i_next text;
  found integer := 0;
BEGIN
  -- A merge of two loose index scans (one primary-key probe per distinct user, in order): ids only,
  -- never content; costs O(users listed), not O(rows). PL/pgSQL rather than a recursive SQL CTE:
  -- Citus plans neither recursive CTEs over distributed tables nor parameters in SQL functions; each
  -- probe here is one plain query (on Citus, one small query per shard).
  SELECT min(m.user_id) INTO m_next FROM memories m;
  SELECT min(i.user_id) INTO i_next FROM items i;
  WHILE found < p_limit AND (m_next IS NOT NULL OR i_next IS NOT NULL) LOOP
    IF i_next IS NULL OR (m_next IS NOT NULL AND m_next < i_next) THEN
      RETURN NEXT m_next;
      SELECT min(m.user_id) INTO m_next FROM memories m WHERE m.user_id > m_next;
    ELSIF m_next IS NULL OR i_next < m_next THEN
      RETURN NEXT i_next;
      SELECT min(i.user_id) INTO i_next FROM items i WHERE i.user_id > i_next;
    ELSE
      RETURN NEXT m_next;
      SELECT min(m.user_id) INTO m_next FROM memories m WHERE m.user_id > m_next;
      SELECT min(i.user_id) INTO i_next FROM items i WHERE i.user_id > i_next;
    END IF;
    found := found + 1;
  END LOOP;
END
$fn$"""


def _match_memories(as_of_parameter: str, current: str) -> str:
    return f"""
CREATE FUNCTION match_memories(
  query_embedding vector,
  match_threshold double precision DEFAULT 0.7,
  match_count integer DEFAULT 5,
  p_user_id text DEFAULT NULL{as_of_parameter}
) RETURNS TABLE (id text, content text, metadata jsonb, similarity double precision)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_custom_plan
SET hnsw.iterative_scan = relaxed_order
AS $fn$
#variable_conflict use_column
DECLARE
  v_user text := coalesce(p_user_id, current_setting('app.user_id', true));
BEGIN
  -- Top match_count current memories by cosine similarity, then the threshold: the same rows as
  -- "WHERE similarity >= threshold ORDER BY distance LIMIT n", without scanning past the top n.
  RETURN QUERY
    WITH nearest AS MATERIALIZED (
      SELECT m.id, m.content, m.metadata, m.embedding <=> query_embedding AS distance
      FROM memories m
      WHERE m.user_id = v_user AND m.embedding IS NOT NULL AND {current}
      ORDER BY m.embedding <=> query_embedding
      LIMIT match_count
    )
    SELECT n.id, n.content, n.metadata, 1 - n.distance
    FROM nearest n
    WHERE 1 - n.distance >= match_threshold
    ORDER BY n.distance;
END
$fn$"""


MATCH_MEMORIES = _match_memories("", CURRENT_AT_SERVER_NOW)
"""As migration 3 installed it."""
MATCH_MEMORIES_AS_OF = _match_memories(AS_OF_PARAMETER, CURRENT_AS_OF)
"""Since migration 12: current at `as_of`."""

HYBRID_MEMORY_SEARCH = f"""
CREATE FUNCTION hybrid_memory_search(
  query_text text,
  query_embedding vector,
  p_user_id text,
  match_count integer DEFAULT 5
) RETURNS TABLE (id text, content text, combined_score double precision)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_custom_plan
SET hnsw.iterative_scan = relaxed_order
AS $fn$
#variable_conflict use_column
DECLARE
  q tsquery := memstrata_or_tsquery(tsvector_to_array(to_tsvector('simple', coalesce(query_text, ''))));
  match_ids text[];
  match_similarities double precision[];
  match_ranks real[];
BEGIN
  -- combined = 0.7 * cosine similarity + 0.3 * ts_rank (0 without a keyword match), exactly, over
  -- the user's current memories: a row that matches no query word scores 0.7 * similarity, which
  -- the n vector-nearest rows reach or beat, so the top n lies in (n nearest UNION keyword matches).
  -- The keyword matches come with their similarity from one pass (GIN when selective).
  -- The keyword matches are read first, in a statement of their own: on Citus a statement that also
  -- reads a distributed table runs on the user's shard, where the function cannot read tables.
  SELECT coalesce(array_agg(k.id), '{{}}'), coalesce(array_agg(k.similarity), '{{}}'),
         coalesce(array_agg(k.rank), '{{}}')
    INTO match_ids, match_similarities, match_ranks
    FROM memstrata_keyword_matches(p_user_id, q, NULL, query_embedding) k
    WHERE k.similarity IS NOT NULL AND {CURRENT_AT_SERVER_NOW.replace("m.", "k.")};
  RETURN QUERY
    WITH nearest AS MATERIALIZED (
      SELECT m.id, 1 - (m.embedding <=> query_embedding) AS similarity,
             CASE WHEN q IS NOT NULL AND m.tsv @@ q THEN ts_rank({RANK_WEIGHTS}, m.tsv, q) ELSE 0 END AS rank
      FROM memories m
      WHERE m.user_id = p_user_id AND m.embedding IS NOT NULL AND {CURRENT_AT_SERVER_NOW}
      ORDER BY m.embedding <=> query_embedding
      LIMIT match_count
    ),
    matches AS (
      SELECT k.id, k.similarity, k.rank FROM unnest(match_ids, match_similarities, match_ranks) k(id, similarity, rank)
    ),
    scored AS (
      SELECT DISTINCT ON (c.id) c.id, 0.7 * c.similarity + 0.3 * c.rank AS score
      FROM (SELECT n.id, n.similarity, n.rank FROM nearest n
            UNION ALL SELECT k.id, k.similarity, k.rank FROM matches k) c
      ORDER BY c.id
    ),
    best AS (
      SELECT s.id, s.score FROM scored s ORDER BY s.score DESC, s.id LIMIT match_count
    )
    SELECT b.id, m.content, b.score::double precision
    FROM best b JOIN memories m ON m.user_id = p_user_id AND m.id = b.id
    ORDER BY b.score DESC, b.id;
END
$fn$"""

FUNCTIONS: tuple[tuple[str, str], ...] = (
    ("memstrata_or_tsquery(text[])", OR_TSQUERY),
    ("memstrata_keyword_matches(text, tsquery, integer, vector)", KEYWORD_MATCHES),
    ("memstrata_user_ids(integer)", USER_IDS),
    ("match_memories(vector, double precision, integer, text)", MATCH_MEMORIES),
    ("hybrid_memory_search(text, vector, text, integer)", HYBRID_MEMORY_SEARCH),
)
"""(signature, CREATE statement) in creation order."""

M003_DEFINER_FUNCTIONS = (
    "memstrata_keyword_matches(text, tsquery, integer, vector)",
    "memstrata_user_ids(integer)",
)
"""The SECURITY DEFINER functions of migration 3: EXECUTE revoked from PUBLIC."""

KEYWORD_TOP_SIGNATURE = "memstrata_keyword_top(text, text[], integer)"
"""Added by migration 5 (SECURITY DEFINER)."""


# -- BM25 (migration 9) ---------------------------------------------------------------------------------

BM25_K1 = bm25.K1
BM25_B = bm25.B
"""FTS5's bm25() constants (`core.bm25`, which the SQLite store uses too)."""

PRUNE_FROM_ROWS = bm25.PRUNE_FROM_ROWS
POSTING_BUDGET = bm25.POSTING_BUDGET
POSTING_SHARE = bm25.POSTING_SHARE
"""Term pruning for big users: `core.bm25.keyword_plan`'s constants (BM25_PLAN is its rule in SQL)."""

BM25_SCORE = f"""
CREATE FUNCTION memstrata_bm25(
  p_row_terms text[], p_row_frequencies real[], p_row_length integer,
  p_terms text[], p_idfs double precision[], p_average_length double precision
) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  -- FTS5's bm25(): for each query term, idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average)),
  -- f the row's weighted frequency of the term (0 when absent). Reads the row's terms, never its text.
  SELECT coalesce(sum(q.idf * f.f * {BM25_K1 + 1}
                      / (f.f + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * p_row_length / p_average_length))), 0)
  FROM unnest(p_terms, p_idfs) AS q(term, idf)
  CROSS JOIN LATERAL (SELECT p_row_frequencies[array_position(p_row_terms, q.term)]::double precision AS f) f
  WHERE f.f IS NOT NULL
$fn$"""

BM25_PLAN = f"""
    WITH totals AS (
      SELECT t.documents::double precision AS total, t.tokens::double precision AS tokens
      FROM keyword_totals t WHERE t.user_id = p_user_id AND t.documents > 0
    ),
    looked AS (
      SELECT q.term, q.position, coalesce((
        SELECT d.documents FROM keyword_documents d WHERE d.user_id = p_user_id AND d.term = q.term
      ), 0)::double precision AS n
      FROM unnest(p_terms) WITH ORDINALITY AS q(term, position)
    ),
    candidates AS (
      SELECT l.term, l.position, l.n, s.total, s.tokens,
             sum(l.n) OVER w AS spent, row_number() OVER w AS nth
      FROM looked l CROSS JOIN totals s
      WHERE s.total < {PRUNE_FROM_ROWS} OR l.n * 2 <= s.total
      WINDOW w AS (ORDER BY l.n, l.position)
    )
    SELECT c.term, c.position,
           CASE WHEN ln((c.total - c.n + 0.5) / (c.n + 0.5)) <= 0 THEN 1e-6
                ELSE ln((c.total - c.n + 0.5) / (c.n + 0.5)) END AS idf,
           c.tokens / c.total AS average_length
    FROM candidates c
    WHERE c.total < {PRUNE_FROM_ROWS} OR c.nth = 1
       OR c.spent <= greatest({POSTING_BUDGET}, floor(c.total * {POSTING_SHARE}))"""
"""The query terms looked up, with their IDF, from the user's own statistics (keyword_totals,
keyword_documents), for `p_user_id` and `p_terms` of the enclosing function: idf = ln((N - n + 0.5) /
(n + 0.5)), 1e-6 when not positive, as FTS5. A user with at least PRUNE_FROM_ROWS memories looks up
fewer terms, as the SQLite store's keyword_plan: terms in more than half of the memories are left out,
the rest taken rarest first while their postings fit max(POSTING_BUDGET, POSTING_SHARE * N), the rarest
always. Repeated terms are kept, each ranked. One statement (no loop, no call): it runs on every search.
Each term's count is its own primary-key lookup, a plan that does not depend on the table's statistics
(right after a bulk load a join here read all of the user's terms)."""

BM25_TERMS = f"""
CREATE FUNCTION memstrata_bm25_terms(p_user_id text, p_terms text[])
RETURNS TABLE (term text, idf double precision, average_length double precision)
LANGUAGE plpgsql STABLE
AS $fn$
#variable_conflict use_column
BEGIN
  -- BM25_PLAN (sql_functions.py) for SQL callers: the terms a search looks up, with their IDF.
  -- PL/pgSQL rather than SQL: Citus plans no parameters in SQL functions.
  RETURN QUERY SELECT b.term, b.idf, b.average_length FROM ({BM25_PLAN}) b ORDER BY b.position;
END
$fn$"""

_PLAN_INTO = f"""SELECT array_agg(b.term ORDER BY b.position), array_agg(b.idf ORDER BY b.position),
         max(b.average_length) INTO terms, idfs, average
    FROM ({BM25_PLAN}) b;"""


def _bm25_ranked(condition: str) -> str:
    """The user's memories holding a looked-up term, best first by BM25 over `terms` / `idfs` (variables
    of the calling function), at most `p_limit`, as (id, created_at, seq, rank). For each term, the
    rows holding it (`condition`, on `q.term`) give its weighted frequency, so only (row, term) pairs
    that exist are scored, inline (the formula of `memstrata_bm25`, without a function call per row);
    `OFFSET 0` keeps each pair's frequency computed once, and the arrays out of the aggregation."""
    return f"""
        SELECT p.id, p.created_at, p.seq,
               sum(p.idf * p.f * {BM25_K1 + 1}
                   / (p.f + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * p.keyword_length / average))) AS rank
        FROM unnest(terms, idfs) AS q(term, idf)
        CROSS JOIN LATERAL (
          SELECT m.id, m.created_at, m.seq, m.keyword_length, q.idf,
                 m.keyword_frequencies[array_position(m.keyword_terms, q.term)]::double precision AS f
          FROM memories m WHERE m.user_id = p_user_id AND {condition}
          OFFSET 0
        ) p
        GROUP BY p.id, p.created_at, p.seq
        ORDER BY 4 DESC, p.created_at DESC, p.seq DESC
        LIMIT p_limit"""


KEYWORD_MATCHES_BM25 = f"""
CREATE FUNCTION memstrata_keyword_matches(
  p_user_id text,
  p_terms text[],
  p_limit integer DEFAULT NULL,
  p_embedding vector DEFAULT NULL
) RETURNS TABLE (
{MATCH_COLUMN_TYPES}, rank double precision, similarity double precision
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
DECLARE
  terms text[];
  idfs double precision[];
  average double precision;
BEGIN
  -- Runs as the owner so the GIN index on keyword_terms is usable; isolation is re-established here:
  -- only the user named by this transaction's app.user_id, exactly as the RLS policy does.
  -- The user's memories holding any of p_terms (keyword_index.lookup_terms) as whole rows (without
  -- embedding and terms) with their BM25 score: the p_limit best (all, unordered, when NULL), with the
  -- cosine similarity to p_embedding when given (NULL otherwise, or when the row has no vector).
  IF p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  {_PLAN_INTO}
  IF terms IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY
    WITH ranked AS MATERIALIZED ({_bm25_ranked("m.keyword_terms @> ARRAY[q.term]")}
    )
    SELECT {MATCH_COLUMNS}, r.rank, 1 - (m.embedding <=> p_embedding)
    FROM ranked r JOIN memories m ON m.user_id = p_user_id AND m.id = r.id
    ORDER BY r.rank DESC, r.created_at DESC, r.seq DESC;
END
$fn$"""

KEYWORD_TOP_BM25 = f"""
CREATE FUNCTION memstrata_keyword_top(p_user_id text, p_terms text[], p_limit integer)
RETURNS TABLE (
{MATCH_COLUMN_TYPES}, rank double precision
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
DECLARE
  terms text[];
  idfs double precision[];
  average double precision;
  users_rows double precision;
BEGIN
  -- The store's keyword search: the p_limit best of the user's memories by BM25 over p_terms
  -- (BM25_PLAN: the user's statistics, pruned for big users), as whole rows with their
  -- current access statistics (memory_access), best first. Same isolation check as
  -- memstrata_keyword_matches. Every statement names the user, so on Citus each one is routed to the
  -- user's shard; callers select from this function alone.
  IF p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  {_PLAN_INTO}
  IF terms IS NULL THEN
    RETURN;
  END IF;
  SELECT t.documents INTO users_rows FROM keyword_totals t WHERE t.user_id = p_user_id;
  -- A user with at most {COMMON_WORD_ROWS} rows: each term's rows are found among the user's rows, read
  -- through the user_id btree (`IS TRUE` keeps the planner off the GIN index, whose posting lists hold
  -- EVERY user's rows). Bigger users: the GIN index finds the rows holding each looked-up term. Whole
  -- rows are built for the p_limit best only, fetched again by primary key (never by ctid: not routable
  -- on Citus).
  IF users_rows <= {COMMON_WORD_ROWS} THEN
    RETURN QUERY
      WITH top AS MATERIALIZED ({_bm25_ranked("(m.keyword_terms @> ARRAY[q.term]) IS TRUE")}
      )
      SELECT {MATCH_WITH_ACCESS}, t.rank
      FROM top t JOIN memories m ON m.user_id = p_user_id AND m.id = t.id
      {ACCESS_BY_USER}
      ORDER BY t.rank DESC, t.created_at DESC, t.seq DESC;
    RETURN;
  END IF;
  RETURN QUERY
    WITH top AS MATERIALIZED ({_bm25_ranked("m.keyword_terms @> ARRAY[q.term]")}
    )
    SELECT {MATCH_WITH_ACCESS}, t.rank
    FROM top t JOIN memories m ON m.user_id = p_user_id AND m.id = t.id
    {ACCESS_BY_USER}
    ORDER BY t.rank DESC, t.created_at DESC, t.seq DESC;
END
$fn$"""


def _hybrid_memory_search(as_of_parameter: str, current: str, current_k: str) -> str:
    return f"""
CREATE FUNCTION hybrid_memory_search(
  query_terms text[],
  query_embedding vector,
  p_user_id text,
  match_count integer DEFAULT 5{as_of_parameter}
) RETURNS TABLE (id text, content text, combined_score double precision)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_custom_plan
SET hnsw.iterative_scan = relaxed_order
AS $fn$
#variable_conflict use_column
DECLARE
  match_ids text[];
  match_similarities double precision[];
  match_ranks double precision[];
  best_rank double precision;
BEGIN
  -- combined = 0.7 * cosine similarity + 0.3 * BM25 / (the best BM25 among the user's current
  -- matches) (0 without a keyword match), exactly, over the user's current memories. query_terms are
  -- the terms of memstrata.core.keyword_index.lookup_terms (the index holds stemmed terms computed
  -- in Python, which SQL cannot reproduce). A row that matches no query term scores
  -- 0.7 * similarity, which the n vector-nearest rows reach or beat, so the top n lies in
  -- (n nearest UNION keyword matches). The keyword matches are read first, in a statement of their
  -- own: on Citus a statement that also reads a distributed table runs on the user's shard, where the
  -- function cannot read tables.
  SELECT coalesce(array_agg(k.id), '{{}}'), coalesce(array_agg(k.similarity), '{{}}'),
         coalesce(array_agg(k.rank), '{{}}'), max(k.rank)
    INTO match_ids, match_similarities, match_ranks, best_rank
    FROM memstrata_keyword_matches(p_user_id, query_terms, NULL, query_embedding) k
    WHERE k.similarity IS NOT NULL AND {current_k};
  RETURN QUERY
    WITH nearest AS MATERIALIZED (
      SELECT m.id, 1 - (m.embedding <=> query_embedding) AS similarity
      FROM memories m
      WHERE m.user_id = p_user_id AND m.embedding IS NOT NULL AND {current}
      ORDER BY m.embedding <=> query_embedding
      LIMIT match_count
    ),
    matches AS (
      SELECT k.id, k.similarity, k.rank FROM unnest(match_ids, match_similarities, match_ranks) k(id, similarity, rank)
    ),
    scored AS (
      SELECT c.id, max(c.similarity) AS similarity, max(c.rank) AS rank
      FROM (SELECT n.id, n.similarity, 0::double precision AS rank FROM nearest n
            UNION ALL SELECT k.id, k.similarity, k.rank FROM matches k) c
      GROUP BY c.id
    ),
    best AS (
      SELECT s.id, 0.7 * s.similarity + 0.3 * coalesce(s.rank / nullif(best_rank, 0), 0) AS score
      FROM scored s ORDER BY 2 DESC, s.id LIMIT match_count
    )
    SELECT b.id, m.content, b.score::double precision
    FROM best b JOIN memories m ON m.user_id = p_user_id AND m.id = b.id
    ORDER BY b.score DESC, b.id;
END
$fn$"""


HYBRID_MEMORY_SEARCH_BM25 = _hybrid_memory_search("", CURRENT_AT_SERVER_NOW, CURRENT_AT_SERVER_NOW.replace("m.", "k."))
"""As migration 9 installed it."""
HYBRID_MEMORY_SEARCH_AS_OF = _hybrid_memory_search(AS_OF_PARAMETER, CURRENT_AS_OF, current_at_sql(AS_OF, "k"))
"""Since migration 12: current at `as_of`."""

M009_FUNCTIONS: tuple[tuple[str, str], ...] = (
    ("memstrata_bm25(text[], real[], integer, text[], double precision[], double precision)", BM25_SCORE),
    ("memstrata_bm25_terms(text, text[])", BM25_TERMS),
    ("memstrata_keyword_matches(text, text[], integer, vector)", KEYWORD_MATCHES_BM25),
    (KEYWORD_TOP_SIGNATURE, KEYWORD_TOP_BM25),
    ("hybrid_memory_search(text[], vector, text, integer)", HYBRID_MEMORY_SEARCH_BM25),
)
"""(signature, CREATE statement) of migration 9, in creation order."""

M009_DROPPED = (
    "hybrid_memory_search(text, vector, text, integer)",
    KEYWORD_TOP_SIGNATURE,
    "memstrata_keyword_matches(text, tsquery, integer, vector)",
    "memstrata_or_tsquery(text[])",
)
"""The ts_rank functions migration 9 replaces (before the `tsv` column they read is dropped)."""

DEFINER_FUNCTIONS = (
    "memstrata_keyword_matches(text, text[], integer, vector)",
    "memstrata_user_ids(integer)",
    KEYWORD_TOP_SIGNATURE,
)
"""EXECUTE revoked from PUBLIC; granted to the application role."""

M012_REPLACED = (
    ("match_memories(vector, double precision, integer, text)", MATCH_MEMORIES_AS_OF),
    ("hybrid_memory_search(text[], vector, text, integer)", HYBRID_MEMORY_SEARCH_AS_OF),
)
"""(old signature, new CREATE statement) of migration 12: the RPC functions take `as_of`."""
M012_FUNCTIONS = tuple((old.replace(")", ", timestamp with time zone)"), new) for old, new in M012_REPLACED)
"""(signature, CREATE statement) of migration 12."""

CURRENT_FUNCTIONS = (
    "memstrata_user_ids(integer)",
    *(signature for signature, _ in M009_FUNCTIONS if not signature.startswith("hybrid_memory_search")),
    *(signature for signature, _ in M012_FUNCTIONS),
)
"""Every function the latest schema holds."""


# -- BM25 over the postings table (migration 11) ----------------------------------------------------------


_POSTINGS_BEST = f"""
    WITH scored AS MATERIALIZED (
      SELECT p.memory_id AS id,
             sum(p.idf * p.f * {BM25_K1 + 1}
                 / (p.f + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * p.length / average))) AS rank
      FROM unnest(terms, idfs) AS q(term, idf)
      CROSS JOIN LATERAL (
        SELECT k.memory_id, k.frequency::double precision AS f, k.length, q.idf
        FROM keyword_postings k WHERE k.user_id = p_user_id AND k.term = q.term
        OFFSET 0
      ) p
      GROUP BY p.memory_id
    ),
    cut AS (
      SELECT coalesce(min(b.rank), '-Infinity') AS rank
      FROM (SELECT s.rank FROM scored s ORDER BY s.rank DESC LIMIT p_limit) b
    )
    SELECT array_agg(s.id), array_agg(s.rank) INTO ids, ranks
    FROM scored s WHERE s.rank >= (SELECT c.rank FROM cut c);"""
"""The ids and BM25 ranks (into `ids`, `ranks`) of the user's memories holding a looked-up term (`terms`,
`idfs`, `average` of the calling function): the `p_limit` best and every memory tied with the last of them
(all when `p_limit` is NULL), unordered. Each term's postings are one range of keyword_postings' primary
key, which holds the frequency and the memory's length too (an index-only scan once the table is
vacuumed, narrow heap rows before), so only (memory, term) pairs that exist are scored and no memory row
is read to rank them."""


def _best_rows(columns: str, after_rank: str = "") -> str:
    """`columns` (of memories aliased `m`), the rank, then `after_rank`, of the memories `_POSTINGS_BEST`
    chose, best first (equal ranks newest first), at most `p_limit`. `m.id = ANY(ids)` is a condition on
    memories alone, so its plan holds when the table's statistics are stale (right after a bulk load the
    planner believes a new user holds one memory): at worst the user's rows are read once, never once
    per match."""
    return f"""
      SELECT {columns}, r.rank{after_rank}
      FROM unnest(ids, ranks) AS r(id, rank)
      JOIN memories m ON m.user_id = p_user_id AND m.id = r.id AND m.id = ANY(ids)
      ORDER BY r.rank DESC, m.created_at DESC, m.seq DESC
      LIMIT p_limit"""


KEYWORD_MATCHES_POSTINGS = f"""
CREATE OR REPLACE FUNCTION memstrata_keyword_matches(
  p_user_id text,
  p_terms text[],
  p_limit integer DEFAULT NULL,
  p_embedding vector DEFAULT NULL
) RETURNS TABLE (
{MATCH_COLUMN_TYPES}, rank double precision, similarity double precision
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
DECLARE
  terms text[];
  idfs double precision[];
  average double precision;
  ids text[];
  ranks double precision[];
BEGIN
  -- Runs as the owner (EXECUTE granted to the application role only); isolation is re-established
  -- here: only the user named by this transaction's app.user_id, exactly as the RLS policy does.
  -- The user's memories holding any of p_terms (keyword_index.lookup_terms) as whole rows (without
  -- embedding and terms) with their BM25 score: the p_limit best (all when NULL), best first, with the
  -- cosine similarity to p_embedding when given (NULL otherwise, or when the row has no vector).
  IF p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  {_PLAN_INTO}
  IF terms IS NULL THEN
    RETURN;
  END IF;
  {_POSTINGS_BEST}
  IF ids IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY {_best_rows(MATCH_COLUMNS, ", 1 - (m.embedding <=> p_embedding)")};
END
$fn$"""

KEYWORD_TOP_POSTINGS = f"""
CREATE OR REPLACE FUNCTION memstrata_keyword_top(p_user_id text, p_terms text[], p_limit integer)
RETURNS TABLE (
{MATCH_COLUMN_TYPES}, rank double precision
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
DECLARE
  terms text[];
  idfs double precision[];
  average double precision;
  ids text[];
  ranks double precision[];
BEGIN
  -- The store's keyword search: the p_limit best of the user's memories by BM25 over p_terms
  -- (BM25_PLAN: the user's statistics, pruned for big users), ranked from keyword_postings, as whole
  -- rows with their current access statistics (memory_access), best first. Same isolation check as
  -- memstrata_keyword_matches. Every statement names the user, so on Citus each one is routed to the
  -- user's shard; callers select from this function alone. Rows are read by id (never by ctid: not
  -- routable on Citus).
  IF p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  {_PLAN_INTO}
  IF terms IS NULL THEN
    RETURN;
  END IF;
  {_POSTINGS_BEST}
  IF ids IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY
    WITH top AS MATERIALIZED ({_best_rows(MATCH_COLUMNS)}
    )
    SELECT {MATCH_WITH_ACCESS.replace("m.", "t.")}, t.rank
    FROM top t {ACCESS_BY_USER.replace("m.id", "t.id")}
    ORDER BY t.rank DESC, t.created_at DESC, t.seq DESC;
END
$fn$"""

M011_FUNCTIONS: tuple[tuple[str, str], ...] = (
    ("memstrata_keyword_matches(text, text[], integer, vector)", KEYWORD_MATCHES_POSTINGS),
    (KEYWORD_TOP_SIGNATURE, KEYWORD_TOP_POSTINGS),
)
"""(signature, CREATE OR REPLACE statement) of migration 11: the keyword functions read keyword_postings."""


# -- one call per save (migration 13) -----------------------------------------------------------------------

MEMORY_WRITE_TYPE = """
CREATE TYPE memstrata_memory_write AS (
  id text, agent_id text, session_id text, kind text, content text, metadata jsonb,
  importance double precision, created_at timestamptz, updated_at timestamptz, valid_from timestamptz,
  valid_to timestamptz, superseded_by text, expires_at timestamptz, source_ids text[], access_count integer,
  last_accessed_at timestamptz, content_hash text, pinned boolean, context text, date_text text,
  keyword_terms text[], keyword_frequencies real[], keyword_length integer, embedding vector
)"""
"""One memory as `memstrata_save` writes it: `queries.WRITE_COLUMNS` after `user_id` (the call names the
user once), then the embedding, NULL to keep the stored one (a record past the save's vectors)."""

EVENT_WRITE_TYPE = """
CREATE TYPE memstrata_event_write AS (
  id text, memory_id text, event text, at timestamptz, before text, after text, details jsonb
)"""
"""One history event as `memstrata_save` writes it: `queries.HISTORY_COLUMNS` after `user_id`."""

_WRITTEN = list(WRITE_COLUMNS[2:])
"""The columns a save writes besides user_id and id (queries.WRITE_COLUMNS), in `memstrata_memory_write` order."""
_MEMORY_COLUMNS = ", ".join(["user_id", "id", *_WRITTEN, "embedding"])
_MEMORY_LITERALS = (
    "format('("
    + ", ".join(["%L"] * (len(_WRITTEN) + 3))
    + ")', p_user_id, m.id, "
    + ", ".join(f"m.{c}" for c in [*_WRITTEN, "embedding"])
    + ")"
)
_MEMORY_UPDATE = ", ".join(f"{c} = EXCLUDED.{c}" for c in _WRITTEN)
_EVENT_COLUMNS = "user_id, id, memory_id, event, at, before, after, details"
_EVENT_LITERALS = (
    "format('(%L, %L, %L, %L, %L, %L, %L, %L)', p_user_id, e.id, e.memory_id, e.event, e.at, e.before, e.after, "
    "e.details)"
)

M013_SAVE_SIGNATURE = "memstrata_save(text, memstrata_memory_write[], memstrata_event_write[])"
M013_SAVE = f"""
CREATE FUNCTION memstrata_save(p_user_id text, p_memories memstrata_memory_write[], p_events memstrata_event_write[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SET datestyle = 'ISO, MDY'
SET extra_float_digits = 1
AS $fn$
DECLARE
  o record;
  v_ids text[];
  old_terms text[] := '{{}}';
  old_ids text[] := '{{}}';
  old_memories integer := 0;
  old_tokens bigint := 0;
  change_terms text[];
  change_counts integer[];
  fell text[];
  added_tokens bigint;
  written text;
BEGIN
  -- Everything one save of one user writes, where the user's rows are: on Citus the call is delegated to
  -- the worker holding the user's shards. SECURITY INVOKER: row-level security applies to every statement,
  -- with the caller's app.user_id.
  --
  -- The rows are inserted as multi-row VALUES whose values are quoted by format('%L') (read back by the
  -- column types' input functions; the function pins datestyle and extra_float_digits, so timestamps and
  -- floats come back exact): one statement per table whatever the number of rows. Rows that all name the
  -- user are run by Citus as one statement on the user's shard. An INSERT ... SELECT would not do: Citus
  -- first copies its rows into an intermediate result, or, reading `memories`, refuses it inside a
  -- delegated call (every statement of the call must name the call's user).
  --
  -- Called on its own (no transaction block: PostgresStore.save's usual path), the call is the whole
  -- transaction: it sets the user for row-level security itself, for this transaction only, and takes
  -- the user's write lock, held shared (erasure holds it exclusively where this runs, `memstrata_lock_user`).
  -- The user is SET LOCAL (with citus.propagate_set_commands = 'local', a placeholder without effect on
  -- one node). On Citus a call sent on its own is in no transaction block, so Citus does not replay the
  -- SET LOCAL on another node: when a shard moved away while the call was delegated here, row-level
  -- security refuses the rows written there, nothing is written, and PostgresStore.save makes the save
  -- again in a transaction. Inside a transaction that set another user it refuses to write.
  IF coalesce(current_setting('app.user_id', true), '') = '' THEN
    PERFORM set_config('citus.propagate_set_commands', 'local', true);
    EXECUTE format('SET LOCAL app.user_id = %L', p_user_id);
  ELSIF current_setting('app.user_id', true) <> p_user_id THEN
    RAISE EXCEPTION 'memstrata_save writes for another user than the transaction''s app.user_id';
  END IF;
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('memstrata-user:' || p_user_id, 0));
  v_ids := ARRAY(SELECT DISTINCT m.id FROM unnest(p_memories) m ORDER BY 1);
  IF cardinality(v_ids) <> cardinality(coalesce(p_memories, '{{}}')) THEN
    RAISE EXCEPTION 'memstrata_save: a memory id appears twice in one call (merge them first)';
  END IF;
  IF cardinality(v_ids) > 0 THEN
    -- The stored terms of the rows about to be replaced, locked (in id order) until the write commits.
    FOR o IN SELECT m.keyword_terms, m.keyword_length, m.id FROM memories m
             WHERE m.user_id = p_user_id AND m.id = ANY(v_ids) ORDER BY m.id FOR UPDATE LOOP
      old_terms := old_terms || o.keyword_terms;
      old_ids := old_ids || array_fill(o.id, ARRAY[cardinality(o.keyword_terms)]);
      old_memories := old_memories + 1;
      old_tokens := old_tokens + o.keyword_length;
    END LOOP;
    -- A row without a vector (NULL) keeps the stored one. Rows go in in the order given, so new rows take
    -- their `seq` (the tie-break of equal creation times) in the caller's order.
    SELECT string_agg({_MEMORY_LITERALS}, ', ' ORDER BY m.ordinality) INTO written
    FROM unnest(p_memories) WITH ORDINALITY m;
    EXECUTE 'INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES ' || written
      || ' ON CONFLICT (user_id, id) DO UPDATE SET {_MEMORY_UPDATE}, '
      || 'embedding = coalesce(EXCLUDED.embedding, memories.embedding)';
  END IF;
  SELECT string_agg({_EVENT_LITERALS}, ', ' ORDER BY e.ordinality) INTO written
  FROM unnest(p_events) WITH ORDINALITY e;
  IF written IS NOT NULL THEN
    EXECUTE 'INSERT INTO history ({_EVENT_COLUMNS}) VALUES ' || written;
  END IF;
  IF cardinality(v_ids) = 0 THEN
    RETURN;
  END IF;
  -- After a record is written its own columns hold the truth about its access statistics.
  DELETE FROM memory_access WHERE user_id = p_user_id AND memory_id = ANY(v_ids);
  -- The per-user BM25 statistics (core.keyword_statistics.statistics_change, in SQL): each replaced row
  -- removes itself, each written row adds itself; terms in order, so concurrent writes lock them in one order.
  SELECT array_agg(c.term ORDER BY c.term), array_agg(c.n ORDER BY c.term) INTO change_terms, change_counts
  FROM (
    SELECT d.term, sum(d.n)::integer AS n FROM (
      SELECT unnest(m.keyword_terms) AS term, 1 AS n FROM unnest(p_memories) m
      UNION ALL
      SELECT unnest(old_terms), -1
    ) d GROUP BY d.term
  ) c WHERE c.n <> 0;
  IF change_terms IS NOT NULL THEN
    EXECUTE 'INSERT INTO keyword_documents (user_id, term, documents) VALUES '
      || (SELECT string_agg(format('(%L, %L, %s)', p_user_id, c.term, c.n), ', ' ORDER BY c.term)
          FROM unnest(change_terms, change_counts) AS c(term, n))
      || ' ON CONFLICT (user_id, term) DO UPDATE SET documents = keyword_documents.documents + EXCLUDED.documents';
    fell := ARRAY(SELECT c.term FROM unnest(change_terms, change_counts) AS c(term, n) WHERE c.n < 0);
    IF cardinality(fell) > 0 THEN
      DELETE FROM keyword_documents WHERE user_id = p_user_id AND term = ANY(fell) AND documents <= 0;
    END IF;
  END IF;
  added_tokens := (SELECT sum(m.keyword_length) FROM unnest(p_memories) m);
  IF cardinality(v_ids) <> old_memories OR added_tokens <> old_tokens THEN
    INSERT INTO keyword_totals (user_id, documents, tokens)
    VALUES (p_user_id, cardinality(v_ids) - old_memories, added_tokens - old_tokens)
    ON CONFLICT (user_id) DO UPDATE SET documents = keyword_totals.documents + EXCLUDED.documents,
      tokens = keyword_totals.tokens + EXCLUDED.tokens;
  END IF;
  -- The postings: the replaced rows' removed, the written rows' added.
  IF cardinality(old_terms) > 0 THEN
    DELETE FROM keyword_postings p USING unnest(old_terms, old_ids) AS d(term, memory_id)
    WHERE p.user_id = p_user_id AND p.term = d.term AND p.memory_id = d.memory_id;
  END IF;
  SELECT string_agg(format('(%L, %L, %L, %L, %s)', p_user_id, t.term, m.id, t.frequency, m.keyword_length), ', ')
  INTO written
  FROM unnest(p_memories) m CROSS JOIN LATERAL unnest(m.keyword_terms, m.keyword_frequencies) AS t(term, frequency);
  IF written IS NOT NULL THEN
    EXECUTE 'INSERT INTO keyword_postings (user_id, term, memory_id, frequency, length) VALUES ' || written
      || ' ON CONFLICT (user_id, term, memory_id) DO UPDATE SET frequency = EXCLUDED.frequency,'
      || ' length = EXCLUDED.length';
  END IF;
END
$fn$"""
"""As migration 13 installed it. Params: the user, the memories, the events. Everything `PostgresStore.save`
writes besides items, in one call (docs/postgres.md, "Writes on Citus")."""

ERASED_SQLSTATE = "MSE01"
"""The SQLSTATE `memstrata_save` raises when the user was erased since the caller's unit of work read the
user's erasure generation (the store raises `UserErased`)."""


def _fence_check(function: str) -> str:
    """The write fence in PL/pgSQL (the statements of `memstrata_save` since migration 14 and of
    `memstrata_check_fence`): raise `ERASED_SQLSTATE` when the user's `erasures` row (named by the SHA-256 of
    the id, as its row policy does) holds another generation than `p_expected_generation`; NULL: not checked."""
    return f"""  IF p_expected_generation IS NOT NULL AND p_expected_generation <> coalesce(
       (SELECT e.generation FROM erasures e
        WHERE e.user_key = encode(sha256(convert_to(p_user_id, 'UTF8')), 'hex')), 0) THEN
    RAISE EXCEPTION USING ERRCODE = '{ERASED_SQLSTATE}',
      MESSAGE = '{function}: the user was erased since the unit of work read its erasure generation';
  END IF;
"""


SAVE_SIGNATURE = "memstrata_save(text, memstrata_memory_write[], memstrata_event_write[], bigint)"
_M013_LOCK = "  PERFORM pg_advisory_xact_lock_shared(hashtextextended('memstrata-user:' || p_user_id, 0));\n"
M014_SAVE = M013_SAVE.replace(
    "p_events memstrata_event_write[])",
    "p_events memstrata_event_write[],\n  p_expected_generation bigint DEFAULT NULL)",
    1,
).replace(
    _M013_LOCK,
    _M013_LOCK
    + f"""  -- The write fence (storage/fence.py), under the lock erasure holds exclusively while it raises the
  -- generation: a caller that read the user's generation at the start of its unit of work passes it, and
  -- when an erasure committed since then nothing is written. `erasures` names the user by the SHA-256 of
  -- the id, as its row policy does; on Citus it is a reference table, so the worker running a delegated
  -- call reads its own copy. NULL: an unfenced save, not checked.
{_fence_check("memstrata_save")}""",
    1,
)
"""As migration 14 installed it: `M013_SAVE` with the write fence checked inside the call. Params: the user,
the memories, the events, the erasure generation the unit of work fenced the user at (NULL: unfenced;
callers of the three-argument form keep working)."""
assert M014_SAVE.count(ERASED_SQLSTATE) == 1 and M014_SAVE.count("p_expected_generation bigint DEFAULT NULL") == 1

LOCK_USER_SIGNATURE = "memstrata_lock_user(text)"
LOCK_USER = """
CREATE FUNCTION memstrata_lock_user(p_user_id text) RETURNS void
LANGUAGE plpgsql VOLATILE
AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('memstrata-user:' || p_user_id, 0));
END
$fn$"""
"""The user's write lock held exclusively until the transaction ends, where the user's rows are: erasure
calls it (on Citus it is delegated to the worker holding the user's shards, where `memstrata_save` takes
the lock shared), besides taking the same lock on the node it runs on."""

CURRENT_FUNCTIONS += (SAVE_SIGNATURE, LOCK_USER_SIGNATURE)


# -- static statements where no Citus runs (migration 15) ----------------------------------------------------

_POSTINGS_COLUMNS = "user_id, term, memory_id, frequency, length"
_STATIC_WRITES: tuple[tuple[str, str], ...] = (
    (
        f"""    SELECT string_agg({_MEMORY_LITERALS}, ', ' ORDER BY m.ordinality) INTO written
    FROM unnest(p_memories) WITH ORDINALITY m;
    EXECUTE 'INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES ' || written
      || ' ON CONFLICT (user_id, id) DO UPDATE SET {_MEMORY_UPDATE}, '
      || 'embedding = coalesce(EXCLUDED.embedding, memories.embedding)';
""",
        f"""    INSERT INTO memories ({_MEMORY_COLUMNS})
    SELECT p_user_id, m.id, {", ".join(f"m.{c}" for c in [*_WRITTEN, "embedding"])}
    FROM unnest(p_memories) WITH ORDINALITY m ORDER BY m.ordinality
    ON CONFLICT (user_id, id) DO UPDATE SET {_MEMORY_UPDATE},
      embedding = coalesce(EXCLUDED.embedding, memories.embedding);
""",
    ),
    (
        f"""  SELECT string_agg({_EVENT_LITERALS}, ', ' ORDER BY e.ordinality) INTO written
  FROM unnest(p_events) WITH ORDINALITY e;
  IF written IS NOT NULL THEN
    EXECUTE 'INSERT INTO history ({_EVENT_COLUMNS}) VALUES ' || written;
  END IF;
""",
        f"""  INSERT INTO history ({_EVENT_COLUMNS})
  SELECT p_user_id, e.id, e.memory_id, e.event, e.at, e.before, e.after, e.details
  FROM unnest(p_events) WITH ORDINALITY e ORDER BY e.ordinality;
""",
    ),
    (
        """    EXECUTE 'INSERT INTO keyword_documents (user_id, term, documents) VALUES '
      || (SELECT string_agg(format('(%L, %L, %s)', p_user_id, c.term, c.n), ', ' ORDER BY c.term)
          FROM unnest(change_terms, change_counts) AS c(term, n))
      || ' ON CONFLICT (user_id, term) DO UPDATE SET documents = keyword_documents.documents + EXCLUDED.documents';
""",
        """    INSERT INTO keyword_documents (user_id, term, documents)
    SELECT p_user_id, c.term, c.n FROM unnest(change_terms, change_counts) AS c(term, n) ORDER BY c.term
    ON CONFLICT (user_id, term) DO UPDATE SET documents = keyword_documents.documents + EXCLUDED.documents;
""",
    ),
    (
        "  SELECT string_agg(format('(%L, %L, %L, %L, %s)', p_user_id, t.term, m.id, t.frequency, "
        + f"""m.keyword_length), ', ')
  INTO written
  FROM unnest(p_memories) m CROSS JOIN LATERAL unnest(m.keyword_terms, m.keyword_frequencies) AS t(term, frequency);
  IF written IS NOT NULL THEN
    EXECUTE 'INSERT INTO keyword_postings ({_POSTINGS_COLUMNS}) VALUES ' || written
      || ' ON CONFLICT (user_id, term, memory_id) DO UPDATE SET frequency = EXCLUDED.frequency,'
      || ' length = EXCLUDED.length';
  END IF;
""",
        f"""  INSERT INTO keyword_postings ({_POSTINGS_COLUMNS})
  SELECT p_user_id, t.term, m.id, t.frequency, m.keyword_length
  FROM unnest(p_memories) m CROSS JOIN LATERAL unnest(m.keyword_terms, m.keyword_frequencies) AS t(term, frequency)
  ON CONFLICT (user_id, term, memory_id) DO UPDATE SET frequency = EXCLUDED.frequency, length = EXCLUDED.length;
""",
    ),
)
"""(statement of `M014_SAVE` with values quoted into its text, the same write as a static statement): what
migration 15 runs where Citus is not loaded."""


def _indented(text: str) -> str:
    return "".join("  " + line + "\n" for line in text.rstrip("\n").split("\n"))


def _branch(literal: str, static: str) -> str:
    """`static` where Citus is not loaded, `literal` (as before) where it is, at `literal`'s indentation."""
    pad = literal[: len(literal) - len(literal.lstrip())]
    return f"{pad}IF v_plain THEN\n{_indented(static)}{pad}ELSE\n{_indented(literal)}{pad}END IF;\n"


def _static_save() -> str:
    text = (
        M014_SAVE.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
        .replace(
            "  written text;\nBEGIN\n",
            "  written text;\n  v_plain boolean := current_setting('citus.version', true) IS NULL;\n"
            "  v_plan_cache_mode text := current_setting('plan_cache_mode');\nBEGIN\n",
            1,
        )
        .replace(
            "  IF coalesce(current_setting('app.user_id', true), '') = '' THEN\n",
            """  -- Since migration 15, where Citus is not loaded (plain PostgreSQL: no table can be distributed) the
  -- rows are written by static INSERT ... SELECT statements from the arrays, and the call's statements keep
  -- their plans for the session (plan_cache_mode = auto until the call returns; the pool's connections
  -- force custom plans for the store's own statements): no statement text is built with every value quoted
  -- in, then parsed and planned, on every call. Where Citus is loaded the values are quoted into multi-row
  -- VALUES and the plans are the caller's, as before (below; generic plans slowed delegated saves there).
  IF v_plain THEN
    PERFORM set_config('plan_cache_mode', 'auto', true);
  END IF;
  IF coalesce(current_setting('app.user_id', true), '') = '' THEN
""",
            1,
        )
        .replace(
            "  IF cardinality(v_ids) = 0 THEN\n    RETURN;\n",
            "  IF cardinality(v_ids) = 0 THEN\n    PERFORM set_config('plan_cache_mode', v_plan_cache_mode, true);\n"
            "    RETURN;\n",
            1,
        )
    )
    for literal, static in _STATIC_WRITES:
        assert text.count(literal) == 1, literal[:60]
        text = text.replace(literal, _branch(literal, static))
    last = text.rindex("\nEND\n$fn$")
    return text[:last] + "\n  PERFORM set_config('plan_cache_mode', v_plan_cache_mode, true);" + text[last:]


SAVE = _static_save()
"""Since migration 15: `M014_SAVE` (same signature, replaced) writing with static statements, their plans kept
for the session (`plan_cache_mode = auto` while the call runs), where Citus is not loaded. Params: as
`M014_SAVE`."""

CHECK_FENCE_SIGNATURE = "memstrata_check_fence(text, bigint)"
CHECK_FENCE = f"""
CREATE FUNCTION memstrata_check_fence(p_user_id text, p_expected_generation bigint) RETURNS void
LANGUAGE plpgsql VOLATILE
AS $fn$
BEGIN
  -- The write fence (storage/fence.py) as a statement of the caller's write transaction, after the user's
  -- write lock: raises SQLSTATE {ERASED_SQLSTATE} (the store's UserErased) when the user was erased since the
  -- unit of work read its generation, so the transaction writes nothing; NULL: unfenced, not checked. A
  -- statement rather than a read, so the store sends it pipelined with the write (one round trip). SECURITY
  -- INVOKER: `erasures`' row policy shows the transaction's own user only.
{_fence_check("memstrata_check_fence")}END
$fn$"""
"""Since migration 15. Params: the user, the erasure generation the unit of work fenced the user at."""

CURRENT_FUNCTIONS += (CHECK_FENCE_SIGNATURE,)
