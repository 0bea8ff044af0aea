#!/usr/bin/env bash
# Issue 17 (ranking): LoCoMo recall and search latency, and the 100k-memories-in-one-user latency point, on the
# code before the change and after it (this checkout), alternating in one stretch so both see the same load.
# BEFORE_SRC is a source tree of the earlier revision (e.g. `git archive 9d012d8 | tar -x -C /tmp/before`);
# both sides run with this checkout's .venv from a neutral directory (so that `python -m` does not put this
# checkout first on sys.path), each with its own source tree on PYTHONPATH.
# AFTER_SRC (default: this checkout) may be a snapshot too, so that edits during the run do not leak into it.
# Usage: benchmarks/rank_before_after.sh BEFORE_SRC LOCOMO_JSON [ROUNDS] [AFTER_SRC]
# Environment: PY (default: this checkout's .venv/bin/python), OUT (default: benchmarks/results/rank-before-after),
# ORDER (fixed: before first in every round, the default; alternate: before first in odd rounds only).
set -euo pipefail
source "$(dirname "$0")/lib/before_after.sh"  # sets root, this checkout
usage_unless 2 "$@"
before=$1; data=$2; rounds=${3:-2}
after=${4:-$root}
out=${OUT:-$root/benchmarks/results/rank-before-after}
mkdir -p "$out"
py=${PY:-$root/.venv/bin/python}
cd "$(mktemp -d)"
run() {
  local src=$after
  [ "$1" = before ] && src=$before
  PYTHONPATH=$src nice -n 5 "$py" -c 'import memstrata, sys; print(memstrata.__file__, file=sys.stderr)'
  PYTHONPATH=$src nice -n 5 "$py" -m memstrata bench locomo --data "$data" --json > "$out/locomo-$1-$2.json"
  PYTHONPATH=$src nice -n 5 "$py" -m memstrata bench latency --memories 100000 --users 1 --queries 200 --json \
    > "$out/latency-100k-$1-$2.json"
}
each_round "$rounds" "${ORDER:-fixed}" run
