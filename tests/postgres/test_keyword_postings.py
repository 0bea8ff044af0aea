"""keyword_postings (migration 11): one row per (user, term, memory) holding what the memory's keyword
columns hold, kept in step by every write, delete and erasure, copied for existing memories by the
migration, and holding the sealed store's tokens, never its words."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from memstrata.core.keyword_index import memory_terms
from memstrata.core.keyword_statistics import statistics_change
from memstrata.models import MemoryRecord, Scope, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.crypto import LocalKeyProvider, new_data_key
from memstrata.storage.postgres import PostgresStore, migrations
from memstrata.storage.postgres.keyword import row_values, statistics_statements
from memstrata.storage.sqlite import SQLiteStore
from tests.support.pg import postgres_urls

pytestmark = pytest.mark.postgres

TEXTS = (
    "Caroline's pottery class moved to Tuesday evenings",
    "Melanie ran a charity race for mental health last Saturday",
    "Caroline went to the LGBTQ support group and felt accepted",
    "Melanie painted a sunrise over the lake in August",
    "The pottery class made bowls; Caroline's bowl cracked in the kiln",
    "Caroline is researching adoption agencies for next year",
)
START = datetime(2023, 5, 1, tzinfo=UTC)


def _records(user: str) -> list[MemoryRecord]:
    return [
        new_record(scope=Scope(user), content=text).evolve(created_at=START + timedelta(days=n))
        for n, text in enumerate(TEXTS)
    ]


Posting = tuple[str, str, float, int]


def _postings(owner_url: str, user: str) -> set[Posting]:
    with psycopg.connect(owner_url) as conn:
        conn.execute("SELECT set_config('app.user_id', %s, false)", [user])
        rows = conn.execute(
            "SELECT term, memory_id, frequency, length FROM keyword_postings WHERE user_id = %s", [user]
        ).fetchall()
    return {(t, i, float(f), int(n)) for t, i, f, n in rows}


def _from_columns(owner_url: str, user: str) -> set[Posting]:
    """The postings the memories' own keyword columns call for."""
    with psycopg.connect(owner_url) as conn:
        conn.execute("SELECT set_config('app.user_id', %s, false)", [user])
        rows = conn.execute(
            "SELECT t.term, m.id, t.frequency, m.keyword_length FROM memories m "
            "CROSS JOIN LATERAL unnest(m.keyword_terms, m.keyword_frequencies) AS t(term, frequency) "
            "WHERE m.user_id = %s",
            [user],
        ).fetchall()
    return {(t, i, float(f), int(n)) for t, i, f, n in rows}


def _expected(user: str, records: list[MemoryRecord]) -> set[Posting]:
    expected = set()
    for record in records:
        terms = memory_terms(user, record)
        for term, frequency in terms.frequencies.items():
            expected.add((term, record.id, float(frequency), terms.length))
    return expected


@pytest.fixture
def urls() -> Iterator[tuple[str, str]]:
    with postgres_urls() as (app_url, owner_url):
        yield app_url, owner_url


def test_postings_follow_saves_replacements_deletes_and_erasure(urls: tuple[str, str]) -> None:
    app_url, owner_url = urls
    with PostgresStore.open(app_url, owner_url=owner_url) as store:
        ana, ben = _records("ana"), _records("ben")
        store.save("ana", ana)
        store.save("ben", ben)
        assert _postings(owner_url, "ana") == _expected("ana", ana)
        changed = ana[0].evolve(content="Caroline's pottery class is now on Thursday mornings")
        again = ana[1].evolve(content="Melanie ran a marathon")
        store.save("ana", [changed, again, again])  # a replacement, and one id written twice in one save
        store.delete("ana", [ana[2].id])
        kept = [changed, again, *ana[3:]]
        assert _postings(owner_url, "ana") == _expected("ana", kept) == _from_columns(owner_url, "ana")
        assert not any(i == ana[2].id for _, i, _, _ in _postings(owner_url, "ana"))
        store.erase_user("ana")
        assert _postings(owner_url, "ana") == set()
        assert _postings(owner_url, "ben") == _expected("ben", ben)  # another user's postings untouched


def test_sealed_postings_hold_the_rows_tokens_not_words(urls: tuple[str, str]) -> None:
    app_url, owner_url = urls
    provider = LocalKeyProvider(new_data_key())
    with PostgresStore.open(app_url, owner_url=owner_url, key_provider=provider) as store:
        records = _records("ana")
        store.save("ana", records)
        postings = _postings(owner_url, "ana")
        assert postings == _from_columns(owner_url, "ana") and len(postings) > len(records)
        plain = {term for term, _, _, _ in _expected("ana", records)}
        assert not plain & {term for term, _, _, _ in postings}
        [hit, *_] = store.keyword_search("ana", "adoption agencies", MemoryFilter(), limit=3)
        assert hit.record.id == records[5].id
        store.erase_user("ana")
        assert _postings(owner_url, "ana") == set()


_V10_INSERT = (
    "INSERT INTO memories (user_id, id, kind, content, context, date_text, created_at, updated_at, content_hash, "
    "keyword_terms, keyword_frequencies, keyword_length) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def test_migration_11_copies_the_postings_of_existing_memories(
    urls: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memories written as version 10 wrote them (keyword columns, no postings) are found and ranked
    exactly as the SQLite store ranks them once the store migrates, in several batches."""
    app_url, owner_url = urls
    corpus = {user: _records(user) for user in ("ana", "ben")}
    with psycopg.connect(owner_url, autocommit=True) as owner:
        assert migrations.migrate(owner, target=10) == 10
        with owner.transaction():
            for user, records in corpus.items():
                owner.execute("SELECT set_config('app.user_id', %s, true)", [user])
                for r in records:
                    owner.execute(
                        _V10_INSERT,
                        [
                            user,
                            r.id,
                            r.kind.value,
                            r.content,
                            r.context,
                            "",
                            r.created_at,
                            r.updated_at,
                            r.content_hash,
                            *row_values(memory_terms(user, r)),
                        ],
                    )
                indexed = [memory_terms(user, r) for r in records]
                change = statistics_change((), ((list(t.frequencies), t.length) for t in indexed))
                for statement, params in statistics_statements(user, change):
                    owner.execute(statement, params)
    monkeypatch.setattr(migrations, "BACKFILL_BATCH", 4)  # users split across batches
    with PostgresStore.open(app_url, owner_url=owner_url) as store:
        for user, records in corpus.items():
            assert _postings(owner_url, user) == _expected(user, records)
            sqlite = SQLiteStore(tmp_path / f"{user}.db")  # one user per file: the same statistics
            try:
                sqlite.save(user, records)
                for query in ("Caroline's pottery", "charity race", "bowl cracked in the kiln", "May 2023"):
                    expected = sqlite.keyword_search(user, query, MemoryFilter(), limit=10)
                    got = store.keyword_search(user, query, MemoryFilter(), limit=10)
                    assert got and [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-6)
            finally:
                sqlite.close()
