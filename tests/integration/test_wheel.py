"""An installed Coach works, not only an editable checkout.

The wheel is built from a copy of the repository and installed into a fresh virtual
environment that cannot see the checkout; the ``coach`` command then runs from a folder
outside the repository. The new environment borrows the test runner's dependencies (torch,
gymnasium, ...) through a ``.pth`` file that lists the runner's site-packages folders: a
folder named in a ``.pth`` file joins ``sys.path`` without its own ``.pth`` files being run,
so the runner's editable install of Coach (an import hook started from a ``.pth`` file)
stays out.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SHIPPED = {"coach": "coach", "presets": "coach_presets", "environments": "coach_environments"}
"""Each folder of the repository that the wheel ships, and the package it installs as."""

TINY = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(200)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(400)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(400)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)",
    "-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(64)",
    "-cp", "agent.algorithm.num_consecutive_training_steps=4",
]  # fmt: skip
"""A CartPole_DQN run of a few hundred steps."""


@dataclass(frozen=True)
class Installed:
    """A virtual environment with the wheel installed, and a folder outside the repository."""

    wheel: Path
    python: Path
    coach: Path
    site_packages: Path
    outside: Path


def _run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH (developers point it at their checkout) nor any other PYTHON* setting.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _build_wheel(work: Path) -> Path:
    # Built from a copy: an in-tree build leaves build/ and *.egg-info in the checkout.
    source = work / "source"
    source.mkdir()
    for path in REPO.iterdir():
        if path.is_file():
            shutil.copy2(path, source / path.name)
    skip = shutil.ignore_patterns("__pycache__")
    for folder in SHIPPED:
        shutil.copytree(REPO / folder, source / folder, ignore=skip)
    out = work / "dist"
    _ok(_run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--no-index", "--quiet", "-w", out, source, cwd=work))  # fmt: skip
    (wheel,) = out.glob("coach-*.whl")
    return wheel


def _runner_site_dirs() -> list[str]:
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if Path(d).is_dir()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(work)
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=work)
    site_packages = Path(_ok(purelib).strip())
    # The runner's pip installs into the new environment. The dependencies join afterwards:
    # had they been visible, pip would have seen the runner's Coach as installed already.
    _ok(_run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
             "--no-index", "--quiet", wheel, cwd=work))  # fmt: skip
    (site_packages / "_runner_dependencies.pth").write_text("\n".join(_runner_site_dirs()) + "\n")
    outside = work / "elsewhere"
    outside.mkdir()
    return Installed(wheel, python, env_dir / "bin" / "coach", site_packages, outside)


def test_the_wheel_holds_every_package_under_its_installed_name(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    for folder, package in SHIPPED.items():
        for module in (REPO / folder).rglob("*.py"):
            relative = module.relative_to(REPO / folder).as_posix()
            assert f"{package}/{relative}" in names, (
                f"{folder}/{relative} is not in the wheel: every folder under {folder}/ "
                f"that holds modules is a package listed in setup.cfg's packages"
            )
        for modules_folder in {m.parent for m in (REPO / folder).rglob("*.py")}:
            init = modules_folder.relative_to(REPO / folder) / "__init__.py"
            assert (REPO / folder / init).is_file(), f"{modules_folder} has no __init__.py"
    assert "coach/parallel/distributed.py" in names
    top_level = {name.split("/")[0] for name in names if not name.startswith("coach-")}
    assert top_level == {"coach", "coach_presets", "coach_environments"}


def test_the_installed_coach_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    probe = (
        "import importlib.util, json, sys\n"
        "import coach, coach.parallel.distributed, coach_environments, coach_presets\n"
        "from coach import GymEnvironmentParameters\n"
        "env = GymEnvironmentParameters(level='coach/BitFlip-v0').make_env()\n"
        "print(json.dumps({\n"
        "    'files': [m.__file__ for m in (coach, coach_presets, coach_environments)],\n"
        "    'bit_flip': type(env.unwrapped).__module__,\n"
        "    'generic': [n for n in ('presets', 'environments') if importlib.util.find_spec(n)],\n"
        "    'editable': [m for m in sys.modules if 'editable' in m],\n"
        "}))\n"
    )
    report = json.loads(_ok(_run(installed.python, "-c", probe, cwd=installed.outside)))
    for file in report["files"]:
        assert Path(file).is_relative_to(installed.site_packages), file
    assert report["bit_flip"] == "coach_environments.bit_flip"
    assert report["generic"] == [] and report["editable"] == []


def test_coach_lists_the_shipped_presets(installed: Installed) -> None:
    listing = _ok(_run(installed.coach, "-l", cwd=installed.outside))
    for name in ("CartPole_DQN", "BitFlip_DQN_HER", "Pendulum_HAC"):
        assert name in listing
    assert "coach/BitFlip-v0" in listing


def test_a_shipped_preset_runs(installed: Installed) -> None:
    root = installed.outside / "experiments"
    _ok(_run(installed.coach, "-p", "CartPole_DQN", "-ep", root, "--seed", "1", *TINY,
             cwd=installed.outside))  # fmt: skip
    (run,) = (root / "CartPole_DQN").iterdir()
    assert "evaluate" in (run / "progress.csv").read_text()


USER_ENVIRONMENTS = '''
"""The user's own package named environments: a corridor to walk to the right end of."""
import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.position = max(0, self.position + (1 if action == 1 else -1))
        end = self.position == 4
        return np.array([self.position / 4], np.float32), float(end), end, False, {}
'''

USER_PRESETS = '''
"""The user's own module named presets: the budgets of their experiments."""
from coach import EnvironmentEpisodes, EnvironmentSteps, ScheduleParameters

TINY = ScheduleParameters(
    heatup_steps=EnvironmentSteps(100),
    improve_steps=EnvironmentSteps(200),
    steps_between_evaluation_periods=EnvironmentSteps(200),
    evaluation_steps=EnvironmentEpisodes(1),
)
'''

USER_PRESET = '''
"""DQN on the user's corridor, with the user's budget."""
from coach import BasicRLGraphManager, DQNAgentParameters, EnvironmentSteps
from coach import GymEnvironmentParameters
from presets import TINY

agent = DQNAgentParameters()
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(32)
environment = GymEnvironmentParameters(level="environments:Corridor", max_episode_steps=16)
graph_manager = BasicRLGraphManager(agent, environment, TINY)
'''


def test_a_users_preset_imports_their_own_presets_and_environments(
    installed: Installed,
) -> None:
    # Had the wheel installed top-level `presets` and `environments`, they would come first
    # on sys.path and the user's preset would fail to import TINY or find Corridor.
    user = installed.outside / "my_project"
    (user / "environments").mkdir(parents=True)
    (user / "environments" / "__init__.py").write_text(USER_ENVIRONMENTS)
    (user / "presets.py").write_text(USER_PRESETS)
    (user / "Corridor_DQN.py").write_text(USER_PRESET)
    root = user / "experiments"
    _ok(_run(installed.coach, "-p", "Corridor_DQN.py", "-ep", root, "--seed", "0", cwd=user))
    (run,) = (root / "Corridor_DQN").iterdir()
    params = yaml.safe_load((run / "params.yaml").read_text())
    assert "environments:Corridor" in json.dumps(params)
    assert "evaluate" in (run / "progress.csv").read_text()
