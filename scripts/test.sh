#!/usr/bin/env bash
# Set up on a fresh machine and run the test suite in both supported environments:
#   .venv        the newest gymnasium 1.x (Ray's tests skip here: Ray pins an older gymnasium)
#   .venv-rllib  ray[rllib] and the gymnasium it pins (the oldest we test), with minari: the whole
#                suite again, RLlib, eval --ray, Minari and behaviour cloning included
# The two suites run side by side (one process each: the machines we test on have two cores), each
# line of their output prefixed with its venv; the script fails if either fails.
# Arguments (e.g. a test file) run in .venv only; PROACTIVITY_SKIP_RLLIB=1 skips the second venv.
set -euo pipefail
cd "$(dirname "$0")/.."
suite() {  # suite VENV [pytest args]: that venv's gymnasium, then its run, each line prefixed
  local venv=$1; shift
  "$venv/bin/python" -c 'import gymnasium; print("gymnasium", gymnasium.__version__)'
  PYTHONUNBUFFERED=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"  # (lines as they come, through the pipe)
}
bash scripts/setup.sh test,minari
if [ $# -gt 0 ] || [ -n "${PROACTIVITY_SKIP_RLLIB:-}" ]; then
  suite .venv "$@"
  exit
fi
bash scripts/setup.sh test,rllib,minari .venv-rllib
(suite .venv 2>&1 | sed -u 's/^/[.venv] /') &
main=$!
(suite .venv-rllib 2>&1 | sed -u 's/^/[.venv-rllib] /') &
rllib=$!
status=0
wait "$main" || status=$?
wait "$rllib" || status=$?
exit "$status"
