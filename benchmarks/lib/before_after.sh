# Shared by benchmarks/*_before_after.sh: the two source trees of a before/after comparison and the loop
# that runs both sides, round after round, in one stretch so both see the same machine load.
# Sourced, not run. Sets `root`: the checkout holding these scripts.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# usage_unless COUNT ARGS...: with -h/--help, print the calling script's header comment (its usage) and
# exit 0; with fewer than COUNT arguments, print it on stderr and exit 2.
usage_unless() {
  local needed=$1
  shift
  if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    script_header
    exit 0
  fi
  if (($# < needed)); then
    script_header >&2
    exit 2
  fi
}

# script_header: the comment lines after the calling script's shebang, without their '# '.
script_header() {
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
}

# export_trees REV PROBE...: `$work/before` holds REV's `memstrata/` package and `$work/after` this
# checkout's; each PROBE (a path under memstrata/, the benchmark's driver) is copied from this checkout
# into the before tree, so only the code under test differs. `$work` is removed when the script exits.
export_trees() {
  local rev=$1 probe
  shift
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/before" "$work/after"
  git -C "$root" archive "$rev" memstrata | tar -x -C "$work/before"
  cp -r "$root/memstrata" "$work/after/"
  for probe; do
    cp "$root/$probe" "$work/before/$probe"
  done
}

# in_tree SIDE COMMAND...: run COMMAND from `$work` with SIDE's tree (before/after) as its import path,
# its output discarded (the probes write their results to files).
in_tree() {
  local side=$1
  shift
  (cd "$work" && PYTHONPATH="$work/$side" "$@" > /dev/null)
}

# each_round ROUNDS ORDER RUN: for rounds 1..ROUNDS call `RUN SIDE ROUND` for both sides, before first
# (ORDER=fixed), or before first in odd rounds and after first in even ones (ORDER=alternate: before,
# after, after, before, ...), so neither side always runs on the machine the other just warmed.
each_round() {
  local rounds=$1 order=$2 run=$3 round side sides
  for round in $(seq 1 "$rounds"); do
    sides="before after"
    if [ "$order" = alternate ] && ((round % 2 == 0)); then
      sides="after before"
    fi
    for side in $sides; do
      "$run" "$side" "$round"
    done
  done
}
