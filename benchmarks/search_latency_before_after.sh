#!/usr/bin/env bash
# Issue 15 check: PostgreSQL search p99 for queries up to 32 KB at 10k memories, idle and under load,
# on the code before a change (BEFORE_REV) and after it (this checkout), alternating in one stretch so
# both sides see the same machine load. Each side runs from an exported copy of its `memstrata/` package
# with this checkout's latency probe (memstrata/bench/reliability.py), so only the search path differs.
# Usage: benchmarks/search_latency_before_after.sh BEFORE_REV ADMIN_URL [ROUNDS] [LOAD_THREADS]
# Results: benchmarks/results/search-latency/{before,after}-N.json
set -euo pipefail
rev=$1; admin=$2; rounds=${3:-2}; threads=${4:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/benchmarks/results/search-latency
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/before" "$work/after"
git -C "$root" archive "$rev" memstrata | tar -x -C "$work/before"
cp -r "$root/memstrata" "$work/after/"
cp "$root/memstrata/bench/reliability.py" "$work/before/memstrata/bench/reliability.py"
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    (cd "$work" && PYTHONPATH="$work/$side" "$root/.venv/bin/python" -m memstrata.bench.reliability \
      --postgres-admin-url "$admin" --only search_latency --load-threads "$threads" \
      --out "$out/$side-$round.json" > /dev/null)
  done
done
