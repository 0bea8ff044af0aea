"""The store contract suite (tests/contract) against PostgreSQL on Citus."""

from __future__ import annotations

import pytest

from tests.contract.test_store_contract import *  # noqa: F403 - the suite, collected here with Citus fixtures

pytestmark = pytest.mark.citus
