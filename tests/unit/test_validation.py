"""Unit tests for coach/validation.py and `coach.parameter_tree.validate_parameters`: every
parameter dataclass refuses the values it cannot run with, named by their path from the root,
when a graph is validated or built (before anything is built or written)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from coach.agents.cql import CQLAlgorithmParameters
from coach.agents.ppo import PPOAlgorithmParameters
from coach.core.goals import GoalReward
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, TrainingSteps
from coach.errors import CoachError
from coach.exploration.ensemble import UCBParameters
from coach.exploration.ou_process import OUProcessParameters
from coach.exploration.truncated_normal import TruncatedNormalParameters
from coach.graph_managers.parameters import RunContext
from coach.networks.parameters import InputEmbedderParameters
from coach.parallel.distributed import DistributedGraphManager
from coach.parallel.parameters import DistributedParameters
from coach.parameter_tree import validate_parameters
from coach.parameters import set_parameter
from coach.presets import list_presets, load_preset
from coach.schedules import ConstantSchedule, LinearSchedule, PieceWiseSchedule
from coach.validation import InvalidParameter, number, steps, whole

# (preset, path, bad value, what the message says)
REFUSED = [
    ("CartPole_DQN", "agent.algorithm.discount", "1.5",
     "agent.algorithm.discount must be in [0, 1], got 1.5"),
    ("CartPole_DQN", "agent.algorithm.discount", "-0.1", "must be in [0, 1], got -0.1"),
    ("CartPole_DQN", "agent.algorithm.discount", "nan", "must be in [0, 1], got nan"),
    ("CartPole_DQN", "agent.algorithm.batch_size", "0",
     "agent.algorithm.batch_size must be a whole number >= 1, got 0"),
    ("CartPole_DQN", "agent.algorithm.num_consecutive_training_steps", "0",
     "num_consecutive_training_steps must be a whole number >= 1, got 0"),
    ("CartPole_DQN", "agent.algorithm.num_consecutive_playing_steps", "EnvironmentSteps(0)",
     "num_consecutive_playing_steps must be > 0 steps, got EnvironmentSteps(0)"),
    ("CartPole_DQN", "agent.algorithm.n_step", "0", "agent.algorithm.n_step must be a whole"),
    ("CartPole_DQN", "agent.algorithm.target_update_rate", "0",
     "target_update_rate must be in (0, 1]"),
    ("CartPole_DQN", "agent.algorithm.target_update_rate", "1.5",
     "target_update_rate must be in (0, 1]"),
    ("CartPole_DQN", "agent.algorithm.num_steps_between_copying_online_weights_to_target",
     "TrainingSteps(0)", "must be > 0 steps, got TrainingSteps(0)"),
    ("CartPole_DQN", "agent.algorithm.huber_delta", "0", "huber_delta must be > 0"),
    ("CartPole_DQN", "agent.algorithm.loss", "l1", "loss must be one of 'huber', 'mse', got 'l1'"),
    ("CartPole_DQN", "agent.exploration.evaluation_epsilon", "1.5",
     "agent.exploration.evaluation_epsilon must be in [0, 1], got 1.5"),
    ("CartPole_DQN", "agent.exploration.epsilon_schedule", "LinearSchedule(1.0, -0.1, 100)",
     "agent.exploration.epsilon_schedule must take values in [0, 1]"),
    ("CartPole_DQN", "agent.exploration", "None", "agent.exploration must be exploration "
     "parameters such as EGreedyParameters(), got None"),
    ("CartPole_DQN", "agent.memory", "None", "agent.memory must be memory parameters"),
    ("CartPole_DQN", "agent.memory.max_size", "0",
     "agent.memory.max_size must be a whole number >= 1, got 0"),
    ("CartPole_DQN", "agent.memory.max_size", "63",
     "agent.memory.max_size must be >= algorithm.batch_size (64), got 63"),
    ("CartPole_DQN", "agent.name", "''", "agent.name must be a non-empty string"),
    ("CartPole_DQN", "agent.network_wrappers.main.learning_rate", "-0.001",
     "agent.network_wrappers.main.learning_rate must be >= 0 (0 freezes the network)"),
    ("CartPole_DQN", "agent.network_wrappers.main.adam_epsilon", "0", "adam_epsilon must be > 0"),
    ("CartPole_DQN", "agent.network_wrappers.main.weight_decay", "-1", "weight_decay must be >= 0"),
    ("CartPole_DQN", "agent.network_wrappers.main.gradient_clip_norm", "0",
     "gradient_clip_norm must be > 0"),
    ("CartPole_DQN", "agent.network_wrappers.main.middleware.scheme", "[64, 0]",
     "agent.network_wrappers.main.middleware.scheme.1 must be a whole number >= 1, got 0"),
    ("CartPole_DQN", "agent.network_wrappers.main.middleware.activation", "sigmoid",
     "activation must be one of 'elu', 'gelu'"),
    ("CartPole_DQN", "agent.network_wrappers.main.input_embedders.observation.conv", "[(1, 2)]",
     "input_embedders.observation.conv.0 must be (out channels, kernel size, stride)"),
    ("CartPole_DQN", "agent.network_wrappers.main.input_embedders.observation.input_rescaling",
     "0", "input_rescaling must be > 0"),
    ("CartPole_DQN", "agent.network_wrappers.main.input_embedders", "{}",
     "agent.network_wrappers.main.input_embedders must embed at least one input"),
    ("CartPole_DQN", "agent.network_wrappers.main.heads", "[]",
     "agent.network_wrappers.main.heads must hold at least one head"),
    ("CartPole_DQN", "agent.network_wrappers.main.heads.0.name", "''",
     "heads.0.name must be a non-empty string"),
    ("CartPole_DQN", "environment.num_envs", "0",
     "environment.num_envs must be a whole number >= 1, got 0"),
    ("CartPole_DQN", "environment.max_episode_steps", "0", "max_episode_steps must be a whole"),
    ("CartPole_DQN", "environment.vectorization", "threads",
     "environment.vectorization must be one of 'sync', 'async', 'envpool', got 'threads'"),
    ("CartPole_DQN", "environment.level", "''", "environment.level must be a non-empty string"),
    ("CartPole_DQN", "schedule.heatup_steps", "TrainingSteps(10)",
     "schedule.heatup_steps must be counted in EnvironmentSteps or EnvironmentEpisodes "
     "(nothing trains in heatup), got TrainingSteps(10)"),
    ("CartPole_DQN", "schedule.heatup_steps", "Epochs(1)", "must be counted in EnvironmentSteps"),
    ("CartPole_DQN", "schedule.steps_between_evaluation_periods", "EnvironmentSteps(0)",
     "schedule.steps_between_evaluation_periods must be > 0 steps, got EnvironmentSteps(0)"),
    ("CartPole_DQN", "schedule.steps_between_evaluation_periods", "EnvironmentEpisodes(0)",
     "must be > 0 steps"),
    ("CartPole_DQN", "schedule.steps_between_evaluation_periods", "Epochs(2)",
     "must be counted in EnvironmentSteps, EnvironmentEpisodes or TrainingSteps"),
    ("CartPole_DQN", "schedule.evaluation_steps", "TrainingSteps(5)",
     "schedule.evaluation_steps must be counted in EnvironmentSteps or EnvironmentEpisodes "
     "(nothing trains in an evaluation)"),
    ("CartPole_DQN", "schedule.improve_steps", "Epochs(2)",
     "schedule.improve_steps must be counted in EnvironmentSteps, EnvironmentEpisodes or "
     "TrainingSteps, got Epochs(2)"),
    ("CartPole_DQN", "schedule.checkpoint_steps", "EnvironmentSteps(0)",
     "schedule.checkpoint_steps must be > 0 steps"),
    ("CartPole_ClippedPPO", "agent.algorithm.batch_size", "257",
     "agent.algorithm.batch_size must be at most the rollout block (memory.rollout_length 32 "
     "x env copies 8 = 256), got 257"),
    ("CartPole_ClippedPPO", "agent.algorithm.batch_size", "-1",
     "must be a whole number >= 0 (0: the whole block at once)"),
    ("CartPole_ClippedPPO", "agent.algorithm.gae_lambda", "1.1", "gae_lambda must be in [0, 1]"),
    ("CartPole_ClippedPPO", "agent.algorithm.epochs", "0", "epochs must be a whole number >= 1"),
    ("CartPole_ClippedPPO", "agent.algorithm.learning_rate_schedule", "ConstantSchedule(-1e-3)",
     "learning_rate_schedule must take values >= 0"),
    ("CartPole_ClippedPPO", "agent.algorithm.clip_range_schedule", "ConstantSchedule(-0.1)",
     "clip_range_schedule must take values >= 0"),
    ("CartPole_ClippedPPO", "agent.algorithm.value_clip_range", "0",
     "value_clip_range must be > 0"),
    ("CartPole_ClippedPPO", "agent.algorithm.target_kl", "-0.01", "target_kl must be > 0"),
    ("CartPole_ClippedPPO", "agent.algorithm.value_coefficient", "-1", "must be >= 0"),
    ("CartPole_ClippedPPO", "agent.memory.rollout_length", "0",
     "agent.memory.rollout_length must be a whole number >= 1, got 0"),
    ("CartPole_ClippedPPO", "environment.num_envs", "7",
     "batch_size must be at most the rollout block (memory.rollout_length 32 x "
     "env copies 7 = 224), got 256"),
    ("CartPole_A2C", "agent.algorithm.batch_size", "-1", "must be a whole number >= 0"),
    ("CartPole_Rainbow", "agent.memory.alpha", "-1", "agent.memory.alpha must be >= 0"),
    ("CartPole_Rainbow", "agent.memory.beta_schedule", "ConstantSchedule(1.5)",
     "agent.memory.beta_schedule must take values in [0, 1]"),
    ("CartPole_Rainbow", "agent.memory.epsilon", "0", "agent.memory.epsilon must be > 0"),
    ("CartPole_C51", "agent.network_wrappers.main.heads.0.num_atoms", "1",
     "heads.0.num_atoms must be a whole number >= 2, got 1"),
    ("CartPole_C51", "agent.network_wrappers.main.heads.0.v_max", "-20",
     "heads.0.v_max must be > 0, got -20.0"),
    ("CartPole_QR_DQN", "agent.network_wrappers.main.heads.0.num_quantiles", "0",
     "num_quantiles must be a whole number >= 1"),
    ("CartPole_Bootstrapped_DQN", "agent.algorithm.bootstrap_probability", "1.5",
     "bootstrap_probability must be in [0, 1]"),
    ("CartPole_Bootstrapped_DQN", "agent.algorithm.n_step", "3",
     "agent.algorithm.n_step must be 1 (Bootstrapped DQN stores one-step transitions), got 3"),
    ("CartPole_Bootstrapped_DQN", "agent.exploration.num_heads", "0", "num_heads must be a whole"),
    ("CartPole_Bootstrapped_DQN", "agent.network_wrappers.main.heads.0.num_heads", "0",
     "heads.0.num_heads must be a whole number >= 1"),
    ("Pendulum_TD3", "agent.algorithm.tau", "0", "agent.algorithm.tau must be in (0, 1]"),
    ("Pendulum_TD3", "agent.algorithm.policy_delay", "0", "policy_delay must be a whole"),
    ("Pendulum_TD3", "agent.algorithm.target_policy_noise", "-0.2", "must be >= 0"),
    ("Pendulum_TD3", "agent.exploration.noise_schedule", "ConstantSchedule(-0.1)",
     "agent.exploration.noise_schedule must take values >= 0"),
    ("Pendulum_TD3", "agent.exploration.evaluation_noise", "-0.1", "evaluation_noise must be"),
    ("Pendulum_SAC", "agent.algorithm.initial_temperature", "0",
     "agent.algorithm.initial_temperature must be > 0, got 0.0"),
    ("Pendulum_SAC", "agent.algorithm.temperature_learning_rate", "-1", "must be >= 0"),
    ("Pendulum_SAC", "agent.algorithm.target_entropy", "nan",
     "target_entropy must be a finite number"),
    ("Pendulum_HAC", "agents.0.algorithm.subgoal_testing_rate", "1.5",
     "agents.0.algorithm.subgoal_testing_rate must be in [0, 1], got 1.5"),
    ("Pendulum_HAC", "hierarchy.horizons", "[0]",
     "hierarchy.horizons.0 must be a whole number >= 1, got 0"),
    ("Pendulum_HAC", "hierarchy.horizons", "[5, 5]", "2 levels need 1 horizons"),
    ("Pendulum_HAC", "agents.1.memory.hindsight_goal_selection_method", "last",
     "agents.1.memory.hindsight_goal_selection_method must be one of 'final', 'future'"),
    ("Pendulum_HAC", "agents.1.memory.hindsight_transitions_per_regular_transition", "-1",
     "must be a whole number >= 0"),
    ("Pendulum_HAC", "agents.1.memory.max_size", "4",
     "agents.1.memory.max_size must hold a step and its 4 relabeled copies"),
    ("Pendulum_HAC", "agents.0.memory.goal_reward.threshold", "-1",
     "agents.0.memory.goal_reward.threshold must be >= 0, got -1.0"),
    ("Pendulum_HAC", "hierarchy.goals.goal_reward.dimension_thresholds", "[0.1, -1.0, 0.1]",
     "hierarchy.goals.goal_reward.dimension_thresholds.1 must be >= 0"),
    ("BitFlip_DQN_HER", "agent.memory.goal_reward.distance", "manhattan",
     "agent.memory.goal_reward.distance must be one of 'euclidean', 'max_abs'"),
    ("CartPole_DDQN_BCQ_BatchRL", "agent.algorithm.threshold", "1.5",
     "agent.algorithm.threshold must be in [0, 1], got 1.5"),
    ("CartPole_DDQN_BCQ_BatchRL", "schedule.improve_steps", "EnvironmentSteps(5)",
     "schedule.improve_steps must be counted in Epochs, got EnvironmentSteps(5)"),
    ("CartPole_DDQN_BCQ_BatchRL", "batch.dataset", "''", "batch.dataset must name a local"),
    ("CartPole_DDQN_BCQ_BatchRL", "batch.reward_model_epochs", "0", "reward_model_epochs must"),
    ("CartPole_DDQN_BCQ_BatchRL", "batch.reward_model.learning_rate", "-1",
     "batch.reward_model.learning_rate must be >= 0"),
    ("CartPole_DDQN_BCQ_BatchRL", "agent.algorithm.num_steps_between_copying_online_weights"
     "_to_target", "EnvironmentSteps(100)", "a batch run counts gradient steps"),
    ("Atari_DQN", "environment.frame_skip", "0", "environment.frame_skip must be a whole number"),
    ("Atari_DQN", "environment.repeat_action_probability", "2",
     "repeat_action_probability must be in [0, 1]"),
    ("Atari_DQN", "environment.obs_type", "rgbd", "environment.obs_type must be one of"),
]  # fmt: skip


@pytest.mark.parametrize(("preset", "path", "value", "message"), REFUSED)
def test_an_override_out_of_range_is_refused_naming_its_path(
    preset: str, path: str, value: str, message: str
) -> None:
    graph = load_preset(preset).graph_manager
    set_parameter(graph.parameters(), path, value)  # the type fits: only the value is wrong
    with pytest.raises(CoachError) as error:
        graph.validate()
    assert message in str(error.value)


@pytest.mark.parametrize("preset", list_presets())
def test_every_preset_is_valid(preset: str) -> None:
    graph = load_preset(preset).graph_manager
    validate_parameters(graph.parameters())
    graph.validate()


@pytest.mark.parametrize(
    ("preset", "path", "value"),
    [
        # A policy frozen to record a dataset (presets/_batch.py's recipe).
        ("CartPole_ClippedPPO", "agent.algorithm.learning_rate_schedule", "ConstantSchedule(0.0)"),
        ("CartPole_DQN", "agent.network_wrappers.main.learning_rate", "0"),
        # No evaluations (the same recipe); no heatup (batch runs).
        ("CartPole_DQN", "schedule.evaluation_steps", "EnvironmentEpisodes(0)"),
        ("CartPole_DQN", "schedule.heatup_steps", "EnvironmentSteps(0)"),
        ("CartPole_DQN", "schedule.heatup_steps", "EnvironmentEpisodes(3)"),
        ("CartPole_DQN", "schedule.steps_between_evaluation_periods", "TrainingSteps(100)"),
        ("CartPole_DQN", "schedule.improve_steps", "EnvironmentSteps(0)"),
        ("CartPole_DQN", "agent.algorithm.discount", "0"),
        ("CartPole_DQN", "agent.algorithm.discount", "1"),
        ("CartPole_DQN", "agent.memory.max_size", "64"),
        ("CartPole_A2C", "agent.algorithm.batch_size", "0"),
        ("CartPole_ClippedPPO", "agent.algorithm.batch_size", "256"),
    ],
)
def test_the_edges_of_what_is_allowed_pass(preset: str, path: str, value: str) -> None:
    graph = load_preset(preset).graph_manager
    set_parameter(graph.parameters(), path, value)
    graph.validate()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("schedule.heatup_steps", TrainingSteps(10), "nothing trains in heatup"),
        ("schedule.steps_between_evaluation_periods", EnvironmentSteps(0), "must be > 0 steps"),
        ("schedule.evaluation_steps", TrainingSteps(1), "nothing trains in an evaluation"),
        ("agent.algorithm.num_consecutive_playing_steps", EnvironmentSteps(0), "> 0 steps"),
        ("agent.algorithm.num_consecutive_training_steps", 0, "whole number >= 1"),
    ],
)
def test_a_run_that_could_never_end_is_refused_before_anything_is_built(
    path: str, value: Any, message: str, tmp_path: Path
) -> None:
    """The hazards of a run that loops forever or divides by zero are refused by
    create_graph before it builds an environment or writes a file."""
    graph = load_preset("CartPole_DQN").graph_manager
    set_parameter(graph.parameters(), path, value)
    run = tmp_path / "run"
    with pytest.raises(CoachError, match=message):
        graph.create_graph(RunContext(seed=0, experiment_dir=run, quiet=True))
    assert graph.environment is None and graph.levels == [] and graph.logger is None
    assert not run.exists()


def test_an_on_policy_block_counts_the_rollout_workers_copies() -> None:
    """With rollout workers the learner's block holds every worker's copies: a minibatch
    that is too big for one environment's block fits the workers' block."""
    graph = load_preset("CartPole_ClippedPPO").graph_manager
    set_parameter(graph.parameters(), "environment.num_envs", 4)
    with pytest.raises(CoachError, match=r"x env copies 4 = 128\), got 256"):
        graph.validate()
    DistributedGraphManager(graph, DistributedParameters(num_workers=2)).validate()
    with pytest.raises(CoachError, match=r"x env copies 4 = 128\), got 256"):
        DistributedGraphManager(graph, DistributedParameters(num_workers=1)).validate()


# -- parameters not reached by a shipped preset -------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (OUProcessParameters(theta=-0.1), "theta must be >= 0"),
        (OUProcessParameters(dt=0.0), "dt must be > 0"),
        (OUProcessParameters(sigma_schedule=ConstantSchedule(-1.0)), "take values >= 0"),
        (OUProcessParameters(mu=math.inf), "mu must be a finite number"),
        (TruncatedNormalParameters(clip_low=0.5, clip_high=0.5), "clip_high must be > 0.5"),
        (TruncatedNormalParameters(clip_low=math.nan), "clip_low must be a finite number"),
        (UCBParameters(c=-1.0), "c must be >= 0"),
        (CQLAlgorithmParameters(alpha=-1.0), "alpha must be >= 0"),
        (PPOAlgorithmParameters(target_kl=0.0), "target_kl must be > 0"),
        (PPOAlgorithmParameters(initial_kl_coefficient=-1.0), "initial_kl_coefficient"),
    ],
)
def test_component_parameters_refuse_bad_values(params: Any, message: str) -> None:
    with pytest.raises(InvalidParameter, match=message):
        validate_parameters({"x": params})
    assert str(InvalidParameter("f", "must be", 1).under("x")) == "x.f must be, got 1"


def test_a_goal_reward_names_itself_when_made_wrong() -> None:
    with pytest.raises(CoachError, match=r"^GoalReward.threshold must be >= 0, got -1.0$"):
        GoalReward(threshold=-1.0)


# -- the walk -----------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class _Leaf:
    size: int = 1

    def validate(self) -> None:
        whole("size", self.size, 1)


@dataclass(slots=True, kw_only=True)
class _Branch:
    leaves: list[_Leaf] = field(default_factory=lambda: [_Leaf(), _Leaf()])
    by_name: dict[str, _Leaf] = field(default_factory=lambda: {"a": _Leaf()})
    total: int = 2

    def validate(self) -> None:
        if self.total != sum(leaf.size for leaf in self.leaves):
            raise InvalidParameter("total", "must be the sum of the leaves' sizes", self.total)


def test_the_walk_names_list_and_dict_members_by_their_path() -> None:
    branch = _Branch()
    validate_parameters({"root": branch})
    branch.leaves[1].size = 0
    with pytest.raises(InvalidParameter, match=r"^root\.leaves\.1\.size must be a whole"):
        validate_parameters({"root": branch})
    branch.leaves[1].size = 1
    branch.by_name["a"].size = -3
    with pytest.raises(InvalidParameter, match=r"^root\.by_name\.a\.size "):
        validate_parameters({"root": branch})


def test_the_walk_checks_members_before_the_combinations_of_their_owner() -> None:
    branch = _Branch(total=2)
    branch.leaves[0].size = 0  # also breaks the sum: the member's own error comes first
    with pytest.raises(InvalidParameter, match=r"^root\.leaves\.0\.size"):
        validate_parameters({"root": branch})
    branch.leaves[0].size = 5
    with pytest.raises(InvalidParameter, match=r"^root\.total must be the sum"):
        validate_parameters({"root": branch})


def test_a_plain_coach_error_of_a_validate_gets_the_path_in_front() -> None:
    @dataclass(slots=True)
    class Old:
        def validate(self) -> None:
            raise CoachError("something is off")

    with pytest.raises(CoachError, match=r"^root\.old: something is off$"):
        validate_parameters({"root": {"old": Old()}})


# -- the checks ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.5, 0, 1, np.float32(0.5), np.int64(1)])
def test_number_takes_numpy_numbers_too(value: Any) -> None:
    number("p", value, 0, 1)


@pytest.mark.parametrize("value", [True, "0.5", None, math.inf, -math.inf, math.nan, 1.01])
def test_number_refuses_what_is_not_a_finite_number_in_range(value: Any) -> None:
    with pytest.raises(InvalidParameter, match=r"^p must be in \[0, 1\], got "):
        number("p", value, 0, 1)


@pytest.mark.parametrize("value", [0.5, True, "3", None, 0])
def test_whole_refuses_what_is_not_a_whole_number(value: Any) -> None:
    with pytest.raises(InvalidParameter, match="must be a whole number >= 1"):
        whole("n", value, 1)
    whole("n", np.int32(3), 1)


def test_steps_names_the_units_and_the_reason() -> None:
    with pytest.raises(InvalidParameter, match=r"^h must be counted in EnvironmentSteps or "
                       r"EnvironmentEpisodes \(why\), got TrainingSteps\(3\)$"):  # fmt: skip
        steps("h", TrainingSteps(3), (EnvironmentSteps, EnvironmentEpisodes), 0, why="why")
    with pytest.raises(InvalidParameter, match=r"^h must be >= 2 steps, got EnvironmentSteps"):
        steps("h", EnvironmentSteps(1), (EnvironmentSteps,), 2)
    steps("h", EnvironmentEpisodes(0), (EnvironmentSteps, EnvironmentEpisodes), 0)


def test_schedule_bounds_cover_every_value() -> None:
    piecewise = PieceWiseSchedule(
        [
            (ConstantSchedule(1.0), 10),
            (LinearSchedule(1.0, 0.1, 90), 90),
            (ConstantSchedule(0.2), 0),
        ]
    )
    assert piecewise.bounds() == (0.1, 1.0)
    values = [piecewise.value(step) for step in range(0, 200)]
    assert min(values) >= 0.1 and max(values) <= 1.0
    assert ConstantSchedule(0.3).bounds() == (0.3, 0.3)
    with pytest.raises(InvalidParameter, match="must be a schedule"):
        validate_parameters({"e": TruncatedNormalParameters(noise_schedule=0.1)})  # type: ignore[arg-type]


def test_an_embedder_with_numpy_sizes_is_valid() -> None:
    validate_parameters({"e": InputEmbedderParameters(scheme=[np.int64(8)])})  # type: ignore[list-item]


def test_an_override_of_the_wrong_kind_is_refused_naming_its_path() -> None:
    graph = load_preset("CartPole_DQN").graph_manager
    with pytest.raises(CoachError, match=r"agent\.exploration takes ExplorationParameters"):
        set_parameter(graph.parameters(), "agent.exploration", "0.1")
