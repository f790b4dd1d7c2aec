#!/usr/bin/env bash
# Regenerate the README's behaviour-cloning figures: an oracle dataset on the training seeds of
# every scenario but a held-out one, BC on it, MaskablePPO on the same nine scenarios, then all of
# them (and the policy-follower and oracle) evaluated on test seeds of all ten scenarios.
#   bash scripts/offline_baselines.sh                        # as in the README
#   HELD_OUT=monitor TRAIN_SEEDS=0-49 BC_EPOCHS=30 PPO_STEPS=550000 OUT=runs/offline bash scripts/offline_baselines.sh
# PPO_STEPS=0 leaves MaskablePPO out; MaskablePPO's evaluation while training (which keeps its best
# model) plays the training scenarios, never the held-out one. Finished steps are kept (the dataset, each model, each
# evaluated run): the same command resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-runs/offline}"
held_out="${HELD_OUT:-monitor}"
train_seeds="${TRAIN_SEEDS:-0-49}"
bc_epochs="${BC_EPOCHS:-30}"
ppo_steps="${PPO_STEPS:-550000}"
dataset="proactivity/oracle-train-v0"
# (the venv is made only where it lacks the tools: a worktree's venv may share installed packages)
.venv/bin/python -c "import minari, sb3_contrib" 2>/dev/null || bash scripts/setup.sh test,minari
. .venv/bin/activate
export MINARI_DATASETS_PATH="$PWD/$out/datasets"
train_scenarios=$(python -c "from proactive_env.spec import shipped_names; print(','.join(n for n in shipped_names() if n != '$held_out'))")

if ! python -c "import minari, sys; sys.exit('$dataset' not in minari.list_local_datasets())"; then
  proactivity-gym dataset --agents oracle --scenarios "$train_scenarios" --seeds "$train_seeds" --out "$dataset"
fi
[ -f "$out/bc/bc.pt" ] || proactivity-gym train --algo bc --dataset "$dataset" --epochs "$bc_epochs" --out "$out/bc"
agents="bc:$out/bc/bc.pt"
if [ "$ppo_steps" -gt 0 ]; then
  [ -f "$out/mppo/model.zip" ] || proactivity-gym train --algo maskable-ppo --env Proactivity-Suite-v0 \
    --env-kwargs "{\"exclude\": \"$held_out\"}" --eval-scenarios "$train_scenarios" --timesteps "$ppo_steps" \
    --eval-freq 50000 --eval-episodes 2 --no-progress-bar --out "$out/mppo"
  agents="$agents,sb3:$out/mppo/model.zip"
fi
proactivity-gym eval --agents "$agents,policy-follower,oracle" --scenarios all --seed 1000 --seeds 3 \
  --out "$out/eval" > "$out/eval.log"
python - "$out" "$held_out" <<'PY'
import json, sys
from collections import defaultdict

from proactive_env.scoring.results import load_results

out, held_out = sys.argv[1], sys.argv[2]
by = defaultdict(list)  # (scenario, agent kind) -> rows of results.json (scores as fractions, TC 0-100)
for row in load_results(f"{out}/eval/results.json")["rows"]:
    by[(row["scenario"], row["agent"].split(":")[0])].append(row)
agents = [a for a in ("bc", "sb3", "policy-follower", "oracle") if any(k == a for _, k in by)]
label = {"bc": "BC", "sb3": "MaskablePPO", "policy-follower": "policy-follower", "oracle": "oracle"}


def mean(scenarios, agent, metric):
    rows = [r for s in scenarios for r in by[(s, agent)]]
    return sum(r[metric] * r["runs"] for r in rows) / sum(r["runs"] for r in rows)


bc = json.load(open(f"{out}/bc/bc.json"))
last = bc["history"][-1]
print(f"BC: {bc['episodes']} oracle episodes, {bc['steps']} steps, {len(bc['history'])} epochs; action accuracy "
      f"{last['train_accuracy']:.3f} on training episodes, {last['validation_accuracy']:.3f} on held-out episodes")
scenarios = sorted({s for s, _ in by}, key=lambda s: (s != held_out, -mean([s], "bc", "J")))
print("| scenario | BC J | BC TA % | BC TR-D % | " + " | ".join(f"{label[a]} J" for a in agents[1:]) + " |")
print("|---" * (4 + len(agents) - 1) + "|")
for s in scenarios:
    name = f"**{s} (held out)**" if s == held_out else s
    print(f"| {name} | {mean([s], 'bc', 'J'):.3f} | {100 * mean([s], 'bc', 'TA'):.1f} | "
          f"{100 * mean([s], 'bc', 'TR_D'):.1f} | " + " | ".join(f"{mean([s], a, 'J'):.3f}" for a in agents[1:]) + " |")
seen = [s for s in scenarios if s != held_out]
for a in agents:
    print(f"{label[a]}: mean J {mean(seen, a, 'J'):.3f} on the {len(seen)} training scenarios (test seeds), "
          f"{mean([held_out], a, 'J'):.3f} on {held_out}")
PY
