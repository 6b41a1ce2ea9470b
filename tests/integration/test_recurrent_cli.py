"""A recurrent preset through the real command: interrupted mid-block with Ctrl-C and
resumed, it ends exactly like the uninterrupted run (the hidden state of every env copy,
the block collected so far and the rest travel in the checkpoint)."""

from __future__ import annotations

import signal
from pathlib import Path

import torch

from coach.checkpoints import find_checkpoint
from tests.integration.coach_cli import coach, experiment, rewards, start, wait_for

PRESET = "CartPoleNoVel_RecurrentPPO"
SHORT = [
    "-p", PRESET, "--seed", "3",
    "-cp", "schedule.improve_steps=EnvironmentSteps(8000)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(2000)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(3)",
]  # fmt: skip


def test_sigint_then_resume_ends_exactly_like_an_uninterrupted_run(tmp_path: Path) -> None:
    whole = coach(*SHORT, "-ep", str(tmp_path / "whole"), cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    reference = experiment(tmp_path / "whole", PRESET)

    process = start(*SHORT, "-ep", str(tmp_path / "cut"), cwd=tmp_path)
    wait_for(process, "evaluate env steps     2000")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    run = experiment(tmp_path / "cut", PRESET)
    assert rewards(run) != rewards(reference)  # it did stop early

    resumed = coach("--resume", str(run), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert rewards(run) == rewards(reference)
    final = [torch.load(find_checkpoint(r), weights_only=True) for r in (reference, run)]
    hidden = [f["agents"][0]["policy"]["hidden"]["states"] for f in final]
    assert set(hidden[0]) == {"actor", "critic"}
    for name, state in hidden[0].items():
        assert torch.equal(hidden[1][name], state)
