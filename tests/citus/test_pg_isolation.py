"""tests/postgres/test_isolation.py against PostgreSQL on Citus."""

from __future__ import annotations

import pytest

from tests.postgres.test_isolation import *  # noqa: F403 - collected here with the Citus fixtures

pytestmark = pytest.mark.citus

# Single-node forms: on Citus, moving rows to another user is refused earlier (the distribution column
# cannot be updated), and the stranger role would be created on another server. Their Citus
# counterparts are in test_rls_shards.py.
del test_raw_writes_to_another_user_are_refused_or_affect_nothing  # noqa: F405, F821
del test_a_role_without_grants_gets_nothing  # noqa: F405, F821
