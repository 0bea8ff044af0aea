"""Does ranking from keyword_postings (migration 11) return what migration 9's ranking returned?

Loads the LoCoMo dev conversations (every turn, as `memstrata bench locomo` stores them) into a throwaway
PostgreSQL database with the current code, installs migration 9's `memstrata_keyword_top` under another
name (it reads the memories' own keyword columns), and compares, for every question, the top 50 of both
functions: same memories in the same order, same set, and the largest score difference.

    PYTHONPATH=$PWD python benchmarks/pg_postings_equivalence.py /work/shared/data/locomo/locomo-dev.json \
        benchmarks/results/pg-postings-equivalence.json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import psycopg

from memstrata import Memory
from memstrata.bench.latency import bench_store, open_postgres
from memstrata.bench.locomo import ingest, load
from memstrata.storage.postgres import sql_functions as functions
from memstrata.storage.postgres.keyword import search_terms

TOP = 50


def main(data: str, out: str) -> None:
    conversations = load(data)
    same_order = same_set = questions = 0
    largest = 0.0
    with bench_store("postgres") as target:
        with Memory(store=open_postgres(target), embedder="static", track_access=False) as memory:
            for conversation in conversations:
                ingest(memory, conversation)
        assert target.owner_url is not None
        with psycopg.connect(target.owner_url, autocommit=True) as conn:
            conn.execute(
                functions.KEYWORD_TOP_BM25.replace(
                    "CREATE FUNCTION memstrata_keyword_top(", "CREATE FUNCTION migration9_keyword_top(", 1
                )
            )
            for conversation in conversations:
                user = f"locomo-{conversation.sample_id}"
                conn.execute("SELECT set_config('app.user_id', %s, false)", [user])
                for question in conversation.questions:
                    terms = search_terms(user, question.question)
                    old = conn.execute(
                        "SELECT id, rank FROM migration9_keyword_top(%s, %s, %s)", [user, terms, 4 * TOP]
                    )
                    new = conn.execute("SELECT id, rank FROM memstrata_keyword_top(%s, %s, %s)", [user, terms, TOP])
                    before, after = old.fetchall()[:TOP], new.fetchall()[:TOP]
                    questions += 1
                    same_order += [i for i, _ in before] == [i for i, _ in after]
                    same_set += {i for i, _ in before} == {i for i, _ in after}
                    scores: dict[str, float] = dict(before)
                    largest = max([largest, *(abs(scores[i] - r) for i, r in after if i in scores)])
    result = {
        "benchmark": "pg-postings-equivalence",
        "data": Path(data).name,
        "questions": questions,
        "top": TOP,
        "same_order": same_order,
        "same_set": same_set,
        "largest_score_difference": largest,
        "load_avg": os.getloadavg(),
        "command": "python benchmarks/pg_postings_equivalence.py locomo-dev.json OUT",
    }
    Path(out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
