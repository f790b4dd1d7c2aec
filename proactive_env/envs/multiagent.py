"""The PettingZoo face: several assistants, one shared clock and one shared pool of compute."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from ..sim import SharedPool
from ..spec import PERSONAS
from .render import ansi_timeline
from .structured import ProactivityEnv

DEFAULT_SCENARIOS = "experiments,job_applications"


class ProactivityParallelEnv(ParallelEnv):
    """Several assistants, each serving its own user in its own scenario, on one simulated clock
    and one pool of compute (``pool_capacity`` concurrent jobs — a lab's GPU server, a team's AI
    quota). An assistant's work that needs compute also needs a free slot in the pool, so the
    assistants compete for it with each other as well as with their users; temporal allocation
    happens between agents too.

    Each step every live agent takes one action of the structured face (same spaces for all).
    The shared clock moves to the next decision point of any world only when every live agent
    waits (NOOP, an invalid action, or its per-point cap). Each agent is rewarded by the
    structured face's rule on its own run: each of its tasks and TA decisions pays its fixed share
    of that run's J when it is final (optionally shaped, ``reward_shaping``), so its rewards sum
    to its own J; an agent terminates when its scenario ends.

    Arguments: ``scenarios`` (comma-separated shipped names, one agent each), ``personas``
    (comma-separated, one per agent; default: drawn per episode from the seed), ``pool_capacity``,
    ``render_mode`` (``"ansi"``), ``reward_shaping`` (default False; see ``ProactivityEnv``).
    """

    metadata = {"name": "proactivity_multi_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(self, scenarios: str = DEFAULT_SCENARIOS, personas: str | None = None, pool_capacity: int = 1,
                 render_mode: str | None = None, reward_shaping: bool = False):
        names = [s.strip() for s in scenarios.split(",") if s.strip()]
        chosen = [p.strip() for p in personas.split(",")] if personas else [None] * len(names)
        if len(chosen) != len(names):
            raise ValueError(f"personas: expected one per scenario ({len(names)}), got {len(chosen)}")
        if any(p is not None and p not in PERSONAS for p in chosen):
            raise ValueError(f"personas: expected names from {PERSONAS}, got {personas!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: expected one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.possible_agents = [f"assistant_{i}" for i in range(len(names))]
        self.pool = SharedPool(pool_capacity)
        self._envs = {}
        for agent, name, persona in zip(self.possible_agents, names, chosen, strict=True):
            env = ProactivityEnv(name, persona=persona, reward_shaping=reward_shaping)
            env.pools = {r.id: self.pool for r in env.base.resources}
            env.owner, env.shared_clock = agent, True
            self._envs[agent] = env
        self.agents: list[str] = []
        first = self._envs[self.possible_agents[0]]
        self._observation_space, self._action_space = first.observation_space, first.action_space

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_space  # one cached space object, the same for every agent

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    def reset(self, seed: int | None = None, options: dict | None = None):
        rng = np.random.default_rng(seed)
        self.pool.reset()
        self.agents = list(self.possible_agents)
        for agent in self.agents:
            self._envs[agent].reset(seed=int(rng.integers(2**31)), options=options)
        self._advance_shared_clock(self.agents)
        observations, infos = {}, {}
        for agent in self.agents:
            obs, _, _, _, info = self._envs[agent]._observe(moved=True, invalid=False, at_reset=True)
            observations[agent], infos[agent] = obs, info
        return observations, infos

    def step(self, actions: dict[str, Any]):
        live = list(self.agents)
        outcomes = {agent: self._envs[agent]._act(actions.get(agent, 0)) for agent in live}
        moved = all(waits for _, waits in outcomes.values())
        if moved:
            self._advance_shared_clock(live)
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for agent in live:
            env = self._envs[agent]
            obs, reward, terminated, truncated, info = env._observe(moved=moved, invalid=outcomes[agent][0])
            observations[agent], rewards[agent] = obs, float(reward)
            terminations[agent], truncations[agent], infos[agent] = terminated, truncated, info
        self.agents = [a for a in live if not terminations[a]]
        return observations, rewards, terminations, truncations, infos

    def _advance_shared_clock(self, live: list[str]) -> None:
        """Move every world to the next minute at which any of them has a decision point."""
        worlds = [self._envs[a].world for a in live]
        for env in (self._envs[a] for a in live):
            env._here = 0
        while True:
            pending = [m for m in (w.next_minute() for w in worlds) if m is not None]
            if not pending:
                return
            minute = min(pending)
            woke = False
            for world in worlds:
                woke |= world.advance_to(minute)
            if woke or all(w.done for w in worlds):
                return

    def action_mask(self, agent: str) -> np.ndarray:
        return self._envs[agent].action_masks()

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return "\n".join(f"== {agent} ==\n{ansi_timeline(self._envs[agent].world, last=15)}"
                         for agent in self.possible_agents if self._envs[agent].world is not None)

    def close(self) -> None:
        pass

    def trajectory(self, agent: str, name: str = "agent") -> dict:
        return self._envs[agent].trajectory(name)
