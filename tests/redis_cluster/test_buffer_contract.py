"""The Buffer contract suite (tests/conversation) on a real Redis Cluster, writes acknowledged by a replica.

Every test of the suite that takes the `buffer` fixture runs here with the cluster backend; the others
(spec parsing, the in-process clock, the single Redis of tests/conversation) are not collected again.
"""

from __future__ import annotations

import inspect

import pytest

from tests.conversation import test_buffer_contract as suite

pytestmark = pytest.mark.redis_cluster

globals().update(
    {
        name: test
        for name, test in vars(suite).items()
        if name.startswith("test_") and "buffer" in inspect.signature(test).parameters
    }
)
