"""A pytest plugin that runs LangGraph's own SQLite store tests against memstrata's LangGraph store.

LangGraph's tests (the `tests/` of the `langgraph-checkpoint-sqlite` source distribution) open their
stores as `SqliteStore.from_conn_string(...)` / `AsyncSqliteStore.from_conn_string(...)`. This plugin,
loaded with `-p langgraph_upstream_plugin` before they are imported, puts `MemstrataStore` and
`AsyncMemstrataStore` in those names: the tests then run unchanged on memstrata, which is what
"a drop-in for SqliteStore" claims. `test_langgraph_upstream.py` runs it; nothing of LangGraph's test
code is copied here.

`NOT_APPLICABLE` lists the upstream tests of SqliteStore's own SQL helpers (they never open a
store, or read its SQL migrations), which say nothing about another store; they are deselected.
"""

from __future__ import annotations

import langgraph.store.sqlite as sqlite_package
import langgraph.store.sqlite.aio as sqlite_aio
import pytest

from memstrata.integrations.langgraph import AsyncMemstrataStore, MemstrataStore

NOT_APPLICABLE = {
    "tests/test_store.py::test_nonnull_migrations": "reads SqliteStore.MIGRATIONS, its SQL schema",
    "tests/test_store.py::test_escape_glob_literal": "a SqliteStore SQL helper, no store is opened",
    "tests/test_store.py::test_namespace_match_pattern": "a SqliteStore SQL helper, no store is opened",
    "tests/test_store.py::test_list_namespaces_prefix_uses_indexable_condition": (
        "the SQL that BaseSqliteStore generates, no store is opened"
    ),
}

sqlite_package.SqliteStore = MemstrataStore  # type: ignore[misc,assignment]
sqlite_package.AsyncSqliteStore = AsyncMemstrataStore  # type: ignore[misc,assignment]
sqlite_aio.AsyncSqliteStore = AsyncMemstrataStore  # type: ignore[misc,assignment]


def pytest_configure(config: pytest.Config) -> None:
    # LangGraph retries its timing-sensitive TTL tests with pytest-retry; here each runs once.
    config.addinivalue_line("markers", "flaky(retries): retried upstream by pytest-retry; run once here")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept = [item for item in items if item.nodeid not in NOT_APPLICABLE]
    deselected = [item for item in items if item.nodeid in NOT_APPLICABLE]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
