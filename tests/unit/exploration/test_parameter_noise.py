"""Unit tests for coach/exploration/parameter_noise.py: every dense layer perturbed, acting on
the perturbed network in training and the clean one in evaluation, the distances and the
adaptation of the noise by hand, a new perturbation per episode, checkpoints, and the
command-line override."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.ddpg import DDPGAgentParameters
from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.parameter_noise import (
    ParameterNoise,
    ParameterNoiseParameters,
    perturb,
)
from coach.networks.parameters import MiddlewareParameters
from coach.parameters import set_parameter

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (4,), np.float32)})
STATE = {"observation": np.array([[0.1, -0.2, 0.3, 0.4], [0.5, 0.0, -0.5, 0.2]], np.float32)}


def _dqn(seed: int = 0, **noise: float) -> DQNAgent:
    params = DQNAgentParameters()
    params.network_wrappers["main"].middleware = MiddlewareParameters(scheme=[16])
    params.exploration = ParameterNoiseParameters(**noise)  # type: ignore[arg-type]
    agent = DQNAgent(params, OBSERVATIONS, spaces.Discrete(3), 2, seed=seed)
    agent.phase = RunPhase.TRAIN
    return agent


def test_every_linear_layer_is_perturbed_the_same_way_from_the_same_seed() -> None:
    module = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    before = [p.detach().clone() for p in module.parameters()]
    perturb(module, 0.1, np.random.default_rng(0))
    moved = [p.detach() - b for p, b in zip(module.parameters(), before, strict=True)]
    assert all(bool((m != 0).all()) for m in moved)  # weights and biases of both layers
    assert 0.05 < float(torch.cat([m.flatten() for m in moved]).std()) < 0.15
    again = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    again.load_state_dict({k: v for k, v in zip(again.state_dict(), before, strict=True)})
    perturb(again, 0.1, np.random.default_rng(0))
    for a, b in zip(again.parameters(), module.parameters(), strict=True):
        assert torch.equal(a, b)


def test_training_acts_on_the_perturbed_network_and_evaluation_on_the_clean_one() -> None:
    agent = _dqn(initial_std=1.0)
    network = agent.networks["main"]
    inputs = {"observation": torch.as_tensor(STATE["observation"])}
    clean = network(inputs)["q"].argmax(dim=1).numpy()
    assert agent.policy.act(STATE, RunPhase.EVALUATE).action.tolist() == clean.tolist()
    trained = agent.policy.act(STATE, RunPhase.TRAIN).action
    noise = agent.exploration
    assert isinstance(noise, ParameterNoise) and noise.perturbed is not None
    perturbed = noise.perturbed(inputs)["q"].argmax(dim=1).numpy()
    assert trained.tolist() == perturbed.tolist()
    assert not agent.policy.perturbs  # only while deciding
    online = network.online.state_dict()
    assert any(not torch.equal(v, online[k]) for k, v in noise.perturbed.state_dict().items())


def test_the_discrete_target_is_the_kl_of_epsilon_greedy() -> None:
    noise = ParameterNoise(spaces.Discrete(4), np.random.default_rng(0), ParameterNoiseParameters())
    assert noise.target == pytest.approx(-math.log(1 - 0.1 + 0.1 / 4))


def test_adaptation_by_hand() -> None:
    params = ParameterNoiseParameters(initial_std=0.2, adaptation_coefficient=1.5)
    noise = ParameterNoise(spaces.Discrete(2), np.random.default_rng(0), params)
    clean = torch.tensor([[0.0, 0.0]])
    noisy = torch.tensor([[0.0, 3.0]])
    noise.adapt(clean, noisy)  # KL(1/2, 1/2 || softmax(0, 3))
    p = np.exp([0.0, 3.0]) / np.exp([0.0, 3.0]).sum()
    assert noise.distance == pytest.approx(0.5 * math.log(0.5 / p[0]) + 0.5 * math.log(0.5 / p[1]))
    assert noise.std == pytest.approx(0.2 / 1.5)  # too far: less noise
    noise.adapt(clean, clean)
    assert noise.std == pytest.approx(0.2)  # too close: more
    box = ParameterNoise(spaces.Box(-1, 1, (2,)), np.random.default_rng(0), params)
    box.adapt(torch.tensor([[0.0, 0.0]]), torch.tensor([[0.3, 0.4]]))
    assert box.distance == pytest.approx(math.sqrt((0.09 + 0.16) / 2))
    assert box.std == pytest.approx(0.2 / 1.5)  # 0.354 > 0.2


def test_adapts_every_period_and_draws_a_new_perturbation_when_an_episode_ends() -> None:
    agent = _dqn(adaptation_period=3)
    noise = agent.exploration
    assert isinstance(noise, ParameterNoise)
    for _ in range(3):
        agent.policy.act(STATE, RunPhase.TRAIN)
    assert noise.std != 0.1 and noise.distance > 0
    first = noise.perturbed
    agent.policy.act(STATE, RunPhase.TRAIN)
    assert noise.perturbed is first
    noise.episode_ended(np.array([False, True]))
    agent.policy.act(STATE, RunPhase.TRAIN)
    assert noise.perturbed is not first


def test_a_checkpoint_keeps_the_perturbation_and_the_noise() -> None:
    agent = _dqn()
    for _ in range(60):
        agent.policy.act(STATE, RunPhase.TRAIN)
    state = agent.policy.state_dict()
    after = [agent.policy.act(STATE, RunPhase.TRAIN).action.tolist() for _ in range(5)]
    other = _dqn(seed=3)
    other.networks["main"].online.load_state_dict(agent.networks["main"].online.state_dict())
    other.policy.load_state_dict(state)
    assert [other.policy.act(STATE, RunPhase.TRAIN).action.tolist() for _ in range(5)] == after
    noise = other.exploration
    assert isinstance(noise, ParameterNoise) and noise.std == state["exploration"]["std"]


def test_a_deterministic_actor_explores_by_its_perturbed_copy() -> None:
    params = DDPGAgentParameters()
    params.exploration = ParameterNoiseParameters(initial_std=0.5)
    agent = params.agent_class()(params, OBSERVATIONS, spaces.Box(-1, 1, (2,), np.float32), 2, 0)
    agent.phase = RunPhase.TRAIN
    greedy = agent.policy.act(STATE, RunPhase.EVALUATE).action
    explored = agent.policy.act(STATE, RunPhase.TRAIN).action
    assert explored.shape == (2, 2) and not np.allclose(explored, greedy)
    assert np.all(np.abs(explored) <= 1.0)


def test_refusals() -> None:
    with pytest.raises(CoachError, match="Discrete or a bounded Box"):
        ParameterNoise(
            spaces.Box(-np.inf, np.inf, (2,)), np.random.default_rng(0), ParameterNoiseParameters()
        )
    noise = ParameterNoise(spaces.Discrete(2), np.random.default_rng(0), ParameterNoiseParameters())
    with pytest.raises(CoachError, match="bootstrapped or UCB"):
        noise.get_action(np.zeros((1, 3, 2)), RunPhase.TRAIN)


def test_an_override_puts_it_on_any_agent() -> None:
    params = DQNAgentParameters()
    set_parameter({"agent": params}, "agent.exploration", "ParameterNoiseParameters(epsilon=0.05)")
    assert params.exploration == ParameterNoiseParameters(epsilon=0.05)
