"""Adversaries: cheap rules that would score well on a benchmark that measures artefacts.

Each is built from one failure class of a scorer that ignores timing, depth or content
(DESIGN.md §5); CI holds each far below the oracle on the full suite (tests/test_adversaries.py).
The structured ones read only the observation; the text ones know the open tasks (as the text
oracle does) so that they are as strong as their rule allows.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

import numpy as np

from proactive_env.sim import TaskState
from proactive_env.spec import format_at

from .oracle import TextOracleAgent
from .scripted import F, PolicyFollowerAgent, _Greedy, first_valid, open_slots, task_rows
from .text_scripted import TextScriptedAgent


class DeferEverythingAgent(PolicyFollowerAgent):
    """Defers every task the moment it appears, then, once the follow-up comes, acts at the depth
    the persona's stated rule asks for (as the policy-follower does)."""

    name = "defer-everything"

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        tasks, mask = task_rows(obs), obs["action_mask"]
        for slot in open_slots(obs):
            if not tasks[slot, F["deferred"]]:
                a = first_valid(mask, slot, ("defer",))
                if a:
                    return a
        for slot in open_slots(obs):
            if tasks[slot, F["followup_pending"]]:
                continue
            a = first_valid(mask, slot, ("start", "continue"))
            if a:
                return a
            if tasks[slot, F["work_done"]] >= 1.0:
                a = first_valid(mask, slot, self.finishing(obs, slot))
                if a:
                    return a
        return 0


class AllocateEverythingAgent:
    """Only ever allocates work to the next free window; never reads, presents or executes."""

    name = "allocate-everything"

    def reset(self, env: Any, seed: int) -> None:
        pass

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        for slot in open_slots(obs):
            a = first_valid(obs["action_mask"], slot, ("allocate",))
            if a:
                return a
        return 0


class PersonaBlindAgent(_Greedy):
    """Ignores the persona (the rule table and the feedback): asks before every action and
    carries it out when approved, presents everything else, and leaves alone what its records
    show needs nothing — a careful assistant that never learns who it serves."""

    name = "persona-blind"

    def finishing(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...]:
        row = task_rows(obs)[slot]
        if row[F["assessed"]] and not row[F["actionable"]]:
            return ()
        if row[F["has_action"]] and row[F["approved"]]:
            return ("execute",)
        return ("present",)


class AskOnEverythingAgent(_Greedy):
    """Asks the user about every task (an approval request where it has an action) and executes
    only what the user approves."""

    name = "ask-on-everything"

    def finishing(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...]:
        return ("execute",) if task_rows(obs)[slot, F["approved"]] else ("present",)


class PrepareOnlyAgent(_Greedy):
    """Does all the work, privately, and never delivers any of it."""

    name = "prepare-only"
    finish = ()


class _TextScript(TextOracleAgent):
    """A text-face agent that plays a fixed script per open task, once each."""

    face = "text"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.done: set[str] = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if not self.pending:
            for task in self.world.tasks:
                if task.active and not task.closed and task.spec.id not in self.done:
                    self.done.add(task.spec.id)
                    self.pending.extend(self.script(task))
                    break
            if not self.pending:
                self.pending.append({"tool": "wait", "arguments": {}})
        return json.dumps(self.pending.popleft())

    def script(self, task: TaskState) -> list[dict]:
        raise NotImplementedError


class ReadEverythingAgent(TextOracleAgent):
    """The text oracle, plus a read of every visible record at every decision point."""

    name = "read-everything"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.read_at: int | None = None

    def act(self, obs: str, info: dict[str, Any]) -> str:
        w = self.world
        if self.read_at != w.now and not self.pending:
            self.read_at = w.now
            self.pending.extend({"tool": "read_record", "arguments": {"record_id": r}} for r in sorted(w.store.visible))
        return super().act(obs, info)


class ClaimSpamAgent(_TextScript):
    """Tells the user every matter is handled, and says everything a careless assistant would
    (the forbidden claims), without reading anything."""

    name = "claim-spam"

    def script(self, task: TaskState) -> list[dict]:
        claims = " ".join(c.text for c in task.spec.constraints.must_not_include)
        text = f"All done: {task.spec.title} is handled, I've taken care of everything. {claims}"
        return [{"tool": "message_user", "arguments": {"text": text, "about": task.spec.id}}]


class PasteRecordsAgent(_TextScript):
    """Reads each task's records and pastes them to the user as its work."""

    name = "paste-the-records"

    def script(self, task: TaskState) -> list[dict]:
        w = self.world
        evidence = [r for r in task.spec.evidence if r in w.store.visible]
        pasted = "\n\n".join(w.store.view(r).render() for r in evidence) or task.spec.title
        reads = [{"tool": "read_record", "arguments": {"record_id": r, "about": task.spec.id}} for r in evidence]
        return [*reads, {"tool": "message_user", "arguments": {"text": pasted, "about": task.spec.id}}]


class EmptyArgumentsAgent(_TextScript):
    """Calls each open task's action with no arguments at all."""

    name = "empty-arguments"

    def script(self, task: TaskState) -> list[dict]:
        if task.spec.action is None:
            return []
        return [{"tool": task.spec.action.tool, "arguments": {"about": task.spec.id}}]


class BroadcastEarlyAgent(TextOracleAgent):
    """Sends the user every record as it appears, linked to no matter, and notes it too: a bet
    that work kept for matters not yet come up is credited to whatever comes up later."""

    name = "broadcast-early"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.sent: set[str] = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        w = self.world
        if not self.pending:
            for rid in sorted(w.store.visible - self.sent):
                self.sent.add(rid)
                text = w.store.view(rid).render()
                self.pending.extend([{"tool": "write_note", "arguments": {"text": text}},
                                     {"tool": "message_user", "arguments": {"text": f"Heads-up: {text}"}}])
            if not self.pending:
                self.pending.append({"tool": "wait", "arguments": {}})
        return json.dumps(self.pending.popleft())


class _FollowerPlus(TextScriptedAgent):
    """The text policy-follower with one cheap rule added (the subclass's), under its own name."""

    name = ""

    def __init__(self) -> None:
        super().__init__(PolicyFollowerAgent())
        self.name = type(self).name


class PostponeEarlyAgent(_FollowerPlus):
    """The text policy-follower, plus a postponement of every record's subject to a day later as
    the record appears, linked to no matter: a bet that postponements kept for matters not yet
    come up buy TA's "later" without any judgement of timing."""

    name = "postpone-early"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.postponed: set[str] = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        w = self.world
        if not self.pending:
            until = min(w.now + 1440, w.scenario.end_minute - 1)
            for rid in sorted(w.store.visible - self.postponed):
                self.postponed.add(rid)
                if until > w.now:
                    self.pending.append({"tool": "defer_task", "arguments": {
                        "what": w.store.view(rid).render(), "until": format_at(until), "plan": "Later."}})
        return json.dumps(self.pending.popleft()) if self.pending else super().act(obs, info)


class PiggybackAgent(_FollowerPlus):
    """The text policy-follower, with every visible record pasted under each note and message it
    writes on a matter: a bet that a needle-rich note or message on one matter is also credited
    to needs nothing announced, without the agent having judged them."""

    name = "piggyback"

    def act(self, obs: str, info: dict[str, Any]) -> str:
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        if call["tool"] in ("write_note", "message_user") and args.get("about"):
            w = self.world
            pasted = "\n".join(w.store.view(r).render() for r in sorted(w.store.visible))
            call = {**call, "arguments": {**args, "text": f"{args['text']}\n\nAlso:\n{pasted}"}}
        return json.dumps(call)


STRUCTURED = (DeferEverythingAgent, AllocateEverythingAgent, PersonaBlindAgent, AskOnEverythingAgent, PrepareOnlyAgent)


# ---------------------------------------------------------------------- content families
# Each is the text policy-follower (its reads, depths, timing, approvals and actions as they are)
# with every note, message and approval message it writes on a matter replaced by text made
# from that matter's records by one cheap rule: a disguised paste. Their TC measures what the
# content rule earns; CI holds every family at TC <= 35 and far below the text oracle
# (tests/test_adversaries.py). Parameters are in the names.

# A small synonym table, as a synonym-swapping paste would use (both directions where it reads).
SYNONYMS = {
    "price": "cost", "cost": "price", "costs": "is priced at", "ends": "finishes", "end": "finish", "sale": "offer",
    "order": "purchase", "before": "prior to", "after": "following", "delivery": "drop-off", "refund": "repayment",
    "booking": "reservation", "book": "reserve", "booked": "reserved", "needs": "requires", "need": "require",
    "must": "has to", "free": "available", "week": "seven days", "day": "date", "pay": "settle", "paid": "settled",
    "send": "dispatch", "sent": "dispatched", "time": "slot", "buy": "purchase", "meeting": "session",
    "message": "note", "email": "mail", "call": "ring", "today": "this day", "tomorrow": "the next day",
    "morning": "a.m.", "evening": "p.m.", "left": "remaining", "total": "sum", "fee": "charge", "help": "assist",
    "check": "verify", "start": "begin", "starts": "begins", "starting": "beginning", "finish": "complete",
    "open": "available", "closed": "shut", "small": "little", "large": "big", "big": "large", "fast": "quick",
    "quick": "fast", "near": "close to", "house": "home", "home": "house", "car": "vehicle", "doctor": "GP",
    "appointment": "visit", "slot": "opening", "job": "task", "run": "execute", "runs": "executes",
    "show": "display", "shows": "displays", "get": "obtain", "got": "obtained", "use": "utilise", "uses": "utilises",
    "about": "around", "around": "about", "also": "too", "include": "contain", "includes": "contains",
}
FILLER_WORDS = {"basically": ("basically",), "mixed": ("basically", "indeed", "really", "literally", "honestly"),
                "nonsense": ("zebra", "quantum", "marmalade", "tuba", "origami")}


class _ContentFamily(_FollowerPlus):
    """The text policy-follower with its words on each matter replaced by ``compose`` of the
    matter's records (the subclass's rule)."""

    name = ""

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.seed = seed

    def act(self, obs: str, info: dict[str, Any]) -> str:
        call = json.loads(super().act(obs, info))
        args, key = call["arguments"], {"write_note": "text", "message_user": "text",
                                        "request_approval": "message"}.get(call["tool"])
        task = next((t for t in self.world.tasks if t.spec.id == args.get("about")), None)
        if task is None:
            return json.dumps(call)
        text = self._text(task)
        if key:
            call = {**call, "arguments": {**args, key: text}}
        if task.spec.action is not None and call["tool"] == task.spec.action.tool:
            call = {**call, "arguments": self._own_free_text(task, call["arguments"], text)}
        return json.dumps(call)

    def _text(self, task: TaskState) -> str:
        rng = np.random.default_rng([self.seed, task.index])  # the same text each time: a paste repeated
        records = [self.world.store.view(r).render() for r in task.spec.evidence if r in self.world.store.visible]
        return self.compose(task, records or [task.spec.title], rng)

    @staticmethod
    def _own_free_text(task: TaskState, args: dict, text: str) -> dict:
        """The executed action's free-text arguments in the family's words too: an action's
        arguments are the agent's work (scoring/judge.py), so the family may not borrow the
        reference's content there."""
        free = task.spec.action.free_text
        return {k: ([text] if isinstance(v, list) else text) if k in free and isinstance(v, (str, list)) else v
                for k, v in args.items()}

    def compose(self, task: TaskState, records: list[str], rng: np.random.Generator) -> str:
        raise NotImplementedError


def _sentences(records: list[str]) -> list[str]:
    return [s for r in records for s in re.split(r"(?<=[.!?])\s+|\n+", r) if s.strip()]


def _paste_with_fillers(every: int, fillers: str):
    words = FILLER_WORDS.get(fillers)

    def compose(self, task, records, rng):
        pasted = "\n\n".join(records).split(" ")
        pool = words or tuple(w for w in pasted if w.isalpha())  # "record": fillers drawn from the records themselves
        picks = iter(rng.integers(0, len(pool), size=len(pasted) // every + 1))
        out = []
        for i, w in enumerate(pasted, start=1):
            out.append(w)
            if i % every == 0:
                out.append(pool[next(picks)])
        return " ".join(out)
    return compose


def _word_salad(order: str, stops_every: int):
    def compose(self, task, records, rng):
        words = sorted({w.strip(".,;:()\"'") for w in " ".join(records).split()} - {""})
        if order == "shuffled":
            words = [str(w) for w in rng.permutation(words)]
        if not stops_every:
            return " ".join(words)
        return " ".join(w + ("." if i % stops_every == 0 else "") for i, w in enumerate(words, start=1))
    return compose


def _synonym_swap(self, task, records, rng):
    return "\n\n".join(" ".join(SYNONYMS.get(w.lower(), w) for w in r.split(" ")) for r in records)


def _sentence_shuffle(self, task, records, rng):
    return " ".join(str(s) for s in rng.permutation(_sentences(records)))


def _interleave(unit: str):
    def compose(self, task, records, rng):
        parts = [_sentences([r]) if unit == "sentences" else r.split() for r in records]
        out = [p[i] for i in range(max(map(len, parts), default=0)) for p in parts if i < len(p)]
        return (" " if unit == "words" else "\n").join(out)
    return compose


def _keyword_stuffing(self, task, records, rng):
    spec = task.spec
    return ", ".join([spec.title, *(k for f in (*spec.facts, *spec.constraints.must_include) for k in f.needles())])


def _keyword_sentences(self, task, records, rng):
    """Quotes, verbatim, every record sentence that holds one of the task's keywords (privileged:
    it knows the keywords), with a line of its own around them."""
    from proactive_env.spec.meaning import mentions

    spec = task.spec
    keys = [k for f in (*spec.facts, *spec.constraints.must_include) for k in f.needles()]
    quoted = [s for s in _sentences(records) if any(mentions(s, k) for k in keys)]
    return f"Here is what matters for {spec.title}: " + " ".join(quoted)


def _boilerplate(self, task, records, rng):
    """Words of its own that say nothing the records say."""
    return (f"I have gone through everything about {task.spec.title} carefully and it all looks in order to me. "
            "I will keep an eye on it and let you know if anything changes.")


def _family(name: str, compose, doc: str) -> type:
    return type(name.title().replace("-", ""), (_ContentFamily,), {"name": name, "compose": compose, "__doc__": doc})


CONTENT = tuple(
    [_family(f"paste-fillers-every{k}-{f}", _paste_with_fillers(k, f),
             f"Pastes the matter's records with a filler word ({f}) after every {k} words.")
     for k, f in ((7, "basically"), (3, "mixed"), (2, "nonsense"), (1, "nonsense"), (2, "record"))]
    + [_family(f"word-salad-{o}{'-stops' if s else ''}", _word_salad(o, s),
               f"The records' distinct words, {o}{', a full stop every 6' if s else ''}.")
       for o, s in (("sorted", 0), ("shuffled", 0), ("shuffled", 6))]
    + [_family("synonym-swap-paste", _synonym_swap, "Pastes the records with every word of a synonym table swapped."),
       _family("sentence-shuffle-paste", _sentence_shuffle, "Pastes the records' sentences in a shuffled order."),
       _family("interleave-sentences", _interleave("sentences"), "Interleaves the records sentence by sentence."),
       _family("interleave-words", _interleave("words"), "Interleaves the records word by word."),
       _family("keyword-stuffing", _keyword_stuffing, "Lists every reference keyword of the matter, no sentences."),
       _family("boilerplate", _boilerplate, "Writes a polite note of its own that states nothing."),
       _family("keyword-sentences", _keyword_sentences,
               "Quotes every record sentence that holds a reference keyword, verbatim.")])


TEXT = (ReadEverythingAgent, ClaimSpamAgent, PasteRecordsAgent, EmptyArgumentsAgent, BroadcastEarlyAgent,
        PostponeEarlyAgent, PiggybackAgent, *CONTENT)
