"""What a study says at its end: the best trial as a YAML preset that loads with its values,
the figures (and none where too few trials finished), the console's lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from coach.core.step_units import EnvironmentSteps
from coach.presets import load_preset
from coach.studies.search_space import parse_space
from coach.studies.trials import COMPLETE, FAILED, INTERRUPTED, PRUNED, TrialOutcome
from coach.studies.tuning_results import (
    INTERRUPTED_ATTR,
    describe,
    report,
    short_names,
    trial_line,
)

optuna = pytest.importorskip("optuna")

LR = "agent.network_wrappers.main.learning_rate"
TARGET = "agent.algorithm.num_steps_between_copying_online_weights_to_target"
SPACE = parse_space(
    {
        "parameters": {
            LR: {"float": [1e-4, 1e-2], "log": True},
            "agent.algorithm.batch_size": {"categorical": [32, 64]},
            TARGET: {"int": [64, 2048], "unit": "EnvironmentSteps"},
        }
    },
    "space.yaml",
)


def _study(values: list[tuple[Any, float | None]]) -> Any:
    """A study of finished trials, each (state, value) with its own parameters."""
    study = optuna.create_study(direction="maximize")
    distributions = {d.path: d.distribution() for d in SPACE.dimensions}
    for i, (state, value) in enumerate(values):
        params = {
            LR: 1e-3 * (i + 1),
            "agent.algorithm.batch_size": 32 * (1 + i % 2),
            TARGET: 100 + i,
        }
        study.add_trial(
            optuna.trial.create_trial(
                state=state,
                value=value,
                params=params,
                distributions=distributions,
                intermediate_values={900: value} if value is not None else {},
            )
        )
    return study


def test_the_best_trial_is_a_yaml_preset_with_its_values_and_the_studys_overrides(
    tmp_path: Path,
) -> None:
    state = optuna.trial.TrialState
    study = _study([(state.COMPLETE, 40.0), (state.COMPLETE, 90.0), (state.PRUNED, 95.0)])
    overrides = ["schedule.improve_steps=EnvironmentSteps(1800)", "agent.algorithm.discount=0.98"]
    lines = report(study, "CartPole_DQN", overrides, SPACE, tmp_path, seeds=[3, 4, 5])
    assert lines[0] == "3 trials: 2 complete, 1 pruned, 0 failed"
    assert lines[1].startswith("best: trial 1, 90.00 (mean evaluation): ")
    text = (tmp_path / "best.yaml").read_text()
    assert "90.00, its mean evaluation (on seeds 3, 4, 5)" in text.splitlines()[0]
    document = yaml.safe_load(text)
    assert document == {
        "preset": "CartPole_DQN",
        "seed": 3,
        "parameters": {
            "schedule.improve_steps": "EnvironmentSteps(1800)",
            "agent.algorithm.discount": 0.98,
            LR: pytest.approx(2e-3),
            "agent.algorithm.batch_size": 64,
            TARGET: "EnvironmentSteps(101)",
        },
    }
    preset = load_preset(str(tmp_path / "best.yaml"))
    agent = preset.graph_manager.parameters()["agent"]
    assert agent.network_wrappers["main"].learning_rate == pytest.approx(2e-3)
    assert agent.algorithm.num_steps_between_copying_online_weights_to_target == (
        EnvironmentSteps(101)
    )
    assert agent.algorithm.discount == 0.98 and preset.seed == 3
    for name in ("optimization_history", "param_importances", "intermediate_values"):
        assert (tmp_path / f"{name}.png").stat().st_size > 0
        assert (tmp_path / f"{name}.svg").stat().st_size > 0
    assert (tmp_path / "trials.csv").read_text().count("\n") == 4


def test_too_few_complete_trials_leave_out_what_they_cannot_show(tmp_path: Path) -> None:
    state = optuna.trial.TrialState
    study = _study([(state.COMPLETE, 40.0), (state.FAIL, None), (state.FAIL, None)])
    study.set_user_attr(INTERRUPTED_ATTR, [2])
    lines = report(study, "CartPole_DQN", [], SPACE, tmp_path, seeds=[0])
    assert lines[0] == (
        "2 trials: 1 complete, 0 pruned, 1 failed; 1 interrupted, their values run again"
    )
    assert "no parameter importances: they need two complete trials" in lines
    assert (tmp_path / "optimization_history.png").is_file()
    assert not (tmp_path / "param_importances.png").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    lines = report(optuna.create_study(direction="maximize"), "CartPole_DQN", [], SPACE, empty, [0])
    assert "no trial has completed: no best.yaml" in lines
    assert not list(empty.iterdir())


def test_parameters_go_by_the_shortest_tail_that_tells_them_apart() -> None:
    paths = [
        "agent.network_wrappers.actor.learning_rate",
        "agent.network_wrappers.critic.learning_rate",
        "agent.algorithm.discount",
    ]
    assert short_names(paths) == {
        paths[0]: "actor.learning_rate",
        paths[1]: "critic.learning_rate",
        paths[2]: "discount",
    }
    values = {LR: 0.00123456, "agent.algorithm.batch_size": 64, TARGET: 300}
    text = describe(SPACE, values)
    assert text == (
        "learning_rate=0.001235 batch_size=64 "
        "num_steps_between_copying_online_weights_to_target=EnvironmentSteps(300)"
    )


@pytest.mark.parametrize(
    ("outcome", "reruns", "line"),
    [
        (TrialOutcome(3, COMPLETE, 412.25, 49000), None, "trial 3: 412.25  v=1"),
        (
            TrialOutcome(4, PRUNED, 88.1, 12000),
            None,
            "trial 4: pruned at 12000 env steps (88.10)  v=1",
        ),
        (TrialOutcome(5, FAILED, message="no"), None, "trial 5: failed: no  v=1"),
        (
            TrialOutcome(6, INTERRUPTED, 20.0, 5000),
            None,
            "trial 6: interrupted at 5000 env steps; its values run again on --resume  v=1",
        ),
        (TrialOutcome(9, COMPLETE, 1.0, 9), 6, "trial 9 (trial 6's values again): 1.00  v=1"),
        (
            TrialOutcome(7, PRUNED, 5.0, 900, seed=1),
            None,
            "trial 7: pruned at 900 env steps of seed 1 (5.00)  v=1",
        ),
    ],
)
def test_each_way_a_trial_ends_has_its_line(
    outcome: TrialOutcome, reruns: int | None, line: str
) -> None:
    assert trial_line(outcome, "v=1", reruns) == line
