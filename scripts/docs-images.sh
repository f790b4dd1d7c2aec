#!/usr/bin/env bash
# Regenerate the README's pictures: the report of the default evaluation (a headless-Chromium
# screenshot, failing on any console message) and one episode drawn by `show`.
# Needs the eval extra (scripts/setup.sh eval) and Chromium (apt-get install -y chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
out="${1:-results}"
proactivity-gym eval --out "$out"
proactivity-gym report "$out" --reported
proactivity-gym show "$out/trajectories/policy-follower/experiments-operator-s1000.json" --formats png \
    --out docs/img/show-experiments
log="$(mktemp)"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --window-size=1400,1700 --screenshot=docs/img/report.png "file://$PWD/$out/report/index.html" 2>"$log"
# the lost-points tables (the report's lost-points.html) and one episode page
page="$(ls "$out"/report/episodes/policy-follower/monitor-planner-s*.html | head -1)"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --disable-background-networking --disable-component-update --no-first-run --user-data-dir="$(mktemp -d)" \
    --window-size=1400,1150 --screenshot=docs/img/report-lost-points.png \
    "file://$PWD/$out/report/lost-points.html" 2>>"$log"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --disable-background-networking --disable-component-update --no-first-run --user-data-dir="$(mktemp -d)" \
    --window-size=1400,1500 --screenshot=docs/img/episode-page.png "file://$PWD/$page" 2>>"$log"
if grep ":CONSOLE" "$log"; then
  echo "a page logged console messages (above)" >&2
  exit 1
fi
echo "docs/img/report.png, report-lost-points.png, episode-page.png and show-experiments.png updated"
