"""Planner statistics after bulk writes: the store runs ANALYZE once an import changed enough rows."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from memstrata.models import Scope, new_record
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.planner_statistics import ANALYZE_FROM_ROWS, ANALYZE_SHARE, needs_analyze

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize(
    ("changed", "rows", "expected"),
    [
        pytest.param(999, -1, False, id="few-changes-never-analyzed"),
        pytest.param(1000, -1, True, id="bulk-into-a-never-analyzed-table"),
        pytest.param(1000, 1500, True, id="two-thirds-of-the-table"),
        pytest.param(1000, 4000, False, id="a-quarter-of-the-table"),
        pytest.param(20_000, 100_000, False, id="a-fifth-of-a-big-table"),
        pytest.param(50_000, 100_000, True, id="half-of-a-big-table"),
    ],
)
def test_needs_analyze(changed: int, rows: float, expected: bool) -> None:
    assert needs_analyze(changed, rows) is expected
    assert ANALYZE_FROM_ROWS == 1000 and ANALYZE_SHARE == 0.5


def _analyzed(conn: psycopg.Connection[Any]) -> tuple[float, int]:
    row = conn.execute(
        "SELECT c.reltuples, s.analyze_count + s.autoanalyze_count FROM pg_class c "
        "JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = 'memories'::regclass"
    ).fetchone()
    assert row is not None
    return float(row[0]), int(row[1])


def _save(store: PostgresStore, user: str, count: int, batch: int) -> None:
    records = [new_record(scope=Scope(user), content=f"note {i} about topic {i % 37}") for i in range(count)]
    for start in range(0, count, batch):
        store.save(user, records[start : start + batch])


def test_a_bulk_import_into_an_existing_table_is_analyzed(
    pg_store: PostgresStore, owner_conn: psycopg.Connection[Any], app_url: str, owner_url: str
) -> None:
    _save(pg_store, "earlier", 300, 100)  # an existing database: small, and analyzed
    owner_conn.execute("ANALYZE memories")
    assert _analyzed(owner_conn)[0] == 300
    with PostgresStore.open(app_url, owner_url=owner_url) as importer:  # a later process imports
        _save(importer, "importer", 900, 300)  # below the threshold: nothing
        assert importer.planner_statistics.analyzed == 0
        _save(importer, "importer", 2400, 400)  # the import goes on: statistics follow it
        assert importer.planner_statistics.analyzed >= 1
    rows, _ = _analyzed(owner_conn)
    assert rows >= 2000  # the planner knows the table grew (it knew 300 rows before)
