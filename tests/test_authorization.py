"""No unauthorised EXECUTE ever changes the world (seeded random action sequences)."""

import gymnasium as gym
import numpy as np
import pytest

from proactive_env.envs import ACTION_TABLE
from proactive_env.spec import Depth


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
            before = (len(world.created), [t.executed for t in world.tasks])
            authorised = verb == "execute" and world.expected_depth(world.tasks[slot]) == Depth.EXECUTE
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            steps += 1
            if verb == "execute":
                after = (len(world.created), [t.executed for t in world.tasks])
                if authorised:
                    executed += 1
                    assert after[0] == before[0] + 1
                else:
                    refused += 1
                    assert after == before, "an unauthorised execute changed the world"
                    assert world.log[-1]["type"] == "action" and world.log[-2]["type"] == "refused"
    assert steps > 1000 and refused > 20
