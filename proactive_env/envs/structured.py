"""The structured (Gymnasium) face of a Proactivity-Gym scenario."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..scoring import RunScorer, Weights, make_trajectory
from ..sim import SharedPool, TAOutcome, TaskState, Verb, World
from ..spec import MAX_TASKS, PERSONAS, Depth, Scenario, format_at, load_scenario
from .render import ansi_timeline, rgb_timeline

VERBS = ("start", "continue", "defer", "allocate", "present", "execute")
N_VERBS = len(VERBS)
N_ACTIONS = 1 + N_VERBS * MAX_TASKS
MAX_RESOURCES = 4
MAX_ACTIONS_PER_POINT = 24
URGENCY_HORIZON = 3 * 24 * 60  # deadlines further away than three days read as 0 urgency
FEEDBACK_KINDS = ("none", "approve", "decline", "acknowledge", "policy_change", "revoked", "conflict")

# The published action table: index 0 is NOOP, then verb-major blocks of MAX_TASKS task slots.
ACTION_TABLE: tuple[tuple[str, int | None], ...] = (("noop", None),) + tuple(
    (verb, slot) for verb in VERBS for slot in range(MAX_TASKS))

# Per-slot task features: static ones (set at reset), ones that change when the task does, and
# ones that change with the clock. Keeping the groups contiguous lets a row update be one write.
STATIC_FEATURES = (
    "slot_used", "latent", "trigger_user", "trigger_event", "trigger_agent", "needs_resource", "has_action",
    "conditional", "stated_noop", "stated_prepare", "stated_suggest", "stated_execute", "stated_needs_approval",
)
STATE_FEATURES = (
    "active", "final", "evidence_read", "work_done", "allocated", "followup_pending", "presented",
    "approval_pending", "approved", "declined", "executed", "execute_refused", "needs_approval_now",
)
CLOCK_DEPENDENT_FEATURES = ("urgency", "resource_busy_now")
TASK_FEATURES = STATIC_FEATURES + STATE_FEATURES + CLOCK_DEPENDENT_FEATURES
CLOCK_FEATURES = ("progress", "time_of_day", "day", "user_available", "user_asleep", "actions_at_point",
                  "grace")
_T = {name: i for i, name in enumerate(TASK_FEATURES)}
_STATE = slice(_T[STATE_FEATURES[0]], _T[STATE_FEATURES[-1]] + 1)
_URGENCY, _BUSY = _T["urgency"], _T["resource_busy_now"]
_VERBS = tuple(Verb)


class ProactivityEnv(gym.Env):
    """
    ## Description

    A proactive assistant serves one user over a multi-day scenario (e.g. Monitor Purchase: ten
    days of shopping for a monitor, its delivery and the claims after it). At each *decision
    point* — a user message, a notification, a follow-up the agent scheduled, finished work, a
    reply, the daily review — the agent chooses what to work on, when (now, deferred, or
    allocated to the user's sleep time around shared compute) and how far to go (prepare,
    suggest for review, or execute). It is scored on the benchmark's 3T objectives: task
    capability (TC), temporal allocation (TA) and trust (TR-D, TR-J). The user simulator decides
    approvals by a deterministic state machine; trust moves asymmetrically with aligned and
    misaligned interventions, calibrated to the human study.

    ## Action Space

    ``Discrete(1 + 6 × 19)``: index 0 is NOOP (wait for the next decision point); index
    ``1 + v·19 + s`` applies verb ``v`` of (start, continue, defer, allocate, present, execute) to
    task slot ``s`` — see ``ACTION_TABLE``. Slots follow the scenario's task order. The valid
    actions are given by ``action_masks()`` and ``obs["action_mask"]``; a masked or out-of-range
    action is taken as NOOP and ``info["invalid_action"]`` is True. Execute is never masked for
    lack of permission: the world refuses an unauthorised EXECUTE (and the attempt counts).

    ## Observation Space

    A ``Dict`` of fixed-shape arrays in [0, 1]:

    * ``clock`` (7,): progress through the run, time of day, day, user available, user asleep,
      actions taken at this decision point, final grace point;
    * ``tasks`` (19 × 28,): slot-major, ``obs["tasks"].reshape(19, 28)`` gives per task slot its
      state (active, final, evidence read, work done,
      presented, approval pending/approved/declined, executed, refused, ...), urgency, whether its
      resource is held by the user now, and the persona's *stated* policy for it (stated depth,
      whether its action needs approval) beside the approval need *now* (after feedback);
    * ``resources`` (4 × 3,): per resource: present, held by the user now, held by the user within
      two hours;
    * ``context`` (10,): the persona (one-hot) and the kind of the user's latest feedback;
    * ``action_mask`` (115,) int8.

    ## Rewards

    When a task becomes final (its deadline passes or the run ends) and when the TA window
    closes, the reward is the change in the run's J = λ_TC·TC/100 + λ_TA·TA + λ_TR·S_TR over
    what is final so far; over an episode the rewards sum to the run's J.

    ## Episode End

    Terminates when the scenario's last day ends (with one extra decision point if an approved
    action is still unexecuted). Registered ids truncate after 2,000 steps; at most 24 actions
    are taken at one decision point before the clock moves on.

    ## Arguments

    * ``scenario``: shipped scenario name or path to a scenario file (default ``"monitor"``).
    * ``persona``: ``"reviewer"``, ``"planner"``, ``"operator"``, or None to sample one per
      episode from the seed.
    * ``weights``: λ as ``{"tc": .., "ta": .., "tr": ..}`` (normalised; default equal).
    * ``render_mode``: ``"ansi"`` (a readable timeline) or ``"rgb_array"`` (a timeline picture).

    ## Version History

    * v0: initial release (scenario suite 0.1).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, scenario: str = "monitor", persona: str | None = None,
                 weights: dict[str, float] | None = None, render_mode: str | None = None):
        if persona is not None and persona not in PERSONAS:
            raise ValueError(f"persona: expected one of {PERSONAS} or None, got {persona!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: expected one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.scenario: Scenario = load_scenario(scenario)
        self.fixed_persona = persona
        self.weights = Weights(**(weights or {}))
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = spaces.Dict({
            "clock": spaces.Box(0.0, 1.0, (len(CLOCK_FEATURES),), np.float32),
            "tasks": spaces.Box(0.0, 1.0, (MAX_TASKS * len(TASK_FEATURES),), np.float32),
            "resources": spaces.Box(0.0, 1.0, (MAX_RESOURCES * 3,), np.float32),
            "context": spaces.Box(0.0, 1.0, (len(PERSONAS) + len(FEEDBACK_KINDS),), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        })
        s = self.scenario
        self._resource_ids = [r.id for r in s.resources][:MAX_RESOURCES]
        res_index = {r: i for i, r in enumerate(self._resource_ids)}
        n = len(s.tasks)
        self._end, self._days = s.end_minute, s.days
        self._evidence = [frozenset(t.evidence) for t in s.tasks]
        self._resource_tasks = [(i, res_index[t.work.resource]) for i, t in enumerate(s.tasks)
                                if t.work.resource in res_index]
        self._static = np.zeros((MAX_TASKS, len(TASK_FEATURES)), np.float32)
        for i, t in enumerate(s.tasks):
            row = self._static[i]
            row[_T["slot_used"]] = 1.0
            row[_T["latent"]] = t.latent
            row[_T["trigger_" + t.trigger.type]] = 1.0
            row[_T["needs_resource"]] = t.work.resource is not None
            row[_T["has_action"]] = t.action is not None
            row[_T["conditional"]] = bool(t.requires)
        self._n_tasks = n
        self.world: World | None = None
        # Set by the multi-assistant env: worlds that share one clock and one pool of compute.
        self.pool: SharedPool | None = None
        self.owner = "agent"
        self.shared_clock = False

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        persona = self.fixed_persona or PERSONAS[int(self.np_random.integers(len(PERSONAS)))]
        self.persona = persona
        self._seed = seed
        self.world = World(self.scenario, persona, self.np_random, pool=self.pool, owner=self.owner)
        self.scorer = RunScorer(self.scenario, self.weights)
        self._actions: list[int] = []
        self._here = 0
        self._last_j = 0.0
        self._outcomes: list = []
        self._decisions_seen = 0
        self._summary = self.scorer.summary()
        self._tasks = self._static.copy()
        for t in self.world.tasks:
            d = Depth.parse(t.spec.expect[persona].depth)
            self._tasks[t.index, _T["stated_noop"] + int(d)] = 1.0
            self._tasks[t.index, _T["stated_needs_approval"]] = self.world.stated_needs_approval(t)
        self._clock = np.zeros(len(CLOCK_FEATURES), np.float32)
        self._resources = np.zeros((MAX_RESOURCES, 3), np.float32)
        self._resources[: len(self._resource_ids), 0] = 1.0
        self._context = np.zeros(len(PERSONAS) + len(FEEDBACK_KINDS), np.float32)
        self._context[PERSONAS.index(persona)] = 1.0
        self._mask = np.zeros(N_ACTIONS, np.int8)
        self._mask[0] = 1
        if not self.shared_clock:  # a multi-assistant env moves the clock of every world itself
            self.world.advance()
        self._collect()
        self.world.dirty.update(range(self._n_tasks))
        self._refresh(moved=True)
        return self._obs(), self._info(False)

    def step(self, action):
        if self.world is None:
            raise RuntimeError("call reset() before step()")
        invalid, wait = self._act(action)
        if wait:
            self.world.advance()
            self._here = 0
        return self._observe(moved=wait, invalid=invalid)

    def _act(self, action) -> tuple[bool, bool]:
        """Apply the agent's action at the current decision point, without moving the clock.
        Returns (invalid, waits): NOOP, an invalid action or the per-point cap means waiting.
        Only integers are actions: 1.9, "1" or True are invalid, not rounded or parsed."""
        a = _action_index(action)
        invalid = a is None or not (0 <= a < N_ACTIONS) or not self._mask[a]
        self._actions.append(0 if invalid else a)
        if invalid or a == 0:
            return invalid, True
        verb, slot = divmod(a - 1, MAX_TASKS)
        self.world.act(_VERBS[verb], slot)
        self._here += 1
        return False, self._here >= MAX_ACTIONS_PER_POINT

    def _observe(self, moved: bool, invalid: bool):
        """Score what became final, bring the observation up to date, and build the step result."""
        reward = self._collect()
        self._refresh(moved)
        terminated = self.world.done
        info = self._info(invalid)
        if terminated:
            info["scores"] = self.scorer.breakdown()
        return self._obs(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Valid actions as booleans (sb3-contrib's MaskablePPO reads this)."""
        return self._mask.astype(bool)

    def render(self):
        if self.render_mode == "ansi":
            return ansi_timeline(self.world)
        if self.render_mode == "rgb_array":
            return rgb_timeline(self.world)
        return None

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def action_meaning(action: int) -> tuple[str, int | None]:
        return ACTION_TABLE[int(action)]

    def trajectory(self, agent: str) -> dict:
        """The run so far as a trajectory record (complete once the episode has ended)."""
        w = self.world
        return make_trajectory(
            scenario=self.scenario, persona=self.persona, seed=self._seed, agent=agent, weights=self.weights,
            actions=list(self._actions), log=list(w.log), outcomes=self._outcomes, ta=w.ta or TAOutcome(False, False, 0.0),
            scores=self.scorer.breakdown())

    def _collect(self) -> float:
        """Score tasks that became final; the reward is the change in running J."""
        world = self.world
        finalized = world.take_finalized()
        if not finalized and (world.ta is None or self.scorer.ta is not None):
            return 0.0
        for task in finalized:
            self._outcomes.append(task.outcome)
            self.scorer.add(task.outcome)
        if world.ta is not None:
            self.scorer.ta = world.ta
        self._summary = self.scorer.summary()
        j = self._summary["J"]
        reward, self._last_j = j - self._last_j, j
        return reward

    def _refresh(self, moved: bool) -> None:
        """Bring the observation up to date: rows of tasks that changed, time-dependent columns."""
        world = self.world
        for index in world.dirty:
            self._task_row(world.tasks[index])
        world.dirty.clear()
        if moved:
            self._clock_update()
        self._clock[5] = self._here / MAX_ACTIONS_PER_POINT

    def _clock_update(self) -> None:
        world, now = self.world, self.world.now
        schedule = world.schedule
        clock = self._clock
        clock[0] = min(1.0, now / self._end)
        clock[1] = (now % 1440) / 1440.0
        clock[2] = min(1.0, (now // 1440) / self._days)
        clock[3] = schedule.available(now)
        clock[4] = schedule.sleep.contains(now)
        clock[6] = world.grace
        busy = [schedule.resource_busy[rid].contains(now) for rid in self._resource_ids]
        for i, rid in enumerate(self._resource_ids):
            self._resources[i, 1] = busy[i]
            self._resources[i, 2] = schedule.resource_busy[rid].overlaps(now, now + 120)
        tasks = self._tasks
        for t in world.tasks:
            if t.active and not t.final:
                left = (t.spec.deadline - now) / URGENCY_HORIZON
                tasks[t.index, _URGENCY] = 1.0 - (0.0 if left < 0 else 1.0 if left > 1 else left)
        for index, res in self._resource_tasks:
            tasks[index, _BUSY] = busy[res]
        feedback = self._context[len(PERSONAS):]
        feedback[:] = 0.0
        feedback[FEEDBACK_KINDS.index(world.feedback.kind)] = 1.0
        self._time = format_at(now)

    def _task_row(self, t: TaskState) -> None:
        """Write one task's state features and its six action-mask entries."""
        world = self.world
        units = t.spec.work.units
        evidence = self._evidence[t.index]
        approval = t.approval
        self._tasks[t.index, _STATE] = (
            t.active, t.final, len(evidence & world.observed) / len(evidence) if evidence else 1.0,
            t.units_done / units if units else 1.0, t.allocated, t.followup is not None, t.presented,
            approval == "pending", approval == "approve", approval == "decline", t.executed, t.exec_blocked,
            world.needs_approval(t))
        if t.final:
            self._tasks[t.index, _URGENCY] = 0.0
        self._mask[1 + t.index::MAX_TASKS] = world.valid_verbs(t)

    def _obs(self) -> dict[str, np.ndarray]:
        return {"clock": self._clock.copy(), "tasks": self._tasks.ravel().copy(),
                "resources": self._resources.ravel().copy(),
                "context": self._context.copy(), "action_mask": self._mask.copy()}

    def _info(self, invalid: bool) -> dict[str, Any]:
        info = {"action_mask": self._mask.copy(), "invalid_action": invalid, "persona": self.persona,
                "time": self._time, "scores": dict(self._summary)}
        decisions = self.world.decisions
        if len(decisions) > self._decisions_seen:  # the user's decisions since the last step
            info["decisions"] = [d.to_dict() for d in decisions[self._decisions_seen:]]
            self._decisions_seen = len(decisions)
        return info


def _action_index(action) -> int | None:
    """An action's integer index (a Python or numpy integer, or a one-element integer array), or None."""
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, np.ndarray) and action.size == 1 and action.ndim <= 1 and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    return None
