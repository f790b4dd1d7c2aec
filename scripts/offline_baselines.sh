#!/usr/bin/env bash
# Regenerate the README's behaviour-cloning figures: an oracle dataset on the training seeds of
# every scenario but a held-out one, BC on it, MaskablePPO on the same nine scenarios, then all of
# them (and the policy-follower and oracle) evaluated on test seeds of all ten scenarios.
#   bash scripts/offline_baselines.sh                        # as in the README
#   HELD_OUT=monitor TRAIN_SEEDS=0-49 PPO_STEPS=550000 OUT=runs/offline bash scripts/offline_baselines.sh
# Finished steps are kept (the dataset, each model, each evaluated run): the same command resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-runs/offline}"
held_out="${HELD_OUT:-monitor}"
train_seeds="${TRAIN_SEEDS:-0-49}"
ppo_steps="${PPO_STEPS:-550000}"
dataset="proactivity/oracle-train-v0"
bash scripts/setup.sh test,minari
. .venv/bin/activate
export MINARI_DATASETS_PATH="$PWD/$out/datasets"
train_scenarios=$(python -c "from proactive_env.spec import shipped_names; print(','.join(n for n in shipped_names() if n != '$held_out'))")

if ! python -c "import minari, sys; sys.exit('$dataset' not in minari.list_local_datasets())"; then
  proactivity-gym dataset --agents oracle --scenarios "$train_scenarios" --seeds "$train_seeds" --out "$dataset"
fi
[ -f "$out/bc/bc.pt" ] || proactivity-gym train --algo bc --dataset "$dataset" --out "$out/bc"
[ -f "$out/mppo/model.zip" ] || proactivity-gym train --algo maskable-ppo --env Proactivity-Suite-v0 \
  --env-kwargs "{\"exclude\": \"$held_out\"}" --eval-scenarios "$held_out" --timesteps "$ppo_steps" \
  --eval-freq 50000 --eval-episodes 2 --progress-bar 0 --out "$out/mppo"
proactivity-gym eval --agents "bc:$out/bc/bc.pt,sb3:$out/mppo/model.zip,policy-follower,oracle" \
  --scenarios all --seed 1000 --seeds 3 --out "$out/eval" > "$out/eval.log"
python - "$out" "$held_out" <<'PY'
import json, sys
from collections import defaultdict
out, held_out = sys.argv[1], sys.argv[2]
rows = json.load(open(f"{out}/eval/results.json"))
by = defaultdict(list)
for r in rows:
    by[(r["scenario"], r["agent"].split(":")[0])].append(r)
mean = lambda rs, k: sum(r[k] * r["runs"] for r in rs) / sum(r["runs"] for r in rs)
bc = json.load(open(f"{out}/bc/bc.json"))
print(f"BC: {bc['episodes']} oracle episodes, {bc['steps']} steps; final action accuracy "
      f"{bc['history'][-1]['train_accuracy']:.3f} (held-out episodes {bc['history'][-1]['validation_accuracy']:.3f})")
print("| scenario | BC J | BC TA % | BC TR-D % | MaskablePPO J | policy-follower J | oracle J |")
print("|---|---|---|---|---|---|---|")
scenarios = sorted({s for s, _ in by}, key=lambda s: (s != held_out, -mean(by[(s, "bc")], "J")))
for s in scenarios:
    name = f"**{s} (held out)**" if s == held_out else s
    print(f"| {name} | {mean(by[(s, 'bc')], 'J'):.3f} | {mean(by[(s, 'bc')], 'TA'):.1f} | {mean(by[(s, 'bc')], 'TR_D'):.1f} | "
          f"{mean(by[(s, 'sb3')], 'J'):.3f} | {mean(by[(s, 'policy-follower')], 'J'):.3f} | {mean(by[(s, 'oracle')], 'J'):.3f} |")
for agent in ("bc", "sb3", "policy-follower", "oracle"):
    seen = [r for (s, a), rs in by.items() if a == agent and s != held_out for r in rs]
    print(f"{agent}: mean J on the {len({s for s, _ in by}) - 1} training scenarios (test seeds) {mean(seen, 'J'):.3f}, "
          f"on {held_out} {mean(by[(held_out, agent)], 'J'):.3f}")
PY
