"""A queue worker in its own process, for the kill -9 tests: `python -m tests.security.queue_worker
URL [OWNER_URL]` opens the store (as the hostile suite's backends do), prints "ready", then runs
the pending jobs of the queue one at a time, printing "ran" after each, until none is left.

Every store write waits `WRITE_DELAY` seconds first, so a job of 26 steps takes about a second on any
machine and a kill sent a few hundred milliseconds after "ready" lands inside a job, not after the
queue is done."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.memory import Memory
from tests.conftest import TEST_DIMENSIONS

WRITE_DELAY = 0.02


def slowed(write: Callable[..., Any]) -> Callable[..., Any]:
    def slow_write(*args: Any, **kwargs: Any) -> Any:
        time.sleep(WRITE_DELAY)
        return write(*args, **kwargs)

    return slow_write


def main(url: str, owner_url: str | None) -> None:
    if url.startswith("sqlite:///"):
        from memstrata.storage.sqlite import SQLiteStore

        store = SQLiteStore(url.removeprefix("sqlite:///"))
    else:
        from memstrata.storage.postgres import PostgresStore

        store = PostgresStore.open(url, owner_url=owner_url)
    store.save = slowed(store.save)  # type: ignore[method-assign]
    with Memory(store=store, embedder=HashingEmbedder(TEST_DIMENSIONS)) as memory:
        print("ready", flush=True)
        while memory.process_queue(limit=1):
            print("ran", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
