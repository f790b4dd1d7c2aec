#!/usr/bin/env bash
# Set up on a fresh machine and evaluate the baselines on the scenario suite (the main job).
# Extra arguments go to `proactivity-gym eval` (defaults: all scripted agents, all scenarios,
# all personas, 3 seeds, results in ./results).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh eval
. .venv/bin/activate
proactivity-gym eval "$@"
