#!/usr/bin/env bash
# Issue 14 check: the architecture refactor must not change behaviour. Runs LoCoMo recall and the
# 100k-in-one-user latency point on the code before the refactor (a worktree at BEFORE) and after (this
# checkout), interleaved in one stretch so both see the same machine load.
# Usage: benchmarks/architecture_before_after.sh BEFORE_WORKTREE AFTER_WORKTREE LOCOMO_JSON [ROUNDS]
# (each worktree with its own .venv; results go to this checkout's benchmarks/results/architecture)
set -euo pipefail
source "$(dirname "$0")/lib/before_after.sh"  # sets root, this checkout
usage_unless 3 "$@"
before=$1; after=$2; data=$3; rounds=${4:-2}
out=$root/benchmarks/results/architecture
mkdir -p "$out"
run() {
  local dir=$before
  [ "$1" = after ] && dir=$after
  (cd "$dir" && .venv/bin/memstrata bench locomo --data "$data" --json) > "$out/locomo-$1-$2.json"
  (cd "$dir" && .venv/bin/memstrata bench latency --memories 100000 --users 1 --queries 200 --json) \
    > "$out/latency-100k-$1-$2.json"
}
each_round "$rounds" fixed run
