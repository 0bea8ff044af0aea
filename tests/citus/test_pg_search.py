"""tests/postgres/test_search.py against PostgreSQL on Citus."""

from __future__ import annotations

import pytest

from tests.postgres.test_search import *  # noqa: F403 - collected here with the Citus fixtures

pytestmark = pytest.mark.citus
