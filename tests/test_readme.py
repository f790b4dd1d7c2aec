"""Every code block in the README runs and exits 0, on small budgets.

Each ```bash block runs as one script (`set -euo pipefail`) in a fresh folder holding a link to
the repository's scenarios/; each ```python block runs with this interpreter. To keep budgets
small, the lines are rewritten as follows — everything else runs exactly as written:

* `proactivity-gym train …` gets a small budget appended (argparse keeps the last value given);
* `proactivity-gym eval …` gets `--scenarios monitor --personas planner --seeds 1` appended;
* `bash scripts/eval.sh ARGS` runs `proactivity-gym eval ARGS` (what the script runs once
  scripts/setup.sh has installed the package — the step CI's scripts/test.sh has just done);
* `vllm serve …` and `ollama pull …` (which start and fill an LLM server) are replaced by the
  loopback OpenAI-compatible test server, answering every request with a `wait` tool call; the
  README's endpoint URLs point to it.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from openai_server import FakeOpenAI, tool_call

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
SMALL_TRAIN = (" --timesteps 1024 --n-steps 512 --batch-size 128 --eval-freq 1024 --eval-episodes 1 "
               "--checkpoint-freq 1024 --no-progress-bar")
SMALL_EVAL = " --scenarios monitor --personas planner --seeds 1"
LLM_SERVERS = ("vllm serve ", "ollama pull ")
LLM_URLS = re.compile(r"http://localhost:(8000|11434)/v1")


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
            command += SMALL_TRAIN
        elif command.startswith("proactivity-gym eval"):
            command += SMALL_EVAL
        lines.append(command)
    return "\n".join(lines)


BLOCKS = readme_blocks()


def test_the_readme_has_command_blocks():
    assert sum(lang == "bash" for lang, _, _ in BLOCKS) >= 6 and any(lang == "python" for lang, _, _ in BLOCKS)
    commands = " ".join(code for _, code, _ in BLOCKS)
    for command in ("validate", "schema", "run", "show", "eval", "report", "rescore", "train", "--version"):
        assert f"proactivity-gym {command}" in commands, command


@pytest.mark.parametrize("lang, code, line", BLOCKS, ids=[f"README.md:{line}" for _, _, line in BLOCKS])
def test_readme_block_runs(lang, code, line, tmp_path):
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "OPENAI_API_KEY": "EMPTY", "PYTHONUNBUFFERED": "1"}
    if lang == "python":
        proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
    else:
        with FakeOpenAI(lambda request: [tool_call("wait", {})]) as server:
            script = small(code, server.base_url)
            proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"README.md:{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
