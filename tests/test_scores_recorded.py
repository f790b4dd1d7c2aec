"""Speed work changes no score (issue #21.4): every step's reward and ``info["scores"]``, and the
final J, on every scenario x persona pair and seeds 0 and 1000, for the oracle and a seeded random
player that picks among the masked-valid actions, are bit-identical to the recorded ones
(``tests/data/scores_recorded.json``, written by ``--record``). Speed work must leave it as it is;
a change meant to move scores re-records it in the same commit and says what moved in
docs/suite-changelog.md (last re-recorded on suite 0.10.0's scoring changes: the coins).

A digest per play holds each step's reward (``float.hex``), scores (JSON, sorted keys, floats
as ``float.hex``) and observation (its arrays' bytes), so a change in the last bit of any of them
fails; J is kept readable beside it. Each pair's plays share one env, reset from play to play (as a
trainer's env is), so what a reset reuses from the episode before must not show.

    .venv/bin/python tests/test_scores_recorded.py --record    # rewrite the fixture (only on purpose)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from proactive_env.baselines import make_agent
from proactive_env.envs.structured import ProactivityEnv
from proactive_env.spec import PERSONAS, shipped_names

FIXTURE = Path(__file__).parent / "data" / "scores_recorded.json"
SEEDS = (0, 1000)
PLAYERS = ("oracle", "random-masked")


def _exact(value):
    """``value`` with every float as its exact hex form (JSON would round-trip, this is plainer)."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_exact(v) for v in value]
    return value


def _play(env: ProactivityEnv, seed: int, player: str) -> dict:
    obs, info = env.reset(seed=seed)
    digest = hashlib.sha256(json.dumps(_exact(info["scores"]), sort_keys=True).encode())
    digest.update(_observed(obs))
    if player == "oracle":
        agent = make_agent("oracle")
        agent.reset(env, seed)
        choose = lambda: agent.act(obs, info)  # noqa: E731
    else:
        rng = np.random.default_rng(seed)

        def choose():
            valid = np.flatnonzero(info["action_mask"])
            return int(valid[int(rng.random() * len(valid))])
    steps, done = 0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(choose())
        digest.update(float(reward).hex().encode())
        digest.update(json.dumps(_exact(info["scores"]), sort_keys=True).encode())
        digest.update(_observed(obs))
        steps, done = steps + 1, terminated or truncated
    return {"steps": steps, "J": info["scores"]["J"], "digest": digest.hexdigest()}


def _observed(obs: dict) -> bytes:
    return b"".join(obs[k].tobytes() for k in sorted(obs))


def _plays() -> dict[str, dict]:
    plays = {}
    for s in shipped_names():
        for p in PERSONAS:
            env = ProactivityEnv(s, persona=p)
            plays.update({f"{s}/{p}/{seed}/{player}": _play(env, seed, player) for seed in SEEDS for player in PLAYERS})
    return plays


def test_rewards_scores_and_J_are_bit_identical_to_the_recorded_ones():
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    now = _plays()
    assert set(now) == set(recorded)
    changed = [key for key in recorded if now[key] != recorded[key]]
    assert not changed, [(key, recorded[key], now[key]) for key in changed[:5]]


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    FIXTURE.write_text(json.dumps(_plays(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
