"""Unit tests for coach/export/policy.py and the policies' `greedy`: the exported module of
every feed-forward family gives, for raw observations, the environment actions its agent
sends in evaluation (through its filters, with its normalization statistics), bit for bit;
what is no function of one observation is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.agent import Agent
from coach.agents.bc import BCAgentParameters, continuous_bc_network
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.agents.bootstrapped_dqn import BootstrappedDQNAgentParameters
from coach.agents.categorical_dqn import CategoricalDQNAgentParameters
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.ddpg import DDPGAgentParameters
from coach.agents.dfp import DFPAgentParameters
from coach.agents.dqn import DQNAgentParameters
from coach.agents.naf import NAFAgentParameters
from coach.agents.nec import NECAgentParameters
from coach.agents.on_policy import OnPolicyAgentParameters, actor_critic_networks
from coach.agents.parameters import AgentParameters
from coach.agents.policy_gradients import PolicyGradientsAgentParameters
from coach.agents.ppo import PPOAgentParameters
from coach.agents.qr_dqn import QRDQNAgentParameters
from coach.agents.r2d2 import R2D2AgentParameters
from coach.agents.rainbow import RainbowAgentParameters
from coach.agents.sac import SACAgentParameters
from coach.agents.td3 import TD3AgentParameters
from coach.core.action_masks import ACTION_MASK
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.boltzmann import BoltzmannParameters
from coach.exploration.ensemble import UCBParameters
from coach.exploration.ou_process import OUProcessParameters
from coach.exploration.truncated_normal import TruncatedNormalParameters
from coach.export.files import write_onnx
from coach.export.policy import ExportedPolicy
from coach.filters.action import (
    ActionClipToBounds,
    BoxDiscretization,
    BoxMasking,
    FullDiscreteActionSpaceMap,
    LinearBoxToBoxMap,
)
from coach.filters.observation import (
    ObservationClippingFilter,
    ObservationNormalizationFilter,
    ObservationSelectEntriesFilter,
)
from coach.filters.observation.stacking import ObservationStackingFilter
from coach.filters.pipeline import InputFilter, OutputFilter
from coach.memories.rollout import RolloutParameters
from coach.networks.heads import GaussianPolicyHeadParameters
from coach.networks.parameters import RecurrentParameters
from tests.masked_game import ACTIONS, masked_observations

VECTOR = spaces.Dict({"observation": spaces.Box(-5.0, 5.0, (4,), np.float32)})
BOX = spaces.Box(-2.0, 3.0, (2,), np.float32)
"""The continuous environments' actions."""


def small(params: AgentParameters) -> AgentParameters:
    for network in params.network_wrappers.values():
        network.middleware.scheme = [16]
    if isinstance(params, OnPolicyAgentParameters):
        params.memory = RolloutParameters(rollout_length=8)
    return params


def normalized(params: AgentParameters) -> AgentParameters:
    """Normalized, clipped and three of the four entries kept."""
    params.input_filter = InputFilter(
        observation_filters={
            "observation": [
                ObservationClippingFilter(-4.0, 4.5),
                ObservationSelectEntriesFilter([0, 2, 3]),
                ObservationNormalizationFilter(clip=3.0),
            ]
        }
    )
    return small(params)


def continuous_ppo(params: OnPolicyAgentParameters, squash: bool = False) -> AgentParameters:
    params.network_wrappers = actor_critic_networks(GaussianPolicyHeadParameters(), 1e-3)
    params.algorithm.squash_actions = squash
    return normalized(params)


def with_output(params: AgentParameters, *filters: Any) -> AgentParameters:
    params.output_filter = OutputFilter(action_filters=list(filters))
    return params


def with_exploration(params: AgentParameters, exploration: Any) -> AgentParameters:
    params.exploration = exploration
    return params


def bc_continuous() -> AgentParameters:
    params = BCAgentParameters()
    params.network_wrappers["main"] = continuous_bc_network()
    return normalized(params)


DISCRETE: dict[str, Callable[[], AgentParameters]] = {
    # On a game of two observation keys: the network's input and the action mask.
    "DQN": lambda: small(DQNAgentParameters()),
    "DQN-Boltzmann": lambda: small(with_exploration(DQNAgentParameters(), BoltzmannParameters())),
    "C51": lambda: small(CategoricalDQNAgentParameters()),
    "QR-DQN": lambda: small(QRDQNAgentParameters()),
    "Bootstrapped": lambda: small(BootstrappedDQNAgentParameters()),
    "Bootstrapped-UCB": lambda: small(
        with_exploration(BootstrappedDQNAgentParameters(), UCBParameters())
    ),
    "DDQN-BCQ": lambda: small(DDQNBCQAgentParameters()),
    "BC": lambda: small(BCAgentParameters()),
    "ClippedPPO": lambda: small(ClippedPPOAgentParameters()),
    "A2C": lambda: small(ActorCriticAgentParameters()),
    "PG": lambda: small(PolicyGradientsAgentParameters()),
}

CONTINUOUS: dict[str, Callable[[], AgentParameters]] = {
    # On a vector observation, normalized; actions in BOX.
    "SAC": lambda: with_output(normalized(SACAgentParameters()), LinearBoxToBoxMap(-1.0, 1.0)),
    "DDPG": lambda: normalized(DDPGAgentParameters()),
    "DDPG-OU-masked": lambda: with_output(
        normalized(with_exploration(DDPGAgentParameters(), OUProcessParameters())),
        BoxMasking(-1.5, 0.5),
    ),
    "NAF": lambda: normalized(NAFAgentParameters()),
    "TD3-truncated": lambda: normalized(
        with_exploration(
            TD3AgentParameters(), TruncatedNormalParameters(clip_low=-1.0, clip_high=2.7)
        )
    ),
    "ClippedPPO-clipped": lambda: continuous_ppo(ClippedPPOAgentParameters()),
    "ClippedPPO-clip-to-bounds": lambda: with_output(
        continuous_ppo(ClippedPPOAgentParameters()), ActionClipToBounds()
    ),
    "PPO-squashed": lambda: continuous_ppo(PPOAgentParameters(), squash=True),
    "BC": bc_continuous,
    "DQN-discretized": lambda: with_output(normalized(DQNAgentParameters()), BoxDiscretization(5)),
    "A2C-gaussian": lambda: continuous_ppo(ActorCriticAgentParameters()),
    "PG-gaussian": lambda: continuous_ppo(PolicyGradientsAgentParameters()),
}


def build(
    params: AgentParameters, observation_space: spaces.Dict, action_space: spaces.Space[Any]
) -> Agent:
    params.validate()
    agent: Agent = params.agent_class()(params, observation_space, action_space, 2, seed=3)
    rng = np.random.default_rng(4)
    for key, filters in agent.input_filter.observation_filters.items():
        if any(f.per_copy_state for f in filters):
            continue  # a frame stack steps from the first observations of episodes
        # Statistics of observations far from 0 and 1: what a normalization learned.
        learned = rng.normal(1.5, 2.0, (300, *observation_space[key].shape)).astype(np.float32)
        agent.input_filter.filter_observation({key: learned}, update=True)
    return agent


def observations(space: spaces.Dict, count: int = 500) -> dict[str, np.ndarray]:
    space.seed(5)
    drawn = [space.sample() for _ in range(count)]
    return {key: np.stack([d[key] for d in drawn]) for key in space.spaces}


def evaluation_actions(agent: Agent, raw: dict[str, np.ndarray]) -> np.ndarray:
    """What the agent sends to the environment in evaluation, for the raw observations."""
    agent.phase = RunPhase.EVALUATE
    agent.state = agent.input_filter.filter_observation(raw, update=False)
    return agent.act().env_action


def exported_actions(
    agent: Agent, raw: dict[str, np.ndarray], observation_space: spaces.Dict, action_space: Any
) -> np.ndarray:
    policy = ExportedPolicy(agent, observation_space, action_space)
    inputs = [torch.from_numpy(raw[key].astype(np.float32)) for key in policy.keys]
    return policy(*inputs).numpy()


@pytest.mark.parametrize("name", list(DISCRETE))
def test_an_exported_discrete_policy_takes_the_agents_evaluation_actions(name: str) -> None:
    space = masked_observations()
    agent = build(DISCRETE[name](), space, spaces.Discrete(ACTIONS))
    raw = observations(space)
    expected = evaluation_actions(agent, raw)
    got = exported_actions(agent, raw, space, spaces.Discrete(ACTIONS))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)
    legal = raw[ACTION_MASK][np.arange(len(got)), got].astype(bool)
    assert legal[raw[ACTION_MASK].any(axis=1)].all()


@pytest.mark.parametrize("name", list(CONTINUOUS))
def test_an_exported_continuous_policy_sends_the_agents_evaluation_actions(name: str) -> None:
    agent = build(CONTINUOUS[name](), VECTOR, BOX)
    raw = observations(VECTOR)
    raw["observation"] *= 2.0  # beyond the clipping too
    expected = evaluation_actions(agent, raw)
    got = exported_actions(agent, raw, VECTOR, BOX)
    assert got.dtype == np.float32 and got.shape == (500, 2)
    np.testing.assert_array_equal(got, expected)


def test_discrete_actions_of_an_environment_starting_elsewhere_are_its_own() -> None:
    environment = spaces.Discrete(ACTIONS, start=3)
    for params in (DQNAgentParameters(), ClippedPPOAgentParameters()):
        with_output(params, FullDiscreteActionSpaceMap())
        agent = build(small(params), masked_observations(), environment)
        raw = observations(masked_observations())
        got = exported_actions(agent, raw, masked_observations(), environment)
        np.testing.assert_array_equal(got, evaluation_actions(agent, raw))
        assert got.min() >= 3


def test_a_batch_of_any_size_gives_each_row_its_own_action() -> None:
    agent = build(CONTINUOUS["SAC"](), VECTOR, BOX)
    policy = ExportedPolicy(agent, VECTOR, BOX)
    rows = torch.from_numpy(observations(VECTOR, 7)["observation"])
    together = policy(rows)
    for i in range(7):
        torch.testing.assert_close(policy(rows[i : i + 1])[0], together[i], rtol=0, atol=1e-6)


def _recurrent_ppo() -> AgentParameters:
    params = small(ClippedPPOAgentParameters())
    params.network_wrappers["main"].middleware.recurrent = RecurrentParameters(size=8)
    return params


def _stacked_dqn() -> AgentParameters:
    params = small(DQNAgentParameters())
    params.input_filter = InputFilter(
        observation_filters={"observation": [ObservationStackingFilter(3)]}
    )
    return params


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_recurrent_ppo, "recurrent networks \\(main\\): .* hidden state"),
        (lambda: small(R2D2AgentParameters()), "recurrent networks"),
        (lambda: small(RainbowAgentParameters()), "noisy network draws new weights"),
        (_stacked_dqn, "ObservationStackingFilter keeps history per environment copy"),
        (lambda: small(NECAgentParameters()), "NECAgent .* nearest-neighbour searches"),
    ],
)
def test_what_is_no_function_of_one_observation_is_refused(
    make: Callable[[], AgentParameters], reason: str
) -> None:
    agent = build(make(), masked_observations(), spaces.Discrete(ACTIONS))
    with pytest.raises(CoachError, match=reason):
        ExportedPolicy(agent, masked_observations(), spaces.Discrete(ACTIONS))


def test_a_dfp_policy_is_refused_for_its_goal_input() -> None:
    observations = spaces.Dict(
        {
            "observation": spaces.Box(-1.0, 1.0, (3,), np.float32),
            "measurements": spaces.Box(-np.inf, np.inf, (1,), np.float32),
        }
    )
    agent = build(DFPAgentParameters(), observations, spaces.Discrete(ACTIONS))
    with pytest.raises(CoachError, match=r"DFPAgent cannot be exported: .* reads the goal"):
        ExportedPolicy(agent, observations, spaces.Discrete(ACTIONS))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "name", [*(f"discrete:{n}" for n in DISCRETE), *(f"continuous:{n}" for n in CONTINUOUS)]
)
def test_an_onnx_file_of_every_policy_acts_on_a_batch_of_any_size(
    name: str, tmp_path: Path
) -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    kind, family = name.split(":")
    if kind == "discrete":
        space, actions = masked_observations(), spaces.Discrete(ACTIONS)
        agent = build(DISCRETE[family](), space, actions)
    else:
        space, actions = VECTOR, BOX
        agent = build(CONTINUOUS[family](), space, actions)
    policy = ExportedPolicy(agent, space, actions)
    write_onnx(policy, tmp_path / "policy.onnx")
    session = onnxruntime.InferenceSession(str(tmp_path / "policy.onnx"))
    raw = observations(space, 7)
    for batch in (1, 3, 7):
        inputs = {key: raw[key][:batch].astype(np.float32) for key in policy.keys}
        (got,) = session.run(["action"], inputs)
        expected = policy(*(torch.from_numpy(inputs[key]) for key in policy.keys)).numpy()
        assert got.shape == expected.shape and got.shape[0] == batch
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
