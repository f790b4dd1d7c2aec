"""Every code block in the README runs and exits 0, on small budgets.

Each ```bash block runs as one script (`set -euo pipefail`) in a fresh folder holding a link to
the repository's scenarios/; each ```python block runs with this interpreter. A block that needs
an extra this environment lacks (Ray for RLlib and `--ray`, Minari for datasets and behaviour
cloning) is skipped here; scripts/test.sh runs the suite again in .venv-rllib, which has them.
To keep budgets small, lines are rewritten as follows — everything else runs as written:

* `proactivity-gym train …` gets a small budget appended for the options its trainer has
  (argparse keeps the last value given);
* `proactivity-gym eval …` and `proactivity-gym dataset …` get one scenario, one persona and
  one or two seeds appended; `bash scripts/offline_baselines.sh` runs with one held-out scenario,
  two training seeds and no MaskablePPO (its own PPO_STEPS=0), into a scratch folder;
* `bash scripts/eval.sh ARGS` runs `proactivity-gym eval ARGS`, and `bash scripts/setup.sh …`
  lines are left out: installing is the step scripts/test.sh has just done for this environment;
* `vllm serve …` and `ollama pull …` (which start and fill an LLM server) are replaced by the
  loopback OpenAI-compatible test server, answering every request with a `wait` tool call; the
  README's endpoint URLs point to it.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from openai_server import FakeOpenAI, tool_call

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
SMALL_TRAIN = {"timesteps": 1024, "n_steps": 512, "batch_size": 128, "eval_freq": 1024, "eval_episodes": 1,
               "checkpoint_freq": 1024, "progress_bar": False, "train_batch_size": 512, "minibatch_size": 128,
               "num_epochs": 2, "epochs": 2, "n_envs": 2}
SMALL_EVAL = " --scenarios monitor --personas planner --seeds 1"
SMALL_DATASET = " --scenarios monitor --personas planner --seeds 0-1"
OFFLINE = "HELD_OUT=monitor TRAIN_SEEDS=0-1 PPO_STEPS=0 OUT=runs/readme-doctest-offline "
LLM_SERVERS = ("vllm serve ", "ollama pull ", "bash scripts/setup.sh ")
LLM_URLS = re.compile(r"http://localhost:(8000|11434)/v1")
NEEDS = {"ray": re.compile(r"rllib|--ray|import ray"), "minari": re.compile(r"minari|dataset|--algo bc|offline_baselines")}


def small_train(command: str) -> str:
    import dataclasses

    from proactive_env import cli

    algo = re.search(r"--algo (\S+)", command).group(1)
    fields = {f.name for f in dataclasses.fields(cli._trainer(algo).Args)}
    for name, value in SMALL_TRAIN.items():
        if name in fields:
            flag = name.replace("_", "-")
            command += f" --{flag} {value}" if not isinstance(value, bool) else f" --{'' if value else 'no-'}{flag}"
    return command


def readme_blocks() -> list[tuple[str, str, int]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text[:m.start()].count("\n") + 1) for m in FENCE.finditer(text)]


def small(script: str, base_url: str) -> str:
    lines = []
    for line in script.replace("\\\n", " ").splitlines():
        command = line.split(" #", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        if not command or command.startswith(LLM_SERVERS):
            continue
        command = command.replace("bash scripts/eval.sh", "proactivity-gym eval")
        command = LLM_URLS.sub(base_url, command)
        if command.startswith("proactivity-gym train") and "--help" not in command:
            command = small_train(command)
        elif command.startswith("proactivity-gym eval"):
            command += SMALL_EVAL
        elif command.startswith("proactivity-gym dataset"):
            command += SMALL_DATASET
        elif command.startswith("bash scripts/offline_baselines.sh"):
            command = OFFLINE + command.replace("bash scripts/", f"bash {ROOT}/scripts/")
        lines.append(command)
    return "\n".join(lines)


BLOCKS = readme_blocks()


def test_the_readme_has_command_blocks():
    assert sum(lang == "bash" for lang, _, _ in BLOCKS) >= 6 and any(lang == "python" for lang, _, _ in BLOCKS)
    commands = " ".join(code for _, code, _ in BLOCKS)
    for command in ("validate", "schema", "run", "show", "eval", "report", "rescore", "train", "--version"):
        assert f"proactivity-gym {command}" in commands, command


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """One folder for the whole README, read top to bottom as a user would (a block may use what
    an earlier one made, e.g. the dataset it recorded)."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "scenarios").symlink_to(ROOT / "scenarios")
    return folder


@pytest.mark.parametrize("lang, code, line", BLOCKS, ids=[f"README.md:{line}" for _, _, line in BLOCKS])
def test_readme_block_runs(lang, code, line, workdir):
    for module, pattern in NEEDS.items():
        if pattern.search(code):
            pytest.importorskip(module, reason=f"README.md:{line} needs {module} (run in .venv-rllib by scripts/test.sh)")
    tmp_path = workdir
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "OPENAI_API_KEY": "EMPTY", "PYTHONUNBUFFERED": "1", "MINARI_DATASETS_PATH": str(workdir / "datasets")}
    if lang == "python":
        proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
    else:
        with FakeOpenAI(lambda request: [tool_call("wait", {})]) as server:
            script = small(code, server.base_url)
            proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=900)
    if "offline_baselines" in code:
        shutil.rmtree(ROOT / "runs" / "readme-doctest-offline", ignore_errors=True)
    assert proc.returncode == 0, f"README.md:{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
