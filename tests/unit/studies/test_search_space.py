"""The search-space file of ``coach tune``: what it says, how a sampled value becomes an
override, and every refusal, each one line naming the file, the path and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from coach.errors import CoachError
from coach.parameters import set_parameter
from coach.presets import load_preset
from coach.studies.search_space import (
    Pruning,
    SearchSpace,
    check_space,
    parse_space,
    read_space,
)

pytest.importorskip("optuna")

LR = "agent.network_wrappers.main.learning_rate"
TARGET = "agent.algorithm.num_steps_between_copying_online_weights_to_target"
SPACE = f"""
parameters:
  {LR}: {{float: [1.0e-4, 1.0e-2], log: true}}
  agent.algorithm.batch_size: {{categorical: [32, 64, 128]}}
  {TARGET}: {{int: [64, 2048], log: true, unit: EnvironmentSteps}}
  agent.algorithm.discount: {{float: [0.9, 0.99], step: 0.03}}
  agent.algorithm.num_consecutive_training_steps: {{int: [8, 128], step: 8}}
  schedule.evaluation_steps: {{categorical: ["EnvironmentEpisodes(5)", "EnvironmentEpisodes(10)"]}}
pruning: {{startup_trials: 3, warmup_steps: 10000}}
"""


def _space(text: str) -> SearchSpace:
    return parse_space(yaml.safe_load(text), "space.yaml")


def test_each_kind_becomes_its_distribution_and_its_override() -> None:
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    space = parse_space(yaml.safe_load(SPACE), "space.yaml")
    lr, batch, target, discount, training, evaluation = space.dimensions
    assert lr.distribution() == FloatDistribution(1e-4, 1e-2, log=True)
    assert batch.distribution() == CategoricalDistribution([32, 64, 128])
    assert target.distribution() == IntDistribution(64, 2048, log=True)
    assert discount.distribution() == FloatDistribution(0.9, 0.99, step=0.03)
    assert training.distribution() == IntDistribution(8, 128, step=8)
    assert lr.override(0.0012) == f"{LR}=0.0012"
    assert batch.override(64) == "agent.algorithm.batch_size=64"
    assert target.override(300) == f"{TARGET}=EnvironmentSteps(300)"
    assert evaluation.override("EnvironmentEpisodes(5)") == (
        "schedule.evaluation_steps=EnvironmentEpisodes(5)"
    )
    assert space.pruning == Pruning(startup_trials=3, warmup_steps=10000)
    assert parse_space({"parameters": {LR: {"float": [0.1, 1]}}}, "s").pruning == Pruning()
    off = {"parameters": {LR: {"float": [0.1, 1]}}, "pruning": False}
    assert not parse_space(off, "s").pruning.enabled


def test_yaml_numbers_without_a_dot_are_taken_as_numbers() -> None:
    # YAML 1.1 reads 1e-4 as text; a float range takes it as the number it means.
    (lr,) = _space(f"parameters: {{{LR}: {{float: [1e-4, 1e-2], log: true}}}}").dimensions
    assert (lr.low, lr.high) == (1e-4, 1e-2)


def test_a_space_checks_on_the_preset_and_its_ends_set_as_a_trial_sets_them() -> None:
    space = parse_space(yaml.safe_load(SPACE), "space.yaml")
    graph = load_preset("CartPole_DQN").graph_manager
    check_space(space, graph, "space.yaml")
    roots = graph.parameters()
    assert roots["agent"].algorithm.batch_size == 64  # the checks worked on copies
    for dimension in space.dimensions:
        for _, value in dimension.ends():
            set_parameter(roots, dimension.path, dimension.value_text(value))
    assert roots["agent"].algorithm.discount == pytest.approx(0.99)  # 0.9 + 3 steps of 0.03


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list", "a search space is a mapping with 'parameters'"),
        ("parameters: {}", "'parameters' maps each -cp path to its range"),
        (f"parameters: {{{LR}: {{float: [0.1, 1]}}}}\nsearch: tpe", "unknown keys ['search']"),
        (f"parameters: {{{LR}: 0.1}}", f"{LR}: a range is a mapping such as"),
        (f"parameters: {{{LR}: {{uniform: [0, 1]}}}}", f"{LR}: unknown kind 'uniform'; give one"),
        (f"parameters: {{{LR}: {{float: [0, 1], int: [0, 1]}}}}", "give one kind of"),
        (f"parameters: {{{LR}: {{float: [0.1]}}}}", "float takes [low, high], two numbers"),
        (f"parameters: {{{LR}: {{float: [0.1, a]}}}}", "float bound must be a finite number"),
        (f"parameters: {{{LR}: {{float: [0.1, .inf]}}}}", "float bound must be a finite number"),
        (f"parameters: {{{LR}: {{float: [0.1, 0.01]}}}}", "the range [0.1, 0.01] is empty"),
        (f"parameters: {{{LR}: {{float: [0.1, 0.1]}}}}", "the range [0.1, 0.1] is empty"),
        (f"parameters: {{{LR}: {{float: [0.0, 0.1], log: true}}}}", "a log range needs low > 0"),
        (f"parameters: {{{LR}: {{float: [0.1, 1], log: 1}}}}", "log is true or false"),
        (f"parameters: {{{LR}: {{float: [0.1, 1], step: 2}}}}", "step must be > 0 and fit"),
        (f"parameters: {{{LR}: {{float: [0.1, 1], log: true, step: 0.1}}}}", "do not go together"),
        (f"parameters: {{{LR}: {{float: [0.1, 1], unit: TrainingSteps}}}}", "'unit' does not go"),
        ("parameters: {a.b: {int: [1, 2.5]}}", "int bound must be a whole number"),
        ("parameters: {a.b: {int: [1, 8], unit: Steps}}", "unknown unit 'Steps'; the units are"),
        ("parameters: {a.b: {categorical: []}}", "categorical takes a list of one or more"),
        ("parameters: {a.b: {categorical: 3}}", "categorical takes a list of one or more"),
        ("parameters: {a.b: {categorical: [[64, 64]]}}", "write [64, 64] as '[64, 64]'"),
        ("parameters: {a.b: {categorical: [1, 2, 1]}}", "the choice 1 is given twice"),
        ("parameters: {a.b: {categorical: [1], log: true}}", "categorical takes no options"),
        ("parameters: {a.b: {int: [1, 2]}}\npruning: 3", "pruning is false, or a mapping"),
        ("parameters: {a.b: {int: [1, 2]}}\npruning: {after: 3}", "pruning has no 'after'"),
        ("parameters: {a.b: {int: [1, 2]}}\npruning: {warmup_steps: -1}", "a whole number >= 0"),
    ],
)
def test_a_malformed_space_is_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(CoachError) as refused:
        _space(text)
    assert str(refused.value).startswith("space.yaml: ")
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "agent.algorithm.discont: {float: [0.9, 0.99]}",
            "agent.algorithm has no field 'discont'; valid fields: discount, ",
        ),
        ("agents.x: {float: [0.9, 0.99]}", "no parameters named 'agents'; valid roots: agent,"),
        ("agent.algorithm: {float: [0.9, 0.99]}", "agent.algorithm is a group of parameters"),
        (
            "agent.algorithm.discount: {float: [0.9, 1.5]}",
            "agent.algorithm.discount must be in [0, 1], got 1.5 (the high end of its range)",
        ),
        (
            "agent.algorithm.batch_size: {float: [16, 64]}",
            "agent.algorithm.batch_size takes int, not float (16.0) (the low end of its range)",
        ),
        (
            f"{TARGET}: {{int: [64, 2048]}}",
            f"{TARGET} takes EnvironmentSteps | TrainingSteps, not int (64)",
        ),
        (
            "schedule.heatup_steps: {int: [0, 100], unit: TrainingSteps}",
            "schedule.heatup_steps must be counted in EnvironmentSteps or EnvironmentEpisodes",
        ),
        (
            f"{TARGET}: {{categorical: ['EnvironmentSteps(100)', 'Steps(3)']}}",
            "not 'Steps(3)': Steps(...) is not allowed in a value",
        ),
        (
            f"{TARGET}: {{categorical: ['EnvironmentSteps(100)', 'Steps(3)']}}",
            "(one of its choices)",
        ),
    ],
)
def test_a_space_that_does_not_fit_the_preset_is_refused_in_one_line(
    entry: str, message: str
) -> None:
    space = _space(f"parameters:\n  {entry}\n")
    with pytest.raises(CoachError) as refused:
        check_space(space, load_preset("CartPole_DQN").graph_manager, "space.yaml")
    assert str(refused.value).startswith("space.yaml: ")
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_file_that_is_not_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "space.yaml"
    path.write_text("parameters:\n  a.b: {float: [1, 2}\n")
    with pytest.raises(CoachError, match=r"space.yaml:2:21: not valid YAML: "):
        read_space(path)
    with pytest.raises(CoachError, match="cannot read the search space"):
        read_space(tmp_path / "missing.yaml")
