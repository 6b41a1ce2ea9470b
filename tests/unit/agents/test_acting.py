"""Unit tests for coach/agents/acting.py with action masks: heatup draws among each row's legal
actions, a Q policy's choice skips the masked ones, a mask that does not fit the action space
is refused, and every discrete-action family acts legally in every phase of a masked game."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.acting import QPolicy
from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.agent import Agent
from coach.agents.bc import BCAgentParameters
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.agents.bootstrapped_dqn import BootstrappedDQNAgentParameters
from coach.agents.categorical_dqn import CategoricalDQNAgentParameters
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.cql import CQLAgentParameters
from coach.agents.ddpg import DDPGAgentParameters
from coach.agents.ddqn import DDQNAgentParameters
from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.agents.n_step_q import NStepQAgentParameters
from coach.agents.on_policy import OnPolicyAgentParameters
from coach.agents.parameters import AgentParameters
from coach.agents.policy_gradients import PolicyGradientsAgentParameters
from coach.agents.ppo import PPOAgentParameters
from coach.agents.qr_dqn import QRDQNAgentParameters
from coach.agents.r2d2 import R2D2AgentParameters
from coach.agents.rainbow import RainbowAgentParameters
from coach.core.action_masks import ACTION_MASK
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.errors import CoachError
from coach.exploration.boltzmann import BoltzmannParameters
from coach.exploration.ensemble import UCBParameters
from coach.memories.rollout import RolloutParameters
from coach.memories.sequence_replay import SequenceReplayParameters
from coach.networks.heads import GaussianPolicyHeadParameters, VHeadParameters
from coach.networks.parameters import NetworkParameters, RecurrentParameters
from tests.masked_game import ACTIONS, MaskedGame, masked_observations


def small(params: AgentParameters) -> AgentParameters:
    """Small networks and memories, short blocks."""
    for network in params.network_wrappers.values():
        network.middleware.scheme = [16]
    params.algorithm.batch_size = 8
    memory: Any = params.memory
    if isinstance(params, OnPolicyAgentParameters):
        params.memory = RolloutParameters(rollout_length=8)
    elif hasattr(memory, "max_size"):
        memory.max_size = 1000
    return params


def r2d2() -> AgentParameters:
    params = R2D2AgentParameters()
    params.memory = SequenceReplayParameters(max_size=2000, sequence_length=8, overlap=4)
    params.algorithm.burn_in = 2
    params.algorithm.batch_size = 4
    params.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
    main = params.network_wrappers["main"]
    main.middleware.recurrent.size = 8  # type: ignore[union-attr]
    main.middleware.scheme = [16]
    return params


def recurrent_ppo() -> AgentParameters:
    params = small(ClippedPPOAgentParameters())
    params.network_wrappers["main"].middleware.recurrent = RecurrentParameters(size=8)
    return params


def boltzmann_dqn() -> AgentParameters:
    params = small(DQNAgentParameters())
    params.exploration = BoltzmannParameters()
    return params


def ucb_bootstrapped() -> AgentParameters:
    params = small(BootstrappedDQNAgentParameters())
    params.exploration = UCBParameters()
    return params


FAMILIES: dict[str, Callable[[], AgentParameters]] = {
    "DQN": lambda: small(DQNAgentParameters()),
    "DQN-Boltzmann": boltzmann_dqn,
    "DDQN": lambda: small(DDQNAgentParameters()),
    "NStepQ": lambda: small(NStepQAgentParameters()),
    "C51": lambda: small(CategoricalDQNAgentParameters()),
    "QR-DQN": lambda: small(QRDQNAgentParameters()),
    "Rainbow": lambda: small(RainbowAgentParameters()),
    "Bootstrapped": lambda: small(BootstrappedDQNAgentParameters()),
    "Bootstrapped-UCB": ucb_bootstrapped,
    "R2D2": r2d2,
    "DDQN-BCQ": lambda: small(DDQNBCQAgentParameters()),
    "CQL": lambda: small(CQLAgentParameters()),
    "BC": lambda: small(BCAgentParameters()),
    "ClippedPPO": lambda: small(ClippedPPOAgentParameters()),
    "RecurrentPPO": recurrent_ppo,
    "PPO": lambda: small(PPOAgentParameters()),
    "A2C": lambda: small(ActorCriticAgentParameters()),
    "PG": lambda: small(PolicyGradientsAgentParameters()),
}


def build(
    params: AgentParameters,
    observation_space: spaces.Dict | None = None,
    action_space: spaces.Space | None = None,
    num_envs: int = 3,
    seed: int = 0,
) -> Agent:
    params.validate()
    return params.agent_class()(
        params,
        observation_space or masked_observations(),
        action_space or spaces.Discrete(ACTIONS),
        num_envs,
        seed=seed,
    )


def play(agent: Agent, game: MaskedGame, phase: RunPhase, steps: int) -> list[np.ndarray]:
    """``steps`` steps of ``game`` in ``phase``; the behaviour probabilities logged of each."""
    agent.phase = phase
    logged = []
    for _ in range(steps):
        info = agent.act()
        if "action_probabilities" in info.extras:
            legal = agent.state[ACTION_MASK].astype(bool)
            logged.append(np.where(legal, np.nan, info.extras["action_probabilities"]))
        agent.observe(game.step(info.env_action))
        agent.train()
    return logged


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_discrete_family_acts_legally_in_every_phase_and_learns(name: str) -> None:
    game = MaskedGame()
    agent = build(FAMILIES[name](), game.observation_space, game.action_space, game.num_envs)
    agent.policy.log_behaviour = name not in ("Bootstrapped", "Bootstrapped-UCB", "R2D2")
    agent.reset(game.reset())
    logged = play(agent, game, RunPhase.HEATUP, 40)
    logged += play(agent, game, RunPhase.TRAIN, 60)
    logged += play(agent, game, RunPhase.EVALUATE, 20)
    assert game.taken == 120 * game.num_envs and game.illegal == 0
    assert agent.training_steps > 0
    for network in agent.networks.values():  # nothing of -inf or nan leaked into learning
        assert all(torch.isfinite(p).all() for p in network.online.parameters())
    # What a dataset would log of the behaviour gives the illegal actions no probability.
    for probabilities in logged:
        assert np.nansum(probabilities) == 0.0


# -- heatup ---------------------------------------------------------------------------------

MASKS = np.array([[1, 0, 1, 0], [0, 0, 0, 1], [0, 1, 1, 1]], dtype=np.int8)


def state(masks: np.ndarray = MASKS) -> dict[str, np.ndarray]:
    return {"observation": masks.astype(np.float32), ACTION_MASK: masks}


@pytest.mark.parametrize("start", [0, 2])
def test_heatup_actions_are_uniform_over_each_rows_legal_actions(start: int) -> None:
    agent = build(small(DQNAgentParameters()), action_space=spaces.Discrete(ACTIONS, start=start))
    draws = 3000
    actions = (
        np.stack([agent.policy.act(state(), RunPhase.HEATUP).action for _ in range(draws)]) - start
    )
    for row, mask in enumerate(MASKS):
        frequencies = np.bincount(actions[:, row], minlength=ACTIONS) / draws
        assert frequencies[mask == 0].sum() == 0.0
        np.testing.assert_allclose(frequencies, mask / mask.sum(), atol=0.03)


def test_heatup_logs_the_uniform_legal_probabilities() -> None:
    agent = build(small(ClippedPPOAgentParameters()))
    agent.policy.log_behaviour = True
    info = agent.policy.act(state(), RunPhase.HEATUP)
    np.testing.assert_allclose(
        info.extras["action_probabilities"],
        [[0.5, 0, 0.5, 0], [0, 0, 0, 1], [0, 1 / 3, 1 / 3, 1 / 3]],
    )


def test_heatup_without_a_mask_draws_its_blocks_as_before() -> None:
    observations = spaces.Dict({"observation": spaces.Box(0.0, 1.0, (ACTIONS,), np.float32)})
    agent = build(small(DQNAgentParameters()), observations)
    assert not agent.policy.action_mask
    first = agent.policy.act({"observation": np.zeros((3, ACTIONS))}, RunPhase.HEATUP).action
    block = agent.policy.state_dict()["random_block"]
    assert block.shape == (1024, 3) and np.array_equal(first, block[0])


# -- a Q policy ----------------------------------------------------------------------------


def fixed_q(agent: DQNAgent, values: list[float]) -> None:
    """Q-values ``values`` in every state: the head's weights zero, its biases the values."""
    head = agent.q_network.online.heads[0]
    with torch.no_grad():
        head.weight.zero_()
        head.bias.copy_(torch.tensor(values))


def test_the_q_policy_skips_a_masked_action_with_the_highest_value() -> None:
    agent = build(small(DQNAgentParameters()))
    assert isinstance(agent, DQNAgent) and isinstance(agent.policy, QPolicy)
    fixed_q(agent, [1.0, 2.0, 3.0, 4.0])  # action 3 is best, and masked in rows 0 and 2
    masks = np.array([[1, 1, 1, 0], [0, 0, 0, 1], [1, 1, 0, 0], [0, 0, 0, 0]], dtype=np.int8)
    info = agent.policy.act(state(masks), RunPhase.EVALUATE)
    # The best legal action; a row with none legal is not constrained.
    assert info.action.tolist() == [2, 3, 1, 3]
    assert info.action_values is not None
    assert np.isneginf(info.action_values[0, 3]) and info.action_values[0, 2] == 3.0


def test_the_exploration_takes_masked_values_only_with_a_mask() -> None:
    masked = build(small(DQNAgentParameters()))
    assert masked.exploration is not None and masked.exploration.masked
    observations = spaces.Dict({"observation": spaces.Box(0.0, 1.0, (ACTIONS,), np.float32)})
    plain = build(small(DQNAgentParameters()), observations)
    assert plain.exploration is not None and not plain.exploration.masked


def test_an_ensembles_heads_all_skip_the_masked_actions() -> None:
    agent = build(small(BootstrappedDQNAgentParameters()))
    with torch.no_grad():
        for head in agent.q_network.online.heads[0].heads:
            head.advantage.weight.zero_()
            head.advantage.bias.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    masks = np.array([[1, 1, 1, 0]] * 3, dtype=np.int8)
    for phase in (RunPhase.TRAIN, RunPhase.EVALUATE):
        assert agent.policy.act(state(masks), phase).action.tolist() == [2, 2, 2]


def test_off_policy_evaluation_gives_masked_actions_no_probability() -> None:
    agent = build(small(DQNAgentParameters()))
    assert isinstance(agent, DQNAgent)
    fixed_q(agent, [1.0, 2.0, 3.0, 4.0])
    q, probabilities = agent.evaluation_policy(state())
    assert np.isfinite(q).all()  # the network's values, as they are
    np.testing.assert_array_equal(probabilities, [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1]])


# -- masks that do not fit --------------------------------------------------------------------


def test_a_mask_of_another_length_is_refused_at_construction() -> None:
    with pytest.raises(CoachError, match=r"shape \(5,\).*Discrete\(4\) has 4 actions"):
        build(small(DQNAgentParameters()), masked_observations(mask_length=5))


def continuous_ppo() -> AgentParameters:
    params = small(ClippedPPOAgentParameters())
    params.network_wrappers = {
        "main": NetworkParameters(heads=[GaussianPolicyHeadParameters(), VHeadParameters()])
    }
    return params


@pytest.mark.parametrize("make", [continuous_ppo, DDPGAgentParameters], ids=["PPO", "DDPG"])
def test_a_mask_on_continuous_actions_is_refused_at_construction(
    make: Callable[[], AgentParameters],
) -> None:
    with pytest.raises(CoachError, match=r"shape \(4,\).*Box.*\(shape \(4,\)\) is not Discrete"):
        build(make(), action_space=spaces.Box(-1.0, 1.0, (ACTIONS,), np.float32))
