"""SQL functions installed by the migrations (text only; `migrations.py` runs them).

Two kinds:

* **SECURITY DEFINER helpers** that run as the schema owner, for the reads row-level security
  would make slow or impossible for the application role:
  `memstrata_keyword_matches` and `memstrata_keyword_top` (full-text matches through the GIN index;
  `@@` is not LEAKPROOF, so under RLS the planner may not use the index; the store calls the second,
  migration 5) and `memstrata_user_ids` (the admin listing needs every user). All are bound to the
  caller's `app.user_id` setting or reveal no content, and EXECUTE on them is revoked from PUBLIC and
  granted to the application role only.
* **Supabase-RPC-style functions** `match_memories` and `hybrid_memory_search` (the names Supabase users call),
  SECURITY INVOKER: they run under the caller's row-level security.

`search_path` is pinned per function by `migrations.py` (schema, vector's schema, pg_temp).
"""

from __future__ import annotations

from ...core.retrieval import KEYWORD_COLUMN_WEIGHTS

_CONTENT, _CONTEXT, _DATE = KEYWORD_COLUMN_WEIGHTS
RANK_WEIGHTS = f"'{{0, {_DATE}, {_CONTEXT}, {_CONTENT}}}'::real[]"
"""ts_rank weights {D, C, B, A}: tsv holds content as A, context as B, the date as C (migrations.py),
weighted like the SQLite store's bm25 columns (`KEYWORD_COLUMN_WEIGHTS`)."""

CURRENT_ONLY = """
      (m.valid_to IS NULL OR m.valid_to > now())
      AND (m.valid_from IS NULL OR m.valid_from <= now())
      AND (m.expires_at IS NULL OR m.expires_at > now())"""

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

KEYWORD_MATCHES = f"""
CREATE FUNCTION memstrata_keyword_matches(
  p_user_id text,
  p_query tsquery,
  p_limit integer DEFAULT NULL,
  p_embedding vector DEFAULT NULL
) RETURNS TABLE (
  user_id text, id text, seq bigint, agent_id text, session_id text, kind text, content text,
  metadata jsonb, importance double precision, created_at timestamptz, updated_at timestamptz,
  valid_from timestamptz, valid_to timestamptz, superseded_by text, expires_at timestamptz,
  source_ids text[], access_count integer, last_accessed_at timestamptz, content_hash text,
  pinned boolean, context text, rank real, similarity double precision
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

COMMON_WORD_ROWS = 256
"""A query word found in more of a user's memories than this is *common* for that user: it selects
keyword candidates only together with another query word (see `KEYWORD_TOP`)."""

KEYWORD_TOP = f"""
CREATE FUNCTION memstrata_keyword_top(p_user_id text, p_words text[], p_limit integer)
RETURNS TABLE (
  user_id text, id text, seq bigint, agent_id text, session_id text, kind text, content text,
  metadata jsonb, importance double precision, created_at timestamptz, updated_at timestamptz,
  valid_from timestamptz, valid_to timestamptz, superseded_by text, expires_at timestamptz,
  source_ids text[], access_count integer, last_accessed_at timestamptz, content_hash text,
  pinned boolean, context text, rank real
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
  -- query word, as whole rows. Same isolation check as memstrata_keyword_matches.
  IF q IS NULL OR numnode(q) = 0 OR p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  -- A user with at most {COMMON_WORD_ROWS} rows: all of them are read through the user_id btree and
  -- ranked (`IS TRUE` keeps the planner off the GIN index, whose posting lists hold EVERY user's
  -- rows: at 100k rows in all it already cost 1 ms more than reading 100 rows, and grows with the table).
  IF (SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.user_id = p_user_id
                            LIMIT {COMMON_WORD_ROWS} + 1) s) <= {COMMON_WORD_ROWS} THEN
    RETURN QUERY
      SELECT r.* FROM (
        SELECT {MATCH_COLUMNS}, ts_rank({RANK_WEIGHTS}, m.tsv, q) AS rank
        FROM memories m WHERE m.user_id = p_user_id AND (m.tsv @@ q) IS TRUE
      ) r
      ORDER BY r.rank DESC, r.created_at DESC, r.seq DESC
      LIMIT p_limit;
    RETURN;
  END IF;
  -- A bigger user: a word in more than {COMMON_WORD_ROWS} of the user's rows (common) only selects
  -- candidates together with another query word (a lone common word keeps all its rows). ts_rank has
  -- no IDF: rows holding one common word tie, by the thousands. With no common word every match is
  -- ranked (on narrow columns; whole rows are built for the p_limit best only, fetched again by
  -- address in the same snapshot: the function is STABLE).
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
      SELECT m.ctid AS tid, ts_rank({RANK_WEIGHTS}, m.tsv, q) AS rank, m.created_at, m.seq
      FROM memories m WHERE m.user_id = p_user_id AND m.tsv @@ wanted
      ORDER BY 2 DESC, m.created_at DESC, m.seq DESC
      LIMIT p_limit
    )
    SELECT {MATCH_COLUMNS}, t.rank
    FROM top t JOIN memories m ON m.ctid = t.tid;
END
$fn$"""

USER_IDS = """
CREATE FUNCTION memstrata_user_ids(p_limit integer) RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER
AS $fn$
  -- Loose index scans (one primary-key probe per distinct user, in order), p_limit per table:
  -- ids only, never content. Costs O(users listed), not O(rows).
  WITH RECURSIVE
  memory_users(u) AS (
    (SELECT user_id FROM memories ORDER BY user_id LIMIT 1)
    UNION ALL
    SELECT (SELECT m.user_id FROM memories m WHERE m.user_id > mu.u ORDER BY m.user_id LIMIT 1)
    FROM memory_users mu WHERE mu.u IS NOT NULL
  ),
  item_users(u) AS (
    (SELECT user_id FROM items ORDER BY user_id LIMIT 1)
    UNION ALL
    SELECT (SELECT i.user_id FROM items i WHERE i.user_id > iu.u ORDER BY i.user_id LIMIT 1)
    FROM item_users iu WHERE iu.u IS NOT NULL
  )
  SELECT u FROM (
    (SELECT u FROM memory_users WHERE u IS NOT NULL LIMIT p_limit)
    UNION
    (SELECT u FROM item_users WHERE u IS NOT NULL LIMIT p_limit)
  ) users
  ORDER BY u LIMIT p_limit
$fn$"""

MATCH_MEMORIES = f"""
CREATE FUNCTION match_memories(
  query_embedding vector,
  match_threshold double precision DEFAULT 0.7,
  match_count integer DEFAULT 5,
  p_user_id text DEFAULT NULL
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
      WHERE m.user_id = v_user AND m.embedding IS NOT NULL AND {CURRENT_ONLY}
      ORDER BY m.embedding <=> query_embedding
      LIMIT match_count
    )
    SELECT n.id, n.content, n.metadata, 1 - n.distance
    FROM nearest n
    WHERE 1 - n.distance >= match_threshold
    ORDER BY n.distance;
END
$fn$"""

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
BEGIN
  -- combined = 0.7 * cosine similarity + 0.3 * ts_rank (0 without a keyword match), exactly, over
  -- the user's current memories: a row that matches no query word scores 0.7 * similarity, which
  -- the n vector-nearest rows reach or beat, so the top n lies in (n nearest UNION keyword matches).
  -- The keyword matches come with their similarity from one pass (GIN when selective).
  RETURN QUERY
    WITH nearest AS MATERIALIZED (
      SELECT m.id, 1 - (m.embedding <=> query_embedding) AS similarity,
             CASE WHEN q IS NOT NULL AND m.tsv @@ q THEN ts_rank({RANK_WEIGHTS}, m.tsv, q) ELSE 0 END AS rank
      FROM memories m
      WHERE m.user_id = p_user_id AND m.embedding IS NOT NULL AND {CURRENT_ONLY}
      ORDER BY m.embedding <=> query_embedding
      LIMIT match_count
    ),
    matches AS MATERIALIZED (
      SELECT k.id, k.similarity, k.rank
      FROM memstrata_keyword_matches(p_user_id, q, NULL, query_embedding) k
      WHERE k.similarity IS NOT NULL AND {CURRENT_ONLY.replace("m.", "k.")}
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

DEFINER_FUNCTIONS = (*M003_DEFINER_FUNCTIONS, KEYWORD_TOP_SIGNATURE)
"""EXECUTE revoked from PUBLIC; granted to the application role."""
