#!/usr/bin/env bash
# Create the benchmark-only virtualenv for `memstrata-bench peers` and `memstrata-bench plots`:
# LangGraph's stores, mem0 OSS, bm25s + PyStemmer and matplotlib, next to memstrata and the harness (editable).
# The project's own venv and its tests never need it.
#   bash benchmarks/peers/setup.sh            -> ./.venv-peers
#   MEMSTRATA_PEERS_VENV=/path bash ...        -> /path
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${MEMSTRATA_PEERS_VENV:-$root/.venv-peers}"
python="${PYTHON:-python3}"
if command -v uv >/dev/null 2>&1; then
    [ -x "$venv/bin/python" ] || uv venv --python "$python" "$venv"
    uv pip install --python "$venv/bin/python" -r "$root/benchmarks/peers/requirements.txt" -e "$root" -e "$root/benchmarks"
else
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q -r "$root/benchmarks/peers/requirements.txt" -e "$root" -e "$root/benchmarks"
fi
printf "*\n" > "$venv/.gitignore"  # never committed
echo "peers virtualenv ready: $venv/bin/python"
