"""SQL functions installed by the migrations (text only; `migrations.py` runs them).

Two kinds:

* **SECURITY DEFINER helpers** that run as the schema owner, for the two reads row-level security
  would make slow or impossible for the application role:
  `memstrata_keyword_matches` (full-text matches through the GIN index; `@@` is not LEAKPROOF, so
  under RLS the planner may not use the index) and `memstrata_user_ids` (the admin listing needs
  every user). Both are bound to the caller's `app.user_id` setting or reveal no content, and
  EXECUTE on them is revoked from PUBLIC and granted to the application role only.
* **Supabase-RPC-style functions** from the seed, `match_memories` and `hybrid_memory_search`,
  SECURITY INVOKER: they run under the caller's row-level security.

`search_path` is pinned per function by `migrations.py` (schema, vector's schema, pg_temp).
"""

from __future__ import annotations

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

KEYWORD_MATCHES = """
CREATE FUNCTION memstrata_keyword_matches(p_user_id text, p_query tsquery)
RETURNS TABLE (id text, rank real)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
BEGIN
  -- Runs as the owner so the GIN index on tsv is usable; isolation is re-established here:
  -- only the user named by this transaction's app.user_id, exactly as the RLS policy does.
  IF p_query IS NULL OR numnode(p_query) = 0
     OR p_user_id IS DISTINCT FROM current_setting('app.user_id', true) THEN
    RETURN;
  END IF;
  RETURN QUERY
    SELECT m.id, ts_rank(m.tsv, p_query)
    FROM memories m
    WHERE m.user_id = p_user_id AND m.tsv @@ p_query;
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
  -- combined = 0.7 * cosine similarity + 0.3 * ts_rank (0 without a keyword match).
  -- Exact over the user's current memories: any row outside (vector top-n UNION keyword matches)
  -- scores 0.7 * similarity, which the n vector-nearest rows already reach or beat.
  RETURN QUERY
    WITH nearest AS MATERIALIZED (
      SELECT m.id FROM memories m
      WHERE m.user_id = p_user_id AND m.embedding IS NOT NULL AND {CURRENT_ONLY}
      ORDER BY m.embedding <=> query_embedding
      LIMIT match_count
    ),
    matches AS MATERIALIZED (
      SELECT k.id, k.rank FROM memstrata_keyword_matches(p_user_id, q) k
    ),
    candidates AS (
      SELECT nearest.id FROM nearest UNION SELECT matches.id FROM matches
    )
    SELECT m.id, m.content,
           (0.7 * (1 - (m.embedding <=> query_embedding)) + 0.3 * coalesce(k.rank, 0))::double precision
    FROM candidates c
    JOIN memories m ON m.user_id = p_user_id AND m.id = c.id
    LEFT JOIN matches k ON k.id = m.id
    WHERE m.embedding IS NOT NULL AND {CURRENT_ONLY}
    ORDER BY 3 DESC, m.id
    LIMIT match_count;
END
$fn$"""

FUNCTIONS: tuple[tuple[str, str], ...] = (
    ("memstrata_or_tsquery(text[])", OR_TSQUERY),
    ("memstrata_keyword_matches(text, tsquery)", KEYWORD_MATCHES),
    ("memstrata_user_ids(integer)", USER_IDS),
    ("match_memories(vector, double precision, integer, text)", MATCH_MEMORIES),
    ("hybrid_memory_search(text, vector, text, integer)", HYBRID_MEMORY_SEARCH),
)
"""(signature, CREATE statement) in creation order."""

DEFINER_FUNCTIONS = ("memstrata_keyword_matches(text, tsquery)", "memstrata_user_ids(integer)")
"""EXECUTE revoked from PUBLIC; granted to the application role."""
