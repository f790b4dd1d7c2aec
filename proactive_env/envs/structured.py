"""The structured (Gymnasium) face of a Proactivity-Gym scenario."""

from __future__ import annotations

import functools
import itertools
import struct
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..scoring import RunScorer, Weights, make_trajectory
from ..sim import SharedPool, TaskState, Verb, World
from ..sim.world import clock_text
from ..spec import MAX_CATEGORIES, MAX_TASKS, PERSONAS, RULES, Scenario, load_scenario, variant
from .render import ansi_timeline, rgb_timeline

VERBS = ("start", "continue", "defer", "allocate", "present", "execute")
N_VERBS = len(VERBS)
N_ACTIONS = 1 + N_VERBS * MAX_TASKS
MAX_RESOURCES = 4
MAX_ACTIONS_PER_POINT = 24
URGENCY_HORIZON = 3 * 24 * 60  # deadlines further away than three days read as 0 urgency
WORK_SCALE = 12 * 60  # minutes of work that read as 1.0
FEEDBACK_KINDS = ("approve", "decline", "acknowledge", "nothing", "policy_change", "revoked", "complaint")

# The published action table: index 0 is NOOP, then verb-major blocks of MAX_TASKS task slots.
ACTION_TABLE: tuple[tuple[str, int | None], ...] = (("noop", None),) + tuple(
    (verb, slot) for verb in VERBS for slot in range(MAX_TASKS))

# Per-slot task features: static ones (set at reset), ones that change when the task does, and
# ones that change with the clock. Keeping the groups contiguous lets a row update be one write.
# No feature states the depth the user wants: the agent joins the task's category with the rule
# table (``rules``) and tracks the user's feedback.
STATIC_FEATURES = (
    "slot_used", "latent", "trigger_user", "trigger_event", "trigger_agent", "needs_resource", "has_action",
    "conditional", "work_size", *(f"category_{i}" for i in range(MAX_CATEGORIES)),
)
STATE_FEATURES = (
    "active", "closed", "evidence_read", "work_done", "work_running", "allocated", "followup_pending", "deferred",
    "presented", "approval_pending", "approved", "declined", "acknowledged", "executed", "execute_refused",
    "assessed", "actionable", "run_needs_ok",
)
CLOCK_DEPENDENT_FEATURES = ("urgency", "resource_busy_now")
TASK_FEATURES = STATIC_FEATURES + STATE_FEATURES + CLOCK_DEPENDENT_FEATURES
CLOCK_FEATURES = ("progress", "time_of_day", "day", "weekday", "user_available", "user_asleep", "user_busy",
                  "actions_at_point", "grace")
RESOURCE_FEATURES = ("present", "user_using_now", "user_using_within_2h", "agent_jobs", "capacity")
# Per category: present, the stated rule (one-hot), and the rule the user's feedback changed it to (one-hot).
RULE_FEATURES = ("present", *(f"stated_{r}" for r in RULES), *(f"now_{r}" for r in RULES))
_T = {name: i for i, name in enumerate(TASK_FEATURES)}
_STATE = slice(_T[STATE_FEATURES[0]], _T[STATE_FEATURES[-1]] + 1)
_URGENCY, _BUSY = _T["urgency"], _T["resource_busy_now"]
_VERBS = tuple(Verb)
# The observation's float parts lie in one buffer, in this order, so that a step copies it once:
# the arrays a step returns are views of that copy, never of the env's own state.
_PARTS = {"clock": len(CLOCK_FEATURES), "tasks": MAX_TASKS * len(TASK_FEATURES),
          "resources": MAX_RESOURCES * len(RESOURCE_FEATURES), "rules": MAX_CATEGORIES * len(RULE_FEATURES),
          "feedback": len(FEEDBACK_KINDS) + MAX_CATEGORIES + 1}
_ENDS = np.cumsum(list(_PARTS.values())).tolist()
_CLOCK, _TASKS, _RESOURCES, _RULES, _FEEDBACK = (slice(end - n, end) for end, n in zip(_ENDS, _PARTS.values()))
# A task's state columns are written in one call, straight into the buffer (float32, native order:
# the same rounding as a numpy assignment): the byte offset of each slot's first state column.
_STATE_ROW = struct.Struct(f"={len(STATE_FEATURES)}f")
_STATE_AT = [4 * (_TASKS.start + slot * len(TASK_FEATURES) + _STATE.start) for slot in range(MAX_TASKS)]
_STATIC_AT = [4 * (_TASKS.start + slot * len(TASK_FEATURES)) for slot in range(MAX_TASKS)]  # (static columns first)
# Single cells are written through a memoryview of the buffer (a float32 store, the same rounding
# as numpy's, at a fraction of the cost of indexing the array): each one's index in the buffer.
_URGENCY_AT = [_TASKS.start + slot * len(TASK_FEATURES) + _URGENCY for slot in range(MAX_TASKS)]
_BUSY_AT = [_TASKS.start + slot * len(TASK_FEATURES) + _BUSY for slot in range(MAX_TASKS)]
_RESOURCE_AT = [_RESOURCES.start + i * len(RESOURCE_FEATURES) for i in range(MAX_RESOURCES)]
_RULE_AT = [_RULES.start + c * len(RULE_FEATURES) for c in range(MAX_CATEGORIES)]
_GRACE_AT, _HERE_AT, _AGE_AT = _CLOCK.start + 8, _CLOCK.start + 7, _FEEDBACK.stop - 1
# The clock's first seven columns (progress to user busy), written in one call (float32, as above)
_CLOCK_HEAD = struct.Struct("=7f")
# A task's six mask entries as bytes, per tuple of valid verbs (``bytes()`` of the tuple, made once)
_MASK_BYTES = {verbs: bytes(verbs) for verbs in itertools.product((False, True), repeat=N_VERBS)}


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
    misaligned interventions, calibrated to the human study; an aligned one shown again with
    nothing new behind it (same task, depth and request, no work done or record read since) is
    not a new intervention and moves nothing.

    ## Action Space

    ``Discrete(1 + 6 × 19)``: index 0 is NOOP (wait for the next decision point); index
    ``1 + v·19 + s`` applies verb ``v`` of (start, continue, defer, allocate, present, execute) to
    task slot ``s`` — see ``ACTION_TABLE``. ``start`` reads the task's evidence and launches its
    first unit of work, which finishes later (a decision point); ``continue`` launches the next;
    ``allocate`` runs the rest in the next free window of its resource (the user's sleep first);
    ``defer`` reads the calendars and sets a follow-up at the next time the user is reachable
    and the resource free, ≥ 1 h ahead (a postponement counts only for a clash a record read
    shows: a calendar, or a record the agent's work on a task read); ``present`` shows the work (an approval request where the task has an action;
    where running its work is the user's call and not yet approved, a request for the run, which
    shows no results); ``execute`` applies the action. The valid
    actions are given by ``action_masks()`` and ``obs["action_mask"]``; a masked or out-of-range
    action is taken as NOOP and ``info["invalid_action"]`` is True. Execute is never masked for
    lack of permission: the world refuses an unauthorised EXECUTE (and the attempt counts); a
    run the user has not approved is refused the same way, then masked until they do.

    ## Observation Space

    A ``Dict`` of fixed-shape arrays in [0, 1]:

    * ``clock`` (9,): progress through the run, time of day, day, weekday, user available,
      asleep, busy, actions taken at this decision point, final grace point;
    * ``tasks`` (19 × 37,): slot-major, ``obs["tasks"].reshape(19, 37)`` gives per task slot
      what the agent can know of it (``TASK_FEATURES`` names the columns). 17 static columns:
      slot used, latent, trigger (user / event / agent, one-hot), needs a resource, has a
      consequential action, conditional, the size of its work, its action category (one-hot over
      8); 18 state columns: active, closed, evidence read (share), work done (share), work
      running, allocated, follow-up pending, deferred, presented, approval pending / approved /
      declined / acknowledged, executed, execute refused, assessed (started and all its evidence
      read), actionable (assessed, and the records call for something: the NOOP judgement a
      reader would make), and whether running its work is the user's call not yet given
      (``present`` then asks for it); 2 clock-dependent columns: urgency (how soon the user needs
      it: its needed-by time, else its deadline, over three days) and whether its resource is in
      the user's own use now. Slots are shuffled per seed. No column states the depth the user
      wants, which task a TA decision makes urgent, or which competes;
    * ``resources`` (4 × 5,): per resource: present, in the user's own use now, within two hours,
      the agent's running jobs (share of capacity), capacity;
    * ``rules`` (8 × 9,): the persona's policy as a table per action category: present, the
      stated rule (prepare / suggest / approve / execute, one-hot) and the rule the user's
      feedback has since changed it to (one-hot; zeros while unchanged). Which depth a task
      wants is never observed: the agent joins the task's category with this table, and the
      answers it received (per task: approved, declined, acknowledged);
    * ``feedback`` (16,): the user's latest feedback event: kind (one-hot), its category
      (one-hot), and how recent it is;
    * ``action_mask`` (115,) int8.

    Each step returns arrays of its own: the float parts are views of one copy of the env's
    observation buffer, which is updated in place for only what changed (rows of tasks that
    changed, the clock's columns when it moves); ``info["action_mask"]`` is the same array as
    ``obs["action_mask"]``.

    ## Rewards

    J = λ_TC·TC/100 + λ_TA·TA + λ_TR·(TR-D + (TR-J − 1)/4)/2 is a sum of shares over fixed
    denominators known at reset (``RunScorer.contributions()``): the run's counted tasks (every
    task but a conditional one whose branch the oracle would not open — a branch cut off counts
    0), their weights v_t, and the TA decisions between counted tasks. A task pays its share —
    λ_TC·v_t·TC_t/(100·Σv) + λ_TR·(aligned_t + (TR-J_t − 1)/4)/(2·n) over the n counted tasks (a
    task the user never saw rates TR-J 1 where they were meant to see it, else 5) — at the step it
    closes (its deadline passes or the run ends); a TA decision pays λ_TA/(number of decisions) at
    the step its window closes, if it was now ∧ later; the privacy cost of needless reads is paid
    at the end. No share depends on another task's outcome, and the rewards of an episode sum to
    its J (up to float error). ``info["scores"]`` holds the running TC, TA, TR_D, TR_J and J
    (sums over what has closed so far, so they grow from 0; recomputed only when something
    closes) and, at the episode's end, the full breakdown with each task's and
    decision's ``J_share``.

    With ``reward_shaping=True`` the reward adds Φ(s') − Φ(s) (potential-based shaping, Ng et
    al. 1999), where Φ is the credit in prospect (``RunScorer.potential()``): each open task's
    TR-D share while its interventions so far are aligned with the rule in force and it has
    reached the depth that rule wants, and each open TA window's share while what was done in it
    is now ∧ later. Φ is 0 at reset and at the end, so the return is still J and the optimal
    policies are unchanged; a wrong-depth action shows in the reward at the step it is taken.
    Off by default; evaluations never shape.

    ## Episode End

    Terminates when the scenario's last day ends (with one extra decision point if an approved
    action is still unexecuted). Registered ids truncate after 2,000 steps; at most 24 actions
    are taken at one decision point before the clock moves on.

    ## Arguments

    * ``scenario``: shipped scenario name or path to a scenario file (default ``"monitor"``).
    * ``persona``: ``"reviewer"``, ``"planner"``, ``"operator"``, or None to sample one per
      episode from the seed.
    * ``variants``: True (default) draws the seed's variant of the scenario (timing, rules within
      the persona, distractors, slot and record order; seeds ≥ 1000 are the test split); False
      plays the file as written.
    * ``weights``: λ as ``{"tc": .., "ta": .., "tr": ..}`` (normalised; default equal).
    * ``render_mode``: ``"ansi"`` (a readable timeline) or ``"rgb_array"`` (a timeline picture).
    * ``reward_shaping``: add the potential-based shaping term above (default False).

    ## Version History

    * v0: initial release (scenario suite 0.1); suite 0.2: observation states the policy (rule
      table and feedback) instead of per-task depths, work takes time, seeds draw variants, and
      the scorer judges from the event log; suite 0.4: a task feature says whether running its
      work is the user's call not yet given (37 features per slot); issue #21: each task and TA
      decision pays its fixed share of J when final (was: the change of a running mean), optional
      potential-based shaping.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, scenario: str = "monitor", persona: str | None = None,
                 weights: dict[str, float] | None = None, render_mode: str | None = None, variants: bool = True,
                 reward_shaping: bool = False):
        if persona is not None and persona not in PERSONAS:
            raise ValueError(f"persona: expected one of {PERSONAS} or None, got {persona!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: expected one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.base: Scenario = load_scenario(scenario)
        self.scenario = self.base
        self.fixed_persona = persona
        self.weights = Weights(**(weights or {}))
        self.render_mode = render_mode
        self.variants = variants
        if not isinstance(reward_shaping, bool):
            raise ValueError(f"reward_shaping: expected True or False, got {reward_shaping!r}")
        self.reward_shaping = reward_shaping
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = spaces.Dict({
            "clock": spaces.Box(0.0, 1.0, (len(CLOCK_FEATURES),), np.float32),
            "tasks": spaces.Box(0.0, 1.0, (MAX_TASKS * len(TASK_FEATURES),), np.float32),
            "resources": spaces.Box(0.0, 1.0, (MAX_RESOURCES * len(RESOURCE_FEATURES),), np.float32),
            "rules": spaces.Box(0.0, 1.0, (MAX_CATEGORIES * len(RULE_FEATURES),), np.float32),
            "feedback": spaces.Box(0.0, 1.0, (len(FEEDBACK_KINDS) + MAX_CATEGORIES + 1,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        })
        self._categories = list(self.base.categories)
        self._fresh_rows: dict[tuple, tuple] = {}  # (id(task), run needs an OK) -> (task, its untouched state row, mask)
        self._prepared: dict[int, tuple] = {}  # id(task) -> (task, (its static columns, its evidence)): the base's tasks
        self.world: World | None = None
        # Set by the multi-assistant env: worlds that share one clock and pools of compute.
        self.pools: dict[str, SharedPool] | None = None
        self.owner = "agent"
        self.shared_clock = False
        self.face = "structured"
        self.observation_extras: list[str] = []  # opt-in observation wrappers in use (their names), for the record

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        persona = self.fixed_persona or PERSONAS[int(self.np_random.integers(len(PERSONAS)))]
        self.persona = persona
        self._seed = seed
        base = self.base
        self._variant = (variant.draw(base, persona, self.np_random) if self.variants
                         else variant.identity(base, persona, self.np_random))
        self.scenario = s = variant.apply(base, self._variant)
        if self.pools is not None:
            for pool in self.pools.values():
                pool.reset()
        self.world = World(s, persona, self.np_random, rules=self._variant["rules"], coins=self._variant["coins"],
                           pools=self.pools,
                           owner=self.owner, face=self.face, inbox=None if self.face == "structured" else [])
        self.scorer = RunScorer(s, persona, self.weights)
        self._actions: list = []
        self._here = 0
        self._paid: dict[str, float] = {}
        self._carry = self._phi = self._phi0 = 0.0
        self._decisions_seen = 0
        self._feedback_seen = 0
        self._summary = self.scorer.summary()
        if self.__dict__.get("_buffer") is None:  # (made once: a step returns copies, never these)
            self._buffer = np.zeros(_ENDS[-1], np.float32)
            self._mask = np.zeros(N_ACTIONS, np.int8)
            self._bind_parts()
        else:
            self._buffer.fill(0.0)
            self._mask.fill(0)
        self._mask[0] = 1
        self._static_rows(s)
        self._first_weekday = s.start_date.weekday()
        self._resource_use = [self.world.schedule.resource_busy[r.id] for r in s.resources]
        # the clock's columns per minute (``_clock_at``) hold while what they are computed from does
        # (a seed's variant shares the file's schedule): kept with those, begun again when one differs
        basis = (self.world.schedule, tuple(self._resource_use), s.end_minute, s.days, s.start_date)
        memo = self.__dict__.get("_clock_basis")
        if memo is None or memo[0] is not basis[0] or memo[2:] != basis[2:] or \
                any(a is not b for a, b in zip(memo[1], basis[1])) or len(memo[1]) != len(basis[1]):
            self._clock_basis, self._clock_memo = basis, {}
        self._pools = [self.world.pools[r.id] for r in s.resources]
        self._jobs_seen = [0] * len(s.resources)
        self._open_up: list[int] = []  # of ``world.came_up``, the tasks not closed (their urgency moves)
        self._came_up_seen = 0
        cells = self._cells
        for i, r in enumerate(s.resources):
            cells[_RESOURCE_AT[i]] = 1.0
            cells[_RESOURCE_AT[i] + 4] = min(1.0, r.capacity / 8)
        self._stated = dict(self._variant["rules"])
        for c, category in enumerate(self._categories):
            cells[_RULE_AT[c]] = 1.0
            cells[_RULE_AT[c] + 1 + RULES.index(self._stated[category])] = 1.0
        self._feedback_at = 0
        if not self.shared_clock:  # a multi-assistant env moves the clock of every world itself
            self.world.advance()
        self._untouched_rows()
        obs, _, _, _, info = self._observe(moved=True, invalid=False, at_reset=True)
        return obs, info

    def _untouched_rows(self) -> None:
        """At reset, the rows of the tasks the world has not touched yet (``dirty``: nothing has
        happened to them since it was built): each is the row ``_task_row`` writes for the fresh
        task, kept per (task, whether its run needs the user's OK — the drawn rules decide it) the
        first time it is written. The others are written as every step writes them."""
        world, raw, fresh = self.world, self._raw, self._fresh_rows
        for t in world.tasks:
            if t.index in world.dirty:
                continue
            key = (id(t.spec), world.needs_run_ok(t))
            hit = fresh.get(key)
            state_at, mask_at = _STATE_AT[t.index], 1 + t.index
            if hit is None or hit[0] is not t.spec:
                self._task_row(t)
                hit = fresh[key] = (t.spec, bytes(raw[state_at:state_at + _STATE_ROW.size]),
                                    bytes(self._mask_cells[mask_at::MAX_TASKS]))  # (held: its id stays its own)
            raw[state_at:state_at + _STATE_ROW.size] = hit[1]
            self._mask_cells[mask_at::MAX_TASKS] = hit[2]

    def release(self) -> None:
        """Let go of the last episode (its world, scorer and what the steps kept of it), as if never
        reset: what a multi-scenario env does with the scenario it leaves, which nothing reads until
        its next ``reset``."""
        self.world = None
        for name in ("scorer", "_actions", "_summary"):
            self.__dict__.pop(name, None)

    def _bind_parts(self) -> None:
        """The observation's parts as views of the one buffer, and the memoryviews single cells
        are written through (again after unpickling or a deep copy, which would otherwise leave
        the views copies of their own; memoryviews are not pickled)."""
        buffer = self._buffer
        self._clock, self._feedback = buffer[_CLOCK], buffer[_FEEDBACK]
        self._tasks = buffer[_TASKS].reshape(MAX_TASKS, len(TASK_FEATURES))
        self._resources = buffer[_RESOURCES].reshape(MAX_RESOURCES, len(RESOURCE_FEATURES))
        self._rules = buffer[_RULES].reshape(MAX_CATEGORIES, len(RULE_FEATURES))
        self._cells = memoryview(buffer)
        self._raw = self._cells.cast("B")
        self._mask_cells = memoryview(self._mask).cast("B")

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_cells", "_raw", "_mask_cells")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "_buffer" in state:
            self._bind_parts()

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
        Returns (invalid, waits): NOOP, an invalid action or the per-point cap means waiting."""
        a = action if type(action) is int else _action_int(action)  # (the common case without a call)
        invalid = a is None or not (0 <= a < N_ACTIONS) or not self._mask_cells[a]
        # At the cap only waiting is left (a multi-assistant env asks again while the others act).
        invalid = invalid or (a != 0 and self._here >= MAX_ACTIONS_PER_POINT)
        self._actions.append(0 if invalid else a)
        if invalid or a == 0:
            return invalid, True
        verb, slot = divmod(a - 1, MAX_TASKS)
        self.world.act(_VERBS[verb], slot)
        self._here += 1
        return False, self._here >= MAX_ACTIONS_PER_POINT

    def _observe(self, moved: bool, invalid: bool, at_reset: bool = False):
        """Score what closed, bring the observation up to date, and build the step result. At
        reset (``at_reset``) what closed is carried into the first step's reward, and the shaping
        potential is measured from here (Φ = 0 at reset and at the end: the return stays J)."""
        reward = self._collect()
        if at_reset:
            self._carry, reward = self._carry + reward, 0.0
            self._phi0 = self.scorer.potential() if self.reward_shaping else 0.0
        else:
            reward, self._carry = reward + self._carry, 0.0
            if self.reward_shaping:
                phi = 0.0 if self.world.done else self.scorer.potential() - self._phi0
                reward, self._phi = reward + phi - self._phi, phi
        self._refresh(moved)
        terminated = self.world.done
        obs = self._obs()
        info = self._info(invalid, obs["action_mask"])
        if terminated:
            info["scores"] = self.scorer.breakdown()
        return obs, reward, terminated, False, info

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
        record = make_trajectory(scenario=self.base, persona=self.persona, seed=self._seed, agent=agent,
                                 weights=self.weights, variant=self._variant, actions=list(self._actions),
                                 log=list(self.world.log), scores=self.scorer.breakdown(), face=self.face)
        if self.observation_extras:  # what the agent saw beyond the shipped observation
            record["observation_extras"] = list(self.observation_extras)
        return record

    def _collect(self) -> float:
        """Feed the scorer the new log entries; the reward is each outcome's share of J as it
        becomes final (``RunScorer.contributions()``: fixed denominators, so a share depends on
        its own task or decision alone), paid once — or its change, should a final share move."""
        if not self.scorer.feed(self.world.log):
            return 0.0
        self._summary, shares = self.scorer.settled()
        reward, paid = 0.0, self._paid
        for unit, share in shares.items():
            before = paid.get(unit, 0.0)
            if share != before:
                reward += share - before
                paid[unit] = share
        return reward

    def _static_rows(self, s: Scenario) -> None:
        """Each slot's static columns, from rows prepared once per task (a seed's variant only
        reorders or drops the file's tasks)."""
        prepared = [self._static_row(t) for t in s.tasks]
        raw = self._raw
        for slot, (row, _) in enumerate(prepared):
            raw[_STATIC_AT[slot]:_STATIC_AT[slot] + len(row)] = row
        self._evidence = [evidence for _, evidence in prepared]
        resource_index = {r.id: i for i, r in enumerate(s.resources)}
        self._resource_tasks = [(i, resource_index[t.work.resource]) for i, t in enumerate(s.tasks)
                                if t.work.resource is not None]
        # when each task is needed (its needed-by time, else its deadline), for its urgency
        self._due = [t.needed_by or t.deadline for t in s.tasks]

    def _static_row(self, t) -> tuple[bytes, frozenset[str]]:
        """A task's static columns (as the buffer's bytes) and its evidence records, cached per task
        object: the variants of the file share it."""
        hit = self._prepared.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        row = np.zeros(len(STATIC_FEATURES), np.float32)
        row[_T["slot_used"]] = 1.0
        row[_T["latent"]] = t.latent
        row[_T["trigger_" + t.trigger.type]] = 1.0
        row[_T["needs_resource"]] = t.work.resource is not None
        row[_T["has_action"]] = t.action is not None
        row[_T["conditional"]] = bool(t.requires)
        row[_T["work_size"]] = min(1.0, t.work.units * t.work.minutes / WORK_SCALE)
        row[_T["category_0"] + self._categories.index(t.category)] = 1.0
        prepared = row.tobytes(), frozenset(t.evidence)
        self._prepared[id(t)] = (t, prepared)  # (held: its id stays its own)
        return prepared

    def _refresh(self, moved: bool) -> None:
        """Bring the observation up to date: rows of tasks that changed, time-dependent columns."""
        world = self.world
        if world.dirty:
            for index in world.dirty:
                self._task_row(world.tasks[index])
            world.dirty.clear()
        if moved:
            self._clock_update()
        self._jobs_update(moved)
        if moved or len(world.feedback) > self._feedback_seen:
            self._feedback_update(moved)
        self._cells[_HERE_AT] = self._here / MAX_ACTIONS_PER_POINT

    def _clock_update(self) -> None:
        world, now, cells = self.world, self.world.now, self._cells
        if world.schedule is not self._clock_basis[0]:  # a night cut where the user spoke (``World._up``):
            self._clock_basis = (world.schedule, *self._clock_basis[1:])  # the minutes are those of the new one
            self._clock_memo = {}
        memo = self._clock_memo
        hit = memo.get(now)
        if hit is None:
            if len(memo) >= 16384:  # (bounded: a scenario has fewer minutes than this)
                memo.clear()
            hit = memo[now] = self._clock_at(now)
        head, busy, soon, self._time = hit
        self._raw[:_CLOCK_HEAD.size] = head
        cells[_GRACE_AT] = world.grace
        for i, at in enumerate(_RESOURCE_AT[:len(busy)]):
            cells[at + 1], cells[at + 2] = busy[i], soon[i]
        due, tasks, came_up = self._due, world.tasks, world.came_up
        if len(came_up) > self._came_up_seen:  # (the tasks come up since, in order)
            self._open_up += came_up[self._came_up_seen:]
            self._came_up_seen = len(came_up)
        closed = False
        for index in self._open_up:  # the open tasks that came up: how soon the user needs each
            if tasks[index].closed:
                closed = True
                continue
            left = (due[index] - now) / URGENCY_HORIZON
            cells[_URGENCY_AT[index]] = 1.0 - (0.0 if left < 0 else 1.0 if left > 1 else left)
        if closed:  # (a closed task stays closed: it is asked no more)
            self._open_up = [index for index in self._open_up if not tasks[index].closed]
        for index, res in self._resource_tasks:
            cells[_BUSY_AT[index]] = busy[res]

    def _clock_at(self, now: int) -> tuple[bytes, tuple[bool, ...], tuple[bool, ...], str]:
        """The clock's first columns at minute ``now`` (as the buffer's bytes), per resource whether
        the user uses it now and within two hours, and ``info["time"]``: pure functions of the
        minute, the schedule and the scenario's dates (``_clock_memo`` keeps them per minute while
        those stay)."""
        schedule, s = self.world.schedule, self.scenario
        available, asleep, day = schedule.available(now), schedule.sleep.contains(now), now // 1440
        head = _CLOCK_HEAD.pack(min(1.0, now / s.end_minute), (now % 1440) / 1440.0, min(1.0, day / s.days),
                                ((self._first_weekday + day) % 7) / 6, available, asleep,
                                not available and not asleep)
        return (head, tuple(use.contains(now) for use in self._resource_use),
                tuple(use.overlaps(now, now + 120) for use in self._resource_use), _clock_text(s.start_date, now))

    def _jobs_update(self, moved: bool) -> None:
        """The agent's running jobs per resource: they change with the clock and with every job
        reserved (by this agent's work launched now, or another assistant's on a shared pool)."""
        world, seen = self.world, self._jobs_seen
        for i, pool in enumerate(self._pools):
            if moved or len(pool.reservations) != seen[i]:  # (a pool's jobs only add up)
                seen[i] = len(pool.reservations)
                running = pool.running(world.now, world.owner) if seen[i] else 0  # (none reserved: none running)
                self._cells[_RESOURCE_AT[i] + 3] = min(1.0, running / pool.capacity)

    def _feedback_update(self, moved: bool) -> None:
        world = self.world
        events = world.feedback
        new = len(events) > self._feedback_seen
        if new:
            self._feedback_seen = len(events)
            for c, category in enumerate(self._categories):
                current = world.policy.rules[category]
                self._rules[c, 5:] = 0.0
                if current != self._stated[category]:
                    self._rules[c, 5 + RULES.index(current)] = 1.0
            latest = events[-1]
            self._feedback[:] = 0.0
            self._feedback[FEEDBACK_KINDS.index(latest.kind)] = 1.0
            if latest.category in self._categories:
                self._feedback[len(FEEDBACK_KINDS) + self._categories.index(latest.category)] = 1.0
            self._feedback_at = latest.minute
        if self._feedback_seen and (new or moved):  # (its age changes only with the clock)
            age = (world.now - self._feedback_at) / URGENCY_HORIZON
            self._cells[_AGE_AT] = 1.0 - min(1.0, max(0.0, age))

    def _task_row(self, t: TaskState) -> None:
        """Write one task's state features and its six action-mask entries."""
        world = self.world
        evidence = self._evidence[t.index]
        read = len(evidence & t.read) / len(evidence) if evidence else 1.0
        assessed = t.started and read == 1.0
        approval = t.approval
        _STATE_ROW.pack_into(
            self._buffer, _STATE_AT[t.index],
            t.active, t.closed, read, t.units_done / t.spec.work.units, t.running, t.allocated,
            t.followup is not None, t.deferred, t.presented, approval == "pending", approval == "approve",
            approval == "decline", approval == "acknowledge", t.executed, t.exec_refused, assessed,
            assessed and not t.spec.noop, world.needs_run_ok(t))
        if t.closed:
            self._cells[_URGENCY_AT[t.index]] = 0.0
        self._mask_cells[1 + t.index::MAX_TASKS] = _MASK_BYTES[world.valid_verbs(t)]

    def _obs(self) -> dict[str, np.ndarray]:
        parts = self._buffer.copy()
        return {"clock": parts[_CLOCK], "tasks": parts[_TASKS], "resources": parts[_RESOURCES],
                "rules": parts[_RULES], "feedback": parts[_FEEDBACK], "action_mask": self._mask.copy()}

    def _info(self, invalid: bool, mask: np.ndarray) -> dict[str, Any]:
        """The step's info; its ``action_mask`` is the observation's (one copy a step, the step's own)."""
        info = {"action_mask": mask, "invalid_action": invalid, "persona": self.persona,
                "time": self._time, "scores": dict(self._summary)}
        decisions = self.world.decisions
        if len(decisions) > self._decisions_seen:  # the user's decisions since the last step
            info["decisions"] = [d.to_dict() for d in decisions[self._decisions_seen:]]
            self._decisions_seen = len(decisions)
        return info


# ``info["time"]`` at each minute the clock stops on (the same minutes recur from episode to episode)
_clock_text = functools.lru_cache(maxsize=8192)(clock_text)


def _action_int(action) -> int | None:
    """An action index from an int-like value (Python or numpy integer, or a 0-d integer array);
    None for anything else (a float, a string, a bool), which is taken as an invalid action."""
    if type(action) is int:  # (the common case first)
        return action
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    return None
