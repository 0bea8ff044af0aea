"""tests/postgres/test_schema.py against PostgreSQL on Citus."""

from __future__ import annotations

import pytest

from tests.postgres.test_schema import *  # noqa: F403 - collected here with the Citus fixtures

pytestmark = pytest.mark.citus
