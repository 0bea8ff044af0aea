"""The Buffer contract suite (tests/conversation) on a real Redis Cluster, writes acknowledged by a replica."""

from __future__ import annotations

import pytest

from tests.conversation.test_buffer_contract import *  # noqa: F403 - the suite, with the cluster `buffer`

pytestmark = pytest.mark.redis_cluster

# Not about a backend (spec parsing), or built on the single Redis of tests/conversation.
del test_open_buffer_specs, test_ttl_expires_idle_sessions_and_writes_refresh_it, test_turn_json_round_trip  # noqa: F405, F821
