"""The wheel installs wrappers/, baselines/ and scenarios/ under proactive_env only."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
                           "-w", str(out), str(ROOT)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    BUILD_LOG.append(proc.stdout + proc.stderr)
    return next(out.glob("proactivity_gym-*.whl"))


BUILD_LOG: list[str] = []


def test_building_prints_no_warning_of_our_making(wheel):
    log = BUILD_LOG[0]
    assert "Building wheel" in log or "Created wheel" in log
    for warning in ("SetuptoolsDeprecationWarning", "BuildBackendWarning", "License classifiers are deprecated",
                    "project.license` as a TOML table is deprecated"):
        assert warning not in log


def test_wheel_maps_folders_under_the_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"proactive_env"}
    assert "proactive_env/scenarios/monitor.yaml" in names
    assert "proactive_env/baselines/oracle.py" in names
    assert "proactive_env/wrappers/__init__.py" in names
    assert "proactive_env/report/templates/episode.html.j2" in names  # the report's pages
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "[inspect_ai]\nproactive_env = proactive_env.inspect_task" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_imports_outside_the_repo(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True)
    code = ("import proactive_env, proactive_env.baselines, proactive_env.wrappers, gymnasium as gym;"
            "assert proactive_env.__file__.startswith(%r);"
            "env = gym.make('Proactivity-Monitor-v0'); env.reset(seed=0); print('ok')" % str(target))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert proc.stdout.strip() == "ok", proc.stderr
