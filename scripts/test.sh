#!/usr/bin/env bash
# Set up on a fresh machine and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
. .venv/bin/activate
python -m pytest -q -p no:cacheprovider "$@"
