"""Turn the matter ids a recorded case's calls name (``about``: "m7") into references by identity,
``{"matter_of": ID}`` (ID: the event that raised the matter, or the task the agent took it up for),
which ``runs.resolved`` maps to the live id at each call; and mark each wait the play's reply
answered only with work finishing (``"waited_for": "work"``, see ``runs.replayed_calls``).

Run it on the code the case was played on (or last passed on), e.g.
``PYTHONPATH=/tmp/old .venv/bin/python tests/case_matters.py NAME``: it replays the calls as
recorded there and rewrites ``tests/data/NAME.json``. A case already converted is left as it is."""

from __future__ import annotations

import json
import re
import sys

from proactive_env.envs.text import ProactivityTextEnv

from runs import CASES_DIR, load_case

MATTER_ID = re.compile(r"m\d+")
NOTICE = re.compile(r"^\[D\d+ [^\]]*\] (.*)$", re.M)


def identity(world, matter_id: str) -> dict:
    """The reference by identity to the matter the world calls ``matter_id`` now."""
    matter = world.matters[matter_id]
    raised_by = next((e["id"] for e in world.log if e["type"] == "event" and e.get("matter") == matter_id), None)
    if raised_by is None:  # one the agent took up: for the task it was raised for
        raised_by = world.tasks[matter.tasks[0]].spec.id
    return {"matter_of": raised_by}


def by_identity(value, world):
    """``value`` with every matter id in an argument replaced by its reference by identity."""
    if isinstance(value, dict):
        return {k: by_identity(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [by_identity(v, world) for v in value]
    if isinstance(value, str) and MATTER_ID.fullmatch(value.strip()) and value.strip() in world.matters:
        return identity(world, value.strip())
    return value


def only_work_finished(reply: str) -> bool:
    """Did a wait's reply tell of nothing but work finishing?"""
    notices = NOTICE.findall(reply)
    return bool(notices) and all(n.startswith("Work finished") for n in notices)


def convert(name: str) -> dict:
    case = load_case(name)
    env = ProactivityTextEnv(case["scenario"], case["persona"])
    env.reset(seed=case["seed"])
    actions = []
    for played in case["actions"]:
        if env.world.done:  # (calls after the end are kept as they are)
            actions.append(played)
            continue
        call = {**played, "arguments": by_identity(played["arguments"], env.world)}
        reply = env.step(json.dumps({"tool": played["tool"], "arguments": played["arguments"]}))[0]
        if played["tool"] == "wait" and only_work_finished(reply):
            call["waited_for"] = "work"
        actions.append(call)
    return {**case, "actions": actions}


def main(names: list[str]) -> None:
    for name in names:
        case = load_case(name)
        if "matter_of" in json.dumps(case["actions"]):
            print(f"{name}: already by identity")
            continue
        path = CASES_DIR / f"{name}.json"
        indent = 0 if path.read_text().splitlines()[1].startswith('"') else 1  # (as the file had it)
        path.write_text(json.dumps(convert(name), indent=indent) + "\n")
        print(f"{name}: converted")


if __name__ == "__main__":
    main(sys.argv[1:])
