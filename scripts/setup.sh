#!/usr/bin/env bash
# Create a venv (default .venv) and install the project with the given extras (default: test).
#   bash scripts/setup.sh test                          # main venv, newest gymnasium
#   bash scripts/setup.sh test,rllib,minari .venv-rllib  # Ray's venv: the gymnasium Ray pins
# Torch comes first as the pinned CPU wheel: an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-test}"
venv="${2:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
. "$venv/bin/activate"
python -m pip install -q --upgrade pip setuptools wheel
case "$extras" in
  *test*|*rl*|*all*|*minari*) python -m pip install -q torch==2.13.0 ;;
esac
python -m pip install -q -e ".[${extras}]"
