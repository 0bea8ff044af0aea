#!/usr/bin/env bash
# Issue 15 check: PostgreSQL search p99 for queries up to 32 KB at 10k memories, idle and under load,
# on the code before a change (BEFORE_REV) and after it (this checkout), alternating in one stretch so
# both sides see the same machine load. Each side runs from an exported copy of its `memstrata/` package
# with this checkout's latency probe (memstrata/bench/reliability.py), so only the search path differs.
# Usage: benchmarks/search_latency_before_after.sh BEFORE_REV ADMIN_URL [ROUNDS] [LOAD_THREADS]
# Results: benchmarks/results/search-latency/{before,after}-N.json
set -euo pipefail
source "$(dirname "$0")/lib/before_after.sh"  # sets root, this checkout
usage_unless 2 "$@"
rev=$1; admin=$2; rounds=${3:-2}; threads=${4:-4}
out=$root/benchmarks/results/search-latency
mkdir -p "$out"
export_trees "$rev" memstrata/bench/reliability.py
run() {
  in_tree "$1" "$root/.venv/bin/python" -m memstrata.bench.reliability --postgres-admin-url "$admin" \
    --only search_latency --load-threads "$threads" --out "$out/$1-$2.json"
}
each_round "$rounds" fixed run
