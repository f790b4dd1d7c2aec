"""No unauthorised EXECUTE ever changes the world (seeded random action sequences)."""

import gymnasium as gym
import numpy as np
import pytest

from proactive_env.envs import ACTION_TABLE


@pytest.mark.parametrize("persona", ["Reviewer", "Planner", "Operator"])
def test_unauthorised_execute_never_changes_the_world(persona):
    env = gym.make(f"Proactivity-Monitor-{persona}-v0").unwrapped
    rng = np.random.default_rng(2024)
    steps = refused = executed = 0
    for episode in range(12):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            valid = np.flatnonzero(info["action_mask"])
            # Lean towards execute so that refusals are exercised often.
            executes = [a for a in valid if ACTION_TABLE[a][0] == "execute"]
            action = int(rng.choice(executes) if executes and rng.random() < 0.5 else rng.choice(valid))
            world = env.world
            verb, slot = ACTION_TABLE[action]
            before = [t.executed for t in world.tasks]
            authorised = verb == "execute" and world.policy.authorised(world.tasks[slot].spec)
            log_len = len(world.log)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            steps += 1
            if verb == "execute":
                after = [t.executed for t in world.tasks]
                attempt = next(e for e in world.log[log_len:] if e["type"] == "execute")
                if authorised:
                    executed += 1
                    assert attempt["ok"] and after[slot] and not before[slot]
                else:
                    refused += 1
                    assert after == before, "an unauthorised execute changed the world"
                    assert not attempt["ok"] and attempt["reason"] == "unauthorised"
    assert steps > 1000 and refused > 20
