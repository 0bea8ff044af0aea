#!/usr/bin/env bash
# Session 7 (H1) check: what the idempotent append (turn ids checked in the Lua script) costs a session-buffer
# append, on the code before a change (BEFORE_REV) and after it (this checkout), alternating before/after in
# one stretch (before, after, after, before, ...). Each run is memstrata/bench/buffer_append.py (in-process
# and Redis buffers, sessions of 19, 200 and 1000 turns), from an exported copy of its side's `memstrata/`
# package with this checkout's probe, so only the buffer code differs.
# Usage: benchmarks/buffer_append_before_after.sh BEFORE_REV [ROUNDS] [APPENDS]
# Results: benchmarks/results/buffer-append/{before,after}-N.json (or $OUT/...); PYTHON: the interpreter (default .venv)
set -euo pipefail
source "$(dirname "$0")/lib/before_after.sh"  # sets root, this checkout
usage_unless 1 "$@"
rev=$1; rounds=${2:-3}; appends=${3:-2000}
python=${PYTHON:-$root/.venv/bin/python}
out=${OUT:-$root/benchmarks/results/buffer-append}
mkdir -p "$out"
export_trees "$rev" memstrata/bench/buffer_append.py
run() {
  in_tree "$1" "$python" -m memstrata.bench.buffer_append --appends "$appends" --out "$out" --name "$1-$2"
}
each_round "$rounds" alternate run
