"""Repetition adversaries: a good agent that says everything the user liked once more, ``k`` times.

Each is the policy-follower or the oracle (structured or text face) playing as it does, plus one
cheap rule: right after an intervention the user took as aligned (a trust reaction marked
aligned), it makes the very same call ``k`` more times — the same structured action where the
mask allows it, the same tool call with the same arguments on the text face (a message sent
again, a request asked again, an action tried again). Nothing new reaches the user, so nothing
may be earned: CI holds J and TR-J non-increasing in ``k`` on every pair and seed
(tests/test_adversaries.py). A benchmark where repeating a welcome message pumps trust rewards
nagging, not service (DESIGN.md §5).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from .oracle import OracleAgent, TextOracleAgent
from .scripted import PolicyFollowerAgent
from .text_scripted import TextScriptedAgent

REPEATS = (1, 2, 4, 8)


def _aligned_since(log: list[dict], start: int) -> bool:
    """Did an entry of the log from ``start`` on record the user taking an intervention as aligned?"""
    return any(e["type"] == "trust" and e["aligned"] for e in log[start:])


class Repeating:
    """``inner`` plus ``k`` repeats of each call after which the user's trust reacted as aligned.
    The repeats owed at a decision point are made when ``inner`` would wait there, so they never
    displace its own work (a point's calls are capped: repeats made first would delay it, and a
    delay is a timing change, not repetition); those the cap leaves unmade lapse with the point."""

    def __init__(self, inner: Any, k: int):
        self.inner, self.k = inner, k
        self.name = f"repeat{k}-{inner.name}"
        self.face = getattr(inner, "face", "structured")

    def reset(self, env: Any, seed: int) -> None:
        self.env = env
        self.inner.reset(env, seed)
        self.owed: deque = deque()  # repeats owed at this decision point
        self.held_wait: Any = None  # the inner agent's wait, made once the repeats are
        self.last: Any = None  # the last call made
        self.chosen = False  # did the inner agent choose it (not a repeat)?
        self.log_at = self.here_at = 0  # the log's length and the point's call count before it

    @property
    def world(self):
        return self.env.world

    def act(self, obs: Any, info: dict[str, Any]) -> Any:
        log, here = self.world.log, self._here()
        if self.last is not None and here != self.here_at + 1:  # the clock moved on: a new decision point
            self.owed.clear()
            self.held_wait = None
        if self.chosen and not self._is_wait(self.last) and _aligned_since(log, self.log_at):
            self.owed.extend([self.last] * self.k)
        call, self.chosen = None, False
        if self.held_wait is None:
            call, self.chosen = self.inner.act(obs, info), True
            if self._is_wait(call) and self.owed:
                self.held_wait, call, self.chosen = call, None, False
        while call is None and self.owed:
            call = self._allowed(self.owed.popleft(), obs)
        if call is None:
            call, self.held_wait = self.held_wait, None
        self.last, self.log_at, self.here_at = call, len(log), here
        return call

    def _here(self) -> int:
        """Calls made so far at this decision point."""
        return self.env.core._here

    def _is_wait(self, call: Any) -> bool:
        return json.loads(call)["tool"] == "wait"

    def _allowed(self, call: Any, obs: Any) -> Any:
        return call


class StructuredRepeating(Repeating):
    """On the structured face a repeat is taken only where the mask allows it (an invalid action
    is a wait)."""

    def _here(self) -> int:
        return self.env._here

    def _is_wait(self, call: Any) -> bool:
        return int(call) == 0

    def _allowed(self, call: int, obs: dict[str, np.ndarray]) -> int | None:
        return call if obs["action_mask"][call] else None


def _factory(face: str, inner: Callable[[], Any], k: int) -> Callable[[], Repeating]:
    wrapper = StructuredRepeating if face == "structured" else Repeating
    return lambda: wrapper(inner(), k)


BASES: dict[str, tuple[str, Callable[[], Any]]] = {
    "policy-follower": ("structured", PolicyFollowerAgent),
    "oracle": ("structured", OracleAgent),
    "text-policy-follower": ("text", lambda: TextScriptedAgent(PolicyFollowerAgent())),
    "text-oracle": ("text", TextOracleAgent),
}
REPETITION_ADVERSARIES: dict[str, Callable[[], Repeating]] = {
    f"repeat{k}-{base}": _factory(face, inner, k) for base, (face, inner) in BASES.items() for k in REPEATS}
