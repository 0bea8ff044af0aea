#!/usr/bin/env bash
# Issue 19 check: what sealing (crypto-shredding) costs the PostgreSQL store, on the code before a change
# (BEFORE_REV) and after it (this checkout), alternating before/after in one stretch (before, after, after,
# before, ...) so both sides see the same machine load. Each run is memstrata/bench/sealing_cost.py: a plain
# and a sealed store in one process, every operation run on both back to back. Each side runs from an
# exported copy of its `memstrata/` package with this checkout's probe (bench/sealing_cost.py), so only the
# store code differs.
# Usage: benchmarks/sealing_cost_before_after.sh BEFORE_REV [ROUNDS] [MEMORIES] [QUERIES] [BATCHES]
# Results: benchmarks/results/sealing-cost/{before,after}-N.json (or $OUT/...); PYTHON: the interpreter (default .venv)
set -euo pipefail
source "$(dirname "$0")/lib/before_after.sh"  # sets root, this checkout
usage_unless 1 "$@"
rev=$1; rounds=${2:-3}; memories=${3:-5000}; queries=${4:-200}; batches=${5:-8}
python=${PYTHON:-$root/.venv/bin/python}
out=${OUT:-$root/benchmarks/results/sealing-cost}
mkdir -p "$out"
export_trees "$rev" memstrata/bench/sealing_cost.py
run() {
  in_tree "$1" "$python" -m memstrata.bench.sealing_cost --memories "$memories" --queries "$queries" \
    --batches "$batches" --out "$out" --name "$1-$2"
}
each_round "$rounds" alternate run
