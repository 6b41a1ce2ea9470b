"""Finding and loading presets: by name, path, YAML and module:attr, and their errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import coach.presets
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.presets import describe, list_presets, load_preset, load_run_preset


def test_by_name_and_description() -> None:
    preset = load_preset("CartPole_DQN")
    assert isinstance(preset.graph_manager, BasicRLGraphManager)
    assert preset.name == "CartPole_DQN" and preset.validation is not None
    assert describe(preset) == ("CartPole-v1", "DQNAgent")
    assert "CartPole_DQN" in list_presets()


def test_shipped_presets_and_environments_go_by_their_installed_names_only() -> None:
    # The repository root is on sys.path in tests, so a stray `from presets import ...` would
    # work here, import a second copy of a module, and fail only once Coach is installed.
    for name in list_presets():
        load_preset(name)
    GymEnvironmentParameters(level="coach/BitFlip-v0").make_env()
    assert "coach_presets" in sys.modules and "coach_environments" in sys.modules
    assert "presets" not in sys.modules and "environments" not in sys.modules


def test_missing_shipped_presets_name_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coach.presets, "SHIPPED_PRESETS", "coach_presets_not_installed")
    with pytest.raises(CoachError, match=r"coach_presets_not_installed\) are not installed.*pip"):
        list_presets()


def test_each_load_is_a_fresh_graph() -> None:
    first, second = load_preset("CartPole_DQN"), load_preset("CartPole_DQN")
    first.graph_manager.parameters()["agent"].algorithm.discount = 0.5
    assert second.graph_manager.parameters()["agent"].algorithm.discount == 0.99


@pytest.mark.parametrize(
    ("name", "suggestion"), [("CartPoleDQN", "CartPole_DQN"), ("cartpole_dqn", "CartPole_DQN")]
)
def test_unknown_name_suggests_close_matches(name: str, suggestion: str) -> None:
    with pytest.raises(CoachError, match=f"did you mean {suggestion}"):
        load_preset(name)


def test_unknown_name_without_close_match_points_to_the_list() -> None:
    with pytest.raises(CoachError, match="coach -l"):
        load_preset("Zzzzzz")


def test_yaml_preset_overrides_its_base(tmp_path: Path) -> None:
    run = tmp_path / "run.yaml"
    run.write_text(
        "preset: CartPole_DQN\nseed: 4\nparameters:\n"
        "  agent.algorithm.discount: 0.9\n  schedule.heatup_steps: EnvironmentSteps(7)\n"
    )
    preset = load_preset(str(run))
    roots = preset.graph_manager.parameters()
    assert roots["agent"].algorithm.discount == 0.9
    assert roots["schedule"].heatup_steps.num_steps == 7
    assert preset.seed == 4 and preset.source == str(run)

    # A YAML preset can stand on another YAML preset.
    child = tmp_path / "child.yaml"
    child.write_text("preset: run.yaml\nparameters:\n  agent.algorithm.batch_size: 16\n")
    nested = load_preset(str(child))
    assert nested.graph_manager.parameters()["agent"].algorithm.discount == 0.9
    assert nested.graph_manager.parameters()["agent"].algorithm.batch_size == 16


def test_a_runs_params_of_a_preset_file_load_over_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run's params.yaml names its preset by name; a preset file of the user's is not
    # found so, and is given as the base (as coach export -p does).
    (tmp_path / "MyCartPole.py").write_text(
        "from coach_presets.CartPole_DQN import graph_manager\n"
        "graph_manager.agent_params.algorithm.batch_size = 48\n"
    )
    params = tmp_path / "params.yaml"
    params.write_text("preset: MyCartPole\nparameters:\n  agent.algorithm.discount: 0.9\n")
    with pytest.raises(CoachError, match="no preset named 'MyCartPole'"):
        load_run_preset(params)
    monkeypatch.chdir(tmp_path.parent)  # a relative path names it from where coach runs
    preset = load_run_preset(params, f"{tmp_path.name}/MyCartPole.py")
    algorithm = preset.graph_manager.parameters()["agent"].algorithm
    assert preset.name == "MyCartPole" and preset.source == str(params)
    assert algorithm.discount == 0.9 and algorithm.batch_size == 48


def test_a_preset_file_built_on_a_shipped_presets_module_gets_its_own_objects_each_load(
    tmp_path: Path,
) -> None:
    # Golden and the benchmarks load a preset again to evaluate its checkpoints; a second
    # load must not hand back the graph the first one trained, nor change it twice.
    path = tmp_path / "HalfDiscount.py"
    path.write_text(
        "from coach_presets.CartPole_DQN import graph_manager, validation\n"
        "graph_manager.agent_params.algorithm.discount *= 0.5\n"
    )
    first, second = load_preset(str(path)), load_preset(str(path))
    assert first.graph_manager is not second.graph_manager
    for preset in (first, second):
        assert preset.graph_manager.parameters()["agent"].algorithm.discount == 0.495
    assert (
        load_preset("CartPole_DQN").graph_manager.parameters()["agent"].algorithm.discount == 0.99
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just a string\n", "mapping with a 'preset' key"),
        ("preset: CartPole_DQN\nparamters: {}\n", "unknown keys"),
        ("preset: CartPole_DQN\nparameters:\n  agent.algorithm.discont: 0.9\n", "discount"),
        ("preset: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_yaml_presets_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    run = tmp_path / "bad.yaml"
    run.write_text(text)
    with pytest.raises(CoachError, match=message) as error:
        load_preset(str(run))
    assert str(run) in str(error.value)


def test_python_preset_errors_name_file_and_line(tmp_path: Path) -> None:
    failing = tmp_path / "failing.py"
    failing.write_text("x = 1\nraise ValueError('boom')\n")
    with pytest.raises(CoachError, match=rf"{failing}:2: preset failed: ValueError: boom"):
        load_preset(str(failing))
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(CoachError, match="defines no GraphManager"):
        load_preset(str(empty))
    with pytest.raises(CoachError, match="no preset file"):
        load_preset(str(tmp_path / "missing.py"))


def test_a_reward_ceiling_is_a_baseline_promise() -> None:
    from coach.presets import PresetValidation

    baseline = PresetValidation(max_reward=100, max_epochs=40)
    assert baseline.ceiling() and baseline.describe() == "<=100"
    assert not baseline.reached(500.0, 0.0)  # nothing to reach: it holds by staying below
    assert baseline.broken(0.0, 100.5) and not baseline.broken(0.0, 99.0)
    target = PresetValidation(min_reward=475, max_epochs=40)
    assert not target.ceiling() and target.reached(480.0, 0.0) and not target.broken(0.0, 500)
    with pytest.raises(CoachError, match="needs min_reward"):
        PresetValidation(max_epochs=40)


def test_a_module_attr_preset_may_name_a_function_each_load_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A module is imported once per process: a graph it builds when imported is the same
    # object at every load, so a function that builds one gives each load its own.
    (tmp_path / "my_presets.py").write_text(
        "from coach import BasicRLGraphManager, DQNAgentParameters, GymEnvironmentParameters\n"
        "from coach import ScheduleParameters\n"
        "def make_cartpole():\n"
        "    env = GymEnvironmentParameters(level='CartPole-v1')\n"
        "    return BasicRLGraphManager(DQNAgentParameters(), env, ScheduleParameters())\n"
        "built = make_cartpole()\n"
        "def broken():\n"
        "    raise ValueError('boom')\n"
        "def nothing():\n"
        "    return 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    first, second = load_preset("my_presets:make_cartpole"), load_preset("my_presets:make_cartpole")
    assert first.graph_manager is not second.graph_manager
    assert first.name == "make_cartpole" and first.spec == "my_presets:make_cartpole"
    assert (
        load_preset("my_presets:built").graph_manager
        is load_preset("my_presets:built").graph_manager
    )
    with pytest.raises(CoachError, match=r"my_presets:broken: preset failed: ValueError: boom"):
        load_preset("my_presets:broken")
    with pytest.raises(
        CoachError, match=r"my_presets:nothing: nothing\(\) returned no GraphManager"
    ):
        load_preset("my_presets:nothing")
