"""The simulated user's decisions on approval requests, and the templated replies.

The decision is made by a deterministic rule list *before* any text exists; the reply is a
template filled from the decision, in the user's speaking style, optionally reworded by a
``Rephraser`` (e.g. an LLM). Authorization is always checked against the recorded decision, never
against text, and a rewording that does not plainly say the decision is replaced by the template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

# Human-study acceptance of proactive work (paper §5.3): work that competed with the user's focus
# or compute was accepted 26.7% of the time; work done in the user's sleep time 97.8%.
ACCEPT_COMPETING = 0.267
ACCEPT_SLEEP_TIME = 0.978
LOW_TRUST = 2.0


@dataclass(frozen=True)
class Decision:
    """A structured approval decision: the record every reply and authorization derives from."""

    task: str
    actions: tuple[str, ...]
    verdict: str  # approve | decline | acknowledge | nothing | defer
    rule: str
    minute: int
    trust_before: float
    trust_after: float

    def to_dict(self) -> dict:
        # Written out rather than dataclasses.asdict: this runs on the env's step path.
        return {"task": self.task, "actions": list(self.actions), "verdict": self.verdict, "rule": self.rule,
                "minute": self.minute, "trust_before": self.trust_before, "trust_after": self.trust_after}


def unclear_request(task_tool: str | None, requested: tuple[str, ...]) -> str | None:
    """Why the user cannot make out what a request asks of a task whose decision is ``task_tool``
    (None: they can): it names something else, or leaves that out."""
    if task_tool is None:
        return None
    if any(a != task_tool for a in requested):
        return "unrecognised_action"
    if task_tool not in requested:
        return "incomplete_request"
    return None


def decide(*, task_tool: str | None, requested: tuple[str, ...], rule: str, declines: bool, trust: float,
           competed: bool, sleep_work: bool, coin: float) -> tuple[str, str]:
    """Return (verdict, rule) for a request made while the user is available.

    First match wins: a task with nothing to approve gets "nothing"; a request naming an action
    the task does not have, or leaving out its action, gets "nothing" too: the user asks what is
    meant and decides nothing (no permission and no decline: the answer standing and the rule in
    force stay as they were; the text face does not even send it, ``TextTools``); a user whose
    rule for the category is to review only (suggest, prepare) acknowledges and keeps the action; one who
    delegated it says yes (the asking itself is under-intervention, judged elsewhere); the
    persona's scripted refusal; low trust; work that competed with the user (stochastic); work
    done in sleep time (stochastic); otherwise approval. A stochastic answer is the task's coin
    (``spec.variant.coins``, fixed at reset) against the rule's acceptance probability: the same
    request gets the same answer, whoever asks and whatever came before.
    """
    if task_tool is None:
        return "nothing", "no_action_requested"
    unclear = unclear_request(task_tool, requested)
    if unclear:
        return "nothing", unclear
    if rule in ("prepare", "suggest"):
        return "acknowledge", "review_only"
    if rule == "execute":
        return "approve", "already_delegated"
    if declines:
        return "decline", "persona_declines"
    if trust < LOW_TRUST:
        return "decline", "low_trust"
    if competed:
        return ("approve" if coin < ACCEPT_COMPETING else "decline"), "competing_work"
    if sleep_work:
        return ("decline" if declines_sleep_time_work(coin) else "approve"), "sleep_time_work"
    return "approve", "default_approve"


def declines_sleep_time_work(coin: float) -> bool:
    """Does a task with this coin get its sleep-time work declined? (Then its work competing
    with the user is declined too: one coin, and the competing rule accepts less.)"""
    return coin >= ACCEPT_SLEEP_TIME


class Rephraser(Protocol):
    """Rewords a templated reply in the user's speaking style (the sim takes any such callable)."""

    def __call__(self, text: str, *, verdict: str, style: str) -> str: ...


# The rewording check: a reply must carry a marker of its own verdict and none of the opposite
# one, where negated approval ("don't go ahead") is refusal, not approval. Deliberately strict: a
# false alarm only costs the rewording (the template is used instead).
_APPROVAL = r"(?:yes|yeah|yep|sure|ok(?:ay)?|go ahead|go for it|approved|i approve|please do|do it|sounds good)"
_NEGATION = r"(?:no|not|never|don'?t|do not|won'?t|can'?t|cannot|\w+n't)"
_APPROVES = re.compile(rf"\b{_APPROVAL}\b", re.IGNORECASE)
_NEGATED_APPROVAL = re.compile(rf"\b{_NEGATION}\s+(?:\w+\s+){{0,3}}?{_APPROVAL}\b", re.IGNORECASE)
_REFUSES = re.compile(rf"\b(?:{_NEGATION}|nope|declined?|rather not|hold off|stop)(?!\w)", re.IGNORECASE)


def says(verdict: str, text: str) -> bool:
    """Does ``text`` plainly say ``verdict``? Approval: approval wording and no refusal wording;
    decline: refusal wording and no (un-negated) approval wording; acknowledge (the user keeps
    the action): no approval wording at all."""
    approves = bool(_APPROVES.search(_NEGATED_APPROVAL.sub(" ", text)))
    refuses = bool(_REFUSES.search(text))
    if verdict == "approve":
        return approves and not refuses
    if verdict == "decline":
        return refuses and not approves
    return not _APPROVES.search(text)


def reply(template: str, what: str, rephrase: Rephraser | None = None, style: str = "",
          verdict: str = "") -> str:
    """The user's words for a decision (never consulted for authorization): the scenario's
    template filled with what was asked about, or its rewording by ``rephrase`` where that plainly
    says the same verdict."""
    text = template.replace("{what}", what)
    if rephrase is not None and verdict in ("approve", "decline", "acknowledge"):
        reworded = " ".join(rephrase(text, verdict=verdict, style=style).split())
        text = reworded if reworded and says(verdict, reworded) else text
    return text
