"""Ingest LoCoMo dev into one SQLite file, as `bench locomo` does, with the memstrata on PYTHONPATH.

Usage: ingest.py DB. Each code version gets its own file (the schema migrations differ between commits)."""
import os, sys, time

import memstrata
from memstrata.bench import locomo
from memstrata.bench.locomo_data import load
from memstrata.memory import Memory

DATA = os.environ.get("LOCOMO", "/work/shared/data/locomo/locomo-dev.json")
t = time.perf_counter()
with Memory(store=sys.argv[1], embedder="static", track_access=False) as m:
    for c in load(DATA):
        m.store.erase_user(f"locomo-{c.sample_id}")
        locomo.ingest(m, c)
print(memstrata.__file__, sys.argv[1], round(time.perf_counter() - t, 1), "s", file=sys.stderr)
