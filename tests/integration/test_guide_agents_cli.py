"""The guide's three agents ("Writing your own agent", docs/writing-agents.md), run as a reader
runs them: the page's files copied into a folder outside the repository, each preset run by
the real ``coach`` command with a budget of a few seconds. The run names the reader's agent
class in log.txt and params.yaml, an override of a parameter the agent added reaches the
agent's parameters, and a value its ``validate`` refuses stops the command in one line with
exit status 2 and no experiment folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.integration.coach_cli import coach, experiment
from tests.learning.guide import guide_files

BRIEF = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(200)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(256)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(256)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)",
]  # fmt: skip
"""Heatup, a training round or a rollout block, and one evaluation episode."""

AGENTS = {
    # preset: (its agent class, a new parameter with a good value, a value refused)
    "CartPole_MunchausenDQN": (
        "munchausen_dqn.MunchausenDQNAgent",
        ("munchausen_alpha", 0.5),
        ("munchausen_alpha", "1.5", "must be in [0, 1], got 1.5"),
    ),
    "Pendulum_SmoothTD3": (
        "smooth_td3.SmoothTD3Agent",
        ("temporal_weight", 0.25),
        ("state_noise", "0.0", "must be > 0, got 0.0"),
    ),
    "CartPole_SPO": (
        "spo.SPOAgent",
        ("ratio_epsilon", 0.1),
        ("ratio_epsilon", "-0.2", "must be > 0, got -0.2"),
    ),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The guide's files, as a reader saves them from the page."""
    out = tmp_path_factory.mktemp("reader")
    for name, text in guide_files().items():
        (out / name).write_text(text)
    return out


@pytest.mark.parametrize("preset", sorted(AGENTS))
def test_a_guide_agent_runs_from_its_readers_folder(preset: str, folder: Path) -> None:
    agent_class, (parameter, value), _ = AGENTS[preset]
    out = folder / f"out_{preset}"
    result = coach(
        "-p", f"{preset}.py", "-ep", str(out), "-q", *BRIEF,
        "-cp", f"agent.algorithm.{parameter}={value}",
        cwd=folder,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    run = experiment(out, preset)
    assert f"agent class: {agent_class}\n" in (run / "log.txt").read_text()
    recorded = yaml.safe_load((run / "params.yaml").read_text())
    assert recorded["agent_classes"] == {"agent": agent_class}
    assert recorded["parameters"][f"agent.algorithm.{parameter}"] == value


@pytest.mark.parametrize("preset", sorted(AGENTS))
def test_a_value_the_agent_refuses_is_one_line_and_exit_status_2(preset: str, folder: Path) -> None:
    _, _, (parameter, value, requirement) = AGENTS[preset]
    out = folder / f"refused_{preset}"
    result = coach(
        "-p", f"{preset}.py", "-ep", str(out), "-cp", f"agent.algorithm.{parameter}={value}",
        cwd=folder,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"coach: error: agent.algorithm.{parameter} {requirement}"
    ]
    assert not out.exists()
