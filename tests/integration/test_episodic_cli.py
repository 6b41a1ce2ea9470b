"""NEC and DFP through the real command: interrupted with Ctrl-C and resumed, a run ends
exactly like the uninterrupted one (the dictionaries with their faiss indexes, the open
episodes, the goals and the return measured so far travel in the checkpoint)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.integration.coach_cli import coach, experiment, rewards, start, wait_for

SHORT = [
    "--seed", "3", "--save-memory",
    "-cp", "schedule.heatup_steps=EnvironmentSteps(300)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(2000)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(1000)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(3)",
]  # fmt: skip
PRESETS = {
    # Approximate search from 200 entries: the faiss indexes are part of the state.
    "CartPole_NEC": [
        "-cp", "agent.algorithm.number_of_knn=10",
        "-cp", "agent.algorithm.dnd_approximate_from=200",
    ],
    "CartPole_DFP": ["-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(4)"],
}  # fmt: skip


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_sigint_then_resume_ends_exactly_like_an_uninterrupted_run(
    preset: str, tmp_path: Path
) -> None:
    arguments = ["-p", preset, *SHORT, *PRESETS[preset]]
    whole = coach(*arguments, "-ep", str(tmp_path / "whole"), cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    reference = experiment(tmp_path / "whole", preset)

    process = start(*arguments, "-ep", str(tmp_path / "cut"), cwd=tmp_path)
    wait_for(process, "evaluate env steps     1300")  # the first of two evaluations
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    run = experiment(tmp_path / "cut", preset)
    assert rewards(run) != rewards(reference)  # it did stop early

    resumed = coach("--resume", str(run), "--save-memory", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert rewards(run) == rewards(reference)
