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
rev=$1; rounds=${2:-3}; memories=${3:-5000}; queries=${4:-200}; batches=${5:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
out=${OUT:-$root/benchmarks/results/sealing-cost}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/before" "$work/after"
git -C "$root" archive "$rev" memstrata | tar -x -C "$work/before"
cp -r "$root/memstrata" "$work/after/"
cp "$root/memstrata/bench/sealing_cost.py" "$work/before/memstrata/bench/sealing_cost.py"
for round in $(seq 1 "$rounds"); do
  if (( round % 2 )); then sides="before after"; else sides="after before"; fi
  for side in $sides; do
    (cd "$work" && PYTHONPATH="$work/$side" "$python" -m memstrata.bench.sealing_cost --memories "$memories" \
      --queries "$queries" --batches "$batches" --out "$out" --name "$side-$round" > /dev/null)
  done
done
