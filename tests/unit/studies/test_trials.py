"""One trial of ``coach tune``, run here on a study in a temporary SQLite file: it reports the
mean of its evaluations so far after each one, ends when the pruner says so, and a value its
preset refuses fails it with the refusal's message."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from coach.studies.search_space import Pruning
from coach.studies.trials import (
    COMPLETE,
    FAILED,
    PRUNED,
    StorageAddress,
    TrialJob,
    run_trial,
)

optuna = pytest.importorskip("optuna")

SMALL = (
    "schedule.heatup_steps=EnvironmentSteps(300)",
    "schedule.improve_steps=EnvironmentSteps(1800)",
    "schedule.steps_between_evaluation_periods=EnvironmentSteps(600)",
    "schedule.evaluation_steps=EnvironmentEpisodes(3)",
    "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(64)",
    "agent.algorithm.num_consecutive_training_steps=8",
)
"""A CartPole_DQN run of a second or two: evaluations at 900, 1500 and 2100 env steps."""


def _study_and_job(
    tmp_path: Path, pruning: Pruning, *overrides: str, seeds: tuple[int, ...] = (0,)
) -> tuple[Any, TrialJob]:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="s", storage=url, direction="maximize")
    if pruning.enabled:
        # A finished trial far ahead at every step a run of SMALL evaluates.
        study.add_trial(
            optuna.trial.create_trial(
                value=500.0, intermediate_values={s: 500.0 for s in range(300, 3000, 300)}
            )
        )
    trial = study.ask()
    given = {override.partition("=")[0] for override in overrides}
    job = TrialJob(
        number=trial.number,
        trial_id=trial._trial_id,
        study_name="s",
        storage=StorageAddress(url=url),
        pruning=pruning,
        preset="CartPole_DQN",
        # An override of a path of SMALL's in its place: a path given twice is refused.
        overrides=(*(o for o in SMALL if o.partition("=")[0] not in given), *overrides),
        seeds=seeds,
        device="cpu",
        directory=tmp_path / f"trial_{trial.number}",
    )
    return study, job


def _evaluations(run: Path) -> list[tuple[int, float]]:
    with open(run / "progress.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["phase"] == "evaluate" and r["agent"] == "graph"]
    return [(int(r["env_steps"]), float(r["reward"])) for r in rows]


def test_a_complete_trial_scores_the_mean_of_its_evaluations(tmp_path: Path) -> None:
    study, job = _study_and_job(tmp_path, Pruning(enabled=False))
    outcome = run_trial(job)
    evaluations = _evaluations(job.directory)
    assert [steps for steps, _ in evaluations] == [900, 1500, 2100]
    rewards = [reward for _, reward in evaluations]
    assert outcome.state == COMPLETE and outcome.env_steps == 2100
    assert outcome.value == pytest.approx(sum(rewards) / 3)
    (trial,) = study.get_trials()
    # Each report is the mean so far: what the objective would be, had the run ended there.
    assert trial.intermediate_values == pytest.approx(
        {900: rewards[0], 1500: sum(rewards[:2]) / 2, 2100: sum(rewards) / 3}
    )
    assert (job.directory / "params.yaml").is_file()
    assert (job.directory / "checkpoints" / "best.pt").is_file()


def test_a_trial_of_two_seeds_runs_both_and_reports_on_from_the_first(tmp_path: Path) -> None:
    study, job = _study_and_job(tmp_path, Pruning(enabled=False), seeds=(0, 1))
    outcome = run_trial(job)
    first, second = _evaluations(job.directory / "seed_0"), _evaluations(job.directory / "seed_1")
    rewards = [reward for _, reward in first + second]
    assert outcome.state == COMPLETE
    assert outcome.value == pytest.approx(sum(rewards) / 6)  # the mean of the two areas
    (trial,) = study.get_trials()
    # The second run's evaluations are reported after the first's 2100 env steps.
    assert sorted(trial.intermediate_values) == [900, 1500, 2100, 3000, 3600, 4200]
    assert trial.intermediate_values[4200] == pytest.approx(outcome.value)


def test_a_trial_behind_the_median_stops_at_its_first_evaluation(tmp_path: Path) -> None:
    study, job = _study_and_job(tmp_path, Pruning(startup_trials=1))
    outcome = run_trial(job)
    assert outcome.state == PRUNED and outcome.env_steps == 900
    trial = study.get_trials()[1]
    assert trial.intermediate_values == {900: outcome.value}
    assert trial.state == optuna.trial.TrialState.RUNNING  # the driver tells how it ended
    assert [steps for steps, _ in _evaluations(job.directory)] == [900]
    log = (job.directory / "log.txt").read_text()
    assert "pruned by the study at 900 env steps" in log
    assert "checkpoint saved at 900 env steps" in log  # ended as cleanly as at its budget
    (checkpoint,) = (job.directory / "checkpoints").glob("checkpoint_*.pt")
    assert checkpoint.name == "checkpoint_900.pt"


def test_a_trial_behind_the_median_at_its_last_evaluation_is_complete(tmp_path: Path) -> None:
    _, job = _study_and_job(
        tmp_path, Pruning(startup_trials=1), "schedule.improve_steps=EnvironmentSteps(600)"
    )
    outcome = run_trial(job)
    assert outcome.state == COMPLETE and outcome.env_steps == 900  # its only evaluation


def test_values_the_preset_refuses_together_fail_the_trial_with_its_message(
    tmp_path: Path,
) -> None:
    # Each value is allowed on its own (the space's checks pass); together they are not.
    _, job = _study_and_job(
        tmp_path,
        Pruning(enabled=False),
        "agent.algorithm.batch_size=256",
        "agent.memory.max_size=100",
    )
    outcome = run_trial(job)
    assert outcome.state == FAILED
    assert "agent.memory.max_size" in outcome.message and "256" in outcome.message
    assert not job.directory.exists()  # refused before the run's folder was made
