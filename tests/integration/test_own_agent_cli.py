"""An agent of one's own, in a folder outside the repository, run by the real command: the
run records the agent class it built (log.txt, params.yaml), an error raised in the user's
own code names the user's file and line on the console, and parameters that forgot to
name their agent are refused before anything is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.integration.coach_cli import coach, experiment

AGENT = """\
from dataclasses import dataclass, field

from coach.extension import DQNAgent, DQNAgentParameters, DQNAlgorithmParameters, DQNLearner


@dataclass(slots=True, kw_only=True)
class LoudAlgorithm(DQNAlgorithmParameters):
    fail_at: int = 0
    fail_acting: bool = False


class LoudLearner(DQNLearner):
    def learn(self, batch):
        if self.algorithm.fail_at:
            raise ValueError("the new target went wrong")
        return DQNLearner.learn(self, batch)


class LoudAgent(DQNAgent):
    def make_learner(self):
        return LoudLearner(**self.learner_arguments())

    def act(self, rows=None):
        if self.params.algorithm.fail_acting:
            raise RuntimeError("acting went wrong")
        return DQNAgent.act(self, rows)


@dataclass(slots=True, kw_only=True)
class LoudParameters(DQNAgentParameters):
    algorithm: LoudAlgorithm = field(default_factory=LoudAlgorithm)

    def agent_class(self):
        return LoudAgent


@dataclass(slots=True, kw_only=True)
class ForgetfulParameters(DQNAgentParameters):
    algorithm: LoudAlgorithm = field(default_factory=LoudAlgorithm)
"""

PRESET = """\
from coach_presets.CartPole_DQN import graph_manager
from loud_agent import {parameters}

shipped = graph_manager.agent_params
agent = {parameters}()
for name in ("exploration", "memory", "network_wrappers"):
    setattr(agent, name, getattr(shipped, name))
graph_manager.agent_params = agent
"""

BUDGET = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(100)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(300)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(300)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)",
    "-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(50)",
]  # fmt: skip


def _write(folder: Path, parameters: str) -> Path:
    (folder / "loud_agent.py").write_text(AGENT)
    preset = folder / f"{parameters.lower()}.py"
    preset.write_text(PRESET.format(parameters=parameters))
    return preset


def test_a_run_records_the_agent_class_it_built(tmp_path: Path) -> None:
    preset = _write(tmp_path, "LoudParameters")
    result = coach("-p", str(preset), "-ep", "out", *BUDGET, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path / "out", preset.stem)
    assert "agent class: loud_agent.LoudAgent\n" in (run / "log.txt").read_text()
    recorded = yaml.safe_load((run / "params.yaml").read_text())
    assert recorded["agent_classes"] == {"agent": "loud_agent.LoudAgent"}
    # The record is read back as what it is: the run repeats from its params.yaml (whose
    # base is a Python file: allowed, as a file cannot ask for that itself).
    again = coach(
        "-p", str(run / "params.yaml"), "--allow-import", str(preset), "-ep", "again",
        cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr


def test_an_error_in_ones_own_agent_names_its_file_and_line(tmp_path: Path) -> None:
    preset = _write(tmp_path, "LoudParameters")
    result = coach(
        "-p", str(preset), "-ep", "out", *BUDGET, "-cp", "agent.algorithm.fail_at=1",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    line_of_raise = AGENT.splitlines().index(
        '            raise ValueError("the new target went wrong")'
    )
    where = f"{tmp_path / 'loud_agent.py'}:{line_of_raise + 1}, in learn"
    assert line.startswith(f"coach: error in {where}: ValueError: the new target went wrong;")
    run = experiment(tmp_path / "out", preset.stem)
    assert line.endswith(f"the traceback is in {(run / 'log.txt').relative_to(tmp_path)}")
    assert "Traceback (most recent call last)" in (run / "log.txt").read_text()


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_an_error_in_ones_own_agent_on_a_rollout_worker_names_its_file_and_line(
    tmp_path: Path, backend: str
) -> None:
    preset = _write(tmp_path, "LoudParameters")
    result = coach(
        "-p", str(preset), "-ep", "out", *BUDGET, "-cp", "agent.algorithm.fail_acting=True",
        "-n", "2", "--backend", backend,
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    # Ray's own notice of the runtime it starts may come first (its token authentication).
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("coach")]
    line_of_raise = AGENT.splitlines().index('            raise RuntimeError("acting went wrong")')
    where = f"{tmp_path / 'loud_agent.py'}:{line_of_raise + 1}, in act"
    assert re.match(
        rf"coach: error in {re.escape(where)} \(worker [12]\): RuntimeError: acting went wrong;",
        line,
    ), line
    log = (experiment(tmp_path / "out", preset.stem) / "log.txt").read_text()
    assert re.search(r"worker [12]'s own traceback:\nTraceback \(most recent call last\)", log)
    assert 'raise RuntimeError("acting went wrong")' in log


def test_parameters_that_do_not_name_their_agent_are_refused_in_one_line(tmp_path: Path) -> None:
    preset = _write(tmp_path, "ForgetfulParameters")
    result = coach("-p", str(preset), "-ep", "out", *BUDGET, cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("coach: error: ")
    assert "loud_agent.ForgetfulParameters inherits agent_class from DQNAgentParameters" in line
    assert "define agent_class on ForgetfulParameters" in line
    assert not (tmp_path / "out").exists()
