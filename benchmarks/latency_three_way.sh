#!/usr/bin/env bash
# Issue 17, fourth pass: LoCoMo search latency (`bench locomo`) and the 100k-memories-in-one-user point
# (`bench latency`) of three source trees, alternating in one stretch so all three see the same load: the
# reference (9d012d8), main before the change and the change. A copy of rank_before_after.sh for three
# sides; each round runs the sides in a rotated order, so no side always runs first or after the same one.
# Each SRC is a source tree (e.g. `git archive 9d012d8 | tar -x -C /tmp/ref`), run with one venv from a
# neutral directory (so that `python -m` does not put a checkout first on sys.path).
# Usage: benchmarks/latency_three_way.sh REF_SRC MAIN_SRC AFTER_SRC LOCOMO_JSON [LOCOMO_ROUNDS] [LATENCY_ROUNDS]
# Environment: PY (default: /work/main/.venv/bin/python), OUT (default: benchmarks/results/latency-s7).
# Writes OUT/{locomo,latency-100k}-{ref,main,after}-ROUND.json and OUT/loadavg.txt (the load after each run).
set -euo pipefail
ref=$1; main=$2; after=$3; data=$4; locomo_rounds=${5:-3}; latency_rounds=${6:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/benchmarks/results/latency-s7}
mkdir -p "$out"
py=${PY:-/work/main/.venv/bin/python}
cd "$(mktemp -d)"
sides=(ref main after)
src_of() { case $1 in ref) echo "$ref" ;; main) echo "$main" ;; after) echo "$after" ;; esac; }
rotated() { local r=$1; for i in 0 1 2; do echo "${sides[$(((i + r) % 3))]}"; done; }
for round in $(seq 1 "$locomo_rounds"); do
  for side in $(rotated "$round"); do
    PYTHONPATH=$(src_of "$side") nice -n 5 "$py" -m memstrata bench locomo --data "$data" --json > "$out/locomo-$side-$round.json"
    echo "$(date -u +%H:%M:%S) locomo $side $round $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loadavg.txt"
  done
done
for round in $(seq 1 "$latency_rounds"); do
  for side in $(rotated "$round"); do
    PYTHONPATH=$(src_of "$side") nice -n 5 "$py" -m memstrata bench latency --memories 100000 --users 1 --queries 200 \
      --json > "$out/latency-100k-$side-$round.json"
    echo "$(date -u +%H:%M:%S) latency-100k $side $round $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loadavg.txt"
  done
done
