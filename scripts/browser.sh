#!/usr/bin/env bash
# Make Debian's headless Chromium available at /usr/bin/chromium for the Web UI tests (idempotent).
# The tests drive it with the `playwright` Python package via executable_path; `playwright install`
# (which downloads its own browsers) is never used.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "need root or sudo to apt-get install chromium" >&2; exit 1; }
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo installed)"
