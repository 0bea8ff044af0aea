"""SQLite schema migrations, applied in order; `PRAGMA user_version` holds the schema version."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from itertools import groupby

from ..core.keyword_statistics import statistics_change
from . import sqlite_keyword


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute statements one by one (unlike `executescript`, this stays inside the open transaction)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement in migration: {statement[:80]!r}")


def m001_initial(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL CHECK (user_id <> ''),
            id TEXT NOT NULL,
            agent_id TEXT,
            session_id TEXT,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            importance REAL NOT NULL DEFAULT 0.5,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            valid_from REAL,
            valid_to REAL,
            superseded_by TEXT,
            expires_at REAL,
            source_ids TEXT NOT NULL DEFAULT '[]',
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at REAL,
            content_hash TEXT NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            context TEXT NOT NULL DEFAULT '',
            date_text TEXT NOT NULL DEFAULT '',
            embedding BLOB,
            UNIQUE (user_id, id)
        );
        CREATE INDEX memories_user_created ON memories (user_id, created_at);
        CREATE INDEX memories_user_hash ON memories (user_id, content_hash);
        CREATE INDEX memories_user_session ON memories (user_id, session_id, created_at);

        CREATE VIRTUAL TABLE memories_fts USING fts5(
            user_id, content, context, date_text,
            content='memories', content_rowid='rowid', tokenize='porter unicode61'
        );
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, user_id, content, context, date_text)
            VALUES (new.rowid, new.user_id, new.content, new.context, new.date_text);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, user_id, content, context, date_text)
            VALUES ('delete', old.rowid, old.user_id, old.content, old.context, old.date_text);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, context, date_text, user_id ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, user_id, content, context, date_text)
            VALUES ('delete', old.rowid, old.user_id, old.content, old.context, old.date_text);
            INSERT INTO memories_fts (rowid, user_id, content, context, date_text)
            VALUES (new.rowid, new.user_id, new.content, new.context, new.date_text);
        END;

        CREATE TABLE history (
            user_id TEXT NOT NULL CHECK (user_id <> ''),
            id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            event TEXT NOT NULL,
            at REAL NOT NULL,
            before TEXT,
            after TEXT,
            details TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (user_id, id)
        );
        CREATE INDEX history_memory ON history (user_id, memory_id, at);

        CREATE TABLE items (
            user_id TEXT NOT NULL CHECK (user_id <> ''),
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (user_id, namespace, key)
        );
        CREATE INDEX items_recent ON items (user_id, namespace, updated_at);

        CREATE TABLE vector_versions (
            user_id TEXT PRIMARY KEY,
            version INTEGER NOT NULL
        );
        """,
    )


def m002_lookup_indexes(conn: sqlite3.Connection) -> None:
    """Resolution looks memories up by their structured slot (metadata attribute); context assembly
    asks whether a user has memories of a kind at all; keyword search reads document frequencies."""
    conn.execute(
        """CREATE INDEX memories_user_slot ON memories
           (user_id, json_extract(metadata, '$."attribute"'), json_extract(metadata, '$."value"'))"""
    )
    conn.execute("CREATE INDEX memories_user_kind ON memories (user_id, kind, created_at)")
    conn.execute("CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')")


def m003_erasure_generations(conn: sqlite3.Connection) -> None:
    """Per-user erasure generation, raised by every erasure: the write fence (storage/fence.py)."""
    conn.execute("CREATE TABLE erasures (user_key TEXT PRIMARY KEY, generation INTEGER NOT NULL) WITHOUT ROWID")


_M004_TABLES = """
CREATE TABLE keyword_postings (
    user_id TEXT NOT NULL,
    term TEXT NOT NULL,
    memory INTEGER NOT NULL,
    frequency REAL NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (user_id, term, memory)
) WITHOUT ROWID;
CREATE TABLE keyword_totals (
    user_id TEXT PRIMARY KEY,
    documents INTEGER NOT NULL,
    tokens INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE keyword_documents (
    user_id TEXT NOT NULL,
    term TEXT NOT NULL,
    documents INTEGER NOT NULL,
    PRIMARY KEY (user_id, term)
) WITHOUT ROWID;
"""
"""The keyword tables as migration 4 made them (each row names its user by user_id; migration 5
replaced the name by an integer key)."""


def m004_keyword_statistics(conn: sqlite3.Connection) -> None:
    """Keyword search ranked with each user's own BM25 statistics (`sqlite_keyword`): the postings and
    statistics tables, filled from every stored memory, user by user; the FTS5 index, whose `bm25()`
    counted every user's rows, is dropped with its triggers and vocabulary table."""
    run_script(conn, _M004_TABLES)
    rows = conn.execute("SELECT user_id, rowid, content, context, date_text FROM memories ORDER BY user_id, rowid")
    for user_id, memories in groupby(rows, key=lambda row: row[0]):
        indexed = [(rowid, sqlite_keyword.stored_terms(user_id, *texts)) for _, rowid, *texts in memories]
        conn.executemany(
            "INSERT INTO keyword_postings (user_id, term, memory, frequency, length) VALUES (?, ?, ?, ?, ?)",
            [(user_id, term, rowid, f, t.length) for rowid, t in indexed for term, f in t.frequencies.items()],
        )
        change = statistics_change((), ((t.frequencies, t.length) for _, t in indexed))
        conn.executemany(
            "INSERT INTO keyword_documents (user_id, term, documents) VALUES (?, ?, ?)",
            [(user_id, term, n) for term, n in change.documents.items()],
        )
        conn.execute("INSERT INTO keyword_totals VALUES (?, ?, ?)", (user_id, change.memories, change.tokens))
    run_script(
        conn,
        """
        DROP TRIGGER memories_fts_insert;
        DROP TRIGGER memories_fts_delete;
        DROP TRIGGER memories_fts_update;
        DROP TABLE memories_fts_vocab;
        DROP TABLE memories_fts;
        """,
    )


_M005_TABLES = """
CREATE TABLE keyword_users (
    user_key INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL UNIQUE,
    documents INTEGER NOT NULL,
    tokens INTEGER NOT NULL
);
CREATE TABLE keyword_postings (
    user_key INTEGER NOT NULL,
    term TEXT NOT NULL,
    memory INTEGER NOT NULL,
    frequency REAL NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (user_key, term, memory)
) WITHOUT ROWID;
CREATE TABLE keyword_documents (
    user_key INTEGER NOT NULL,
    term TEXT NOT NULL,
    documents INTEGER NOT NULL,
    PRIMARY KEY (user_key, term)
) WITHOUT ROWID;
"""
"""The keyword tables as migration 5 made them: `keyword_postings` held one row per term of each memory
(migration 7 grouped them in segments)."""


def m005_keyword_user_keys(conn: sqlite3.Connection) -> None:
    """The keyword tables name a user by an integer key (`keyword_users`, which also holds the totals
    `keyword_totals` held), not by the user id in every posting: the postings' b-tree shrinks by 40 %
    and writes get faster. The rows are copied, unchanged but for the key; every posting and count
    keeps its value, so every ranking stays the same."""
    for table in ("keyword_postings", "keyword_documents"):
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_m004")
    run_script(conn, _M005_TABLES)
    run_script(
        conn,
        """
        INSERT INTO keyword_users (user_id, documents, tokens)
            SELECT user_id, documents, tokens FROM keyword_totals WHERE documents > 0 ORDER BY user_id;
        INSERT INTO keyword_postings (user_key, term, memory, frequency, length)
            SELECT u.user_key, p.term, p.memory, p.frequency, p.length
            FROM keyword_postings_m004 p JOIN keyword_users u ON u.user_id = p.user_id
            ORDER BY 1, 2, 3;
        INSERT INTO keyword_documents (user_key, term, documents)
            SELECT u.user_key, d.term, d.documents
            FROM keyword_documents_m004 d JOIN keyword_users u ON u.user_id = d.user_id
            ORDER BY 1, 2;
        DROP TABLE keyword_postings_m004;
        DROP TABLE keyword_documents_m004;
        DROP TABLE keyword_totals;
        """,
    )


def m006_keyword_tail(conn: sqlite3.Connection) -> None:
    """A tail for the postings of small writes (`sqlite_keyword.TAIL_TABLE`), empty: every posting
    stays where it is, so every ranking stays the same."""
    run_script(conn, sqlite_keyword.TAIL_TABLE)


def m007_keyword_segments(conn: sqlite3.Connection) -> None:
    """The postings of `keyword_postings`, one row per term of each memory, become segments
    (`sqlite_keyword.SEGMENT_TABLES`): each user's memories, in rowid order, cut into groups of
    `SEGMENT_MEMORIES`, one row per term of a group. Every posting keeps its frequency and length, and
    the tail, the term counts and the totals stay as they are, so every ranking stays the same."""
    run_script(conn, sqlite_keyword.SEGMENT_TABLES)
    rows = conn.execute(
        "SELECT user_key, memory, term, frequency, length FROM keyword_postings ORDER BY user_key, memory"
    )
    for user_key, postings in groupby(rows, key=lambda row: row[0]):
        segments = 0
        group: list[tuple[int, int, dict[str, float]]] = []  # one segment's memories at a time
        for memory, held in groupby(postings, key=lambda row: row[1]):
            held_rows = list(held)  # every posting of a memory has the memory's length
            group.append((memory, held_rows[0][4], {term: frequency for _, _, term, frequency, _ in held_rows}))
            if len(group) == sqlite_keyword.SEGMENT_MEMORIES:
                segments = sqlite_keyword.write_segments(conn, user_key, segments, group)
                group = []
        segments = sqlite_keyword.write_segments(conn, user_key, segments, group)
        conn.execute("UPDATE keyword_users SET segments = ? WHERE user_key = ?", (segments, user_key))
    conn.execute("DROP TABLE keyword_postings")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    m001_initial,
    m002_lookup_indexes,
    m003_erasure_generations,
    m004_keyword_statistics,
    m005_keyword_user_keys,
    m006_keyword_tail,
    m007_keyword_segments,
)
SCHEMA_VERSION = len(MIGRATIONS)
