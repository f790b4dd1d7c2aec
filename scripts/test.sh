#!/usr/bin/env bash
# Set up on a fresh machine and run the test suite in both supported environments:
#   .venv        the newest gymnasium 1.x (Ray's tests skip here: Ray pins an older gymnasium)
#   .venv-rllib  ray[rllib] and the gymnasium it pins (the oldest we test), with minari: the whole
#                suite again, RLlib, eval --ray, Minari and behaviour cloning included
# Arguments (e.g. a test file) run in .venv only; PROACTIVITY_SKIP_RLLIB=1 skips the second venv.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test,minari
.venv/bin/python -c 'import gymnasium; print("== .venv: gymnasium", gymnasium.__version__)'
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
if [ $# -eq 0 ] && [ -z "${PROACTIVITY_SKIP_RLLIB:-}" ]; then
  bash scripts/setup.sh test,rllib,minari .venv-rllib
  .venv-rllib/bin/python -c 'import gymnasium, ray; print("== .venv-rllib: gymnasium", gymnasium.__version__, "ray", ray.__version__)'
  .venv-rllib/bin/python -m pytest -q -p no:cacheprovider
fi
