"""Unit tests for coach/agents/nec.py: n-step returns by hand (bootstraps, episode ends,
cuts), an ended episode entering the dictionaries and the replay with its returns, a
gradient step's loss and its reach (network, keys, values), training waiting for k entries,
checkpoints and determinism. The dictionary itself: tests/unit/memories/test_dnd.py."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.agent import Agent
from coach.agents.nec import NEC_RETURN, NECAgent, NECAgentParameters, n_step_returns
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.core.types import ActionInfo, Batch, Transition
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.memories.dnd import kernel_values
from coach.parameters import set_parameter
from coach.validation import InvalidParameter
from tests.unit.agents.seeded import after_run, main_weights, short_schedule

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (4,), np.float32)})
ACTIONS = spaces.Discrete(2)
G = 0.5


def test_n_step_returns_by_hand() -> None:
    rewards = np.array([1.0, 2.0, 3.0, 4.0])
    bootstraps = np.array([10.0, 20.0, 30.0, 40.0])  # max_b Q(s_t, b)
    terminated = n_step_returns(rewards, bootstraps, G, n=2, final=0.0)
    np.testing.assert_allclose(
        terminated, [1 + G * 2 + G**2 * 30, 2 + G * 3 + G**2 * 40, 3 + G * 4, 4]
    )
    cut = n_step_returns(rewards, bootstraps, G, n=2, final=8.0)  # the state after the cut
    np.testing.assert_allclose(
        cut, [1 + G * 2 + G**2 * 30, 2 + G * 3 + G**2 * 40, 3 + G * 4 + G**2 * 8, 4 + G * 8]
    )
    # n longer than the episode: Monte Carlo returns (bootstrapped after a cut).
    np.testing.assert_allclose(n_step_returns(rewards[:2], bootstraps[:2], G, 100, 0.0), [2.0, 2.0])


def _params(k: int = 2) -> NECAgentParameters:
    params = NECAgentParameters()
    params.algorithm.discount = G
    params.algorithm.n_step = 2
    params.algorithm.number_of_knn = k
    params.algorithm.dnd_size = 50
    params.algorithm.batch_size = 4
    params.memory.max_size = 100  # type: ignore[union-attr]
    params.network_wrappers["main"].middleware.scheme = [16]
    params.network_wrappers["main"].heads[0].size = 8  # type: ignore[attr-defined]
    return params


def _step(t: int, action: int, reward: float, ended: bool) -> Transition:
    observation = np.full((1, 4), t / 10, dtype=np.float32)
    return Transition(
        {"observation": observation},
        np.array([action]),
        np.array([reward], dtype=np.float32),
        {"observation": observation + 0.1},
        np.array([ended]),
        np.zeros(1, dtype=bool),
    )


def _keys(agent: NECAgent, observation: np.ndarray) -> torch.Tensor:
    with torch.no_grad():
        return agent.networks["main"].online({"observation": torch.as_tensor(observation)})["key"]


def test_an_ended_episode_enters_the_dictionaries_and_the_replay() -> None:
    agent = NECAgent(_params(), OBSERVATIONS, ACTIONS, 1, seed=0)
    memory = agent.memory
    assert memory is not None
    info = ActionInfo(np.array([0]))
    steps = [_step(0, 0, 1.0, False), _step(1, 1, 2.0, False), _step(2, 0, 4.0, True)]
    for step in steps[:2]:
        agent.store(step, info)
    assert len(memory) == 0 and agent.dnd.sizes == [0, 0]  # the episode is open
    agent.store(steps[2], info)
    # Empty dictionaries answer 0: the returns are the rewards' alone.
    expected = [1 + G * 2, 2 + G * 4, 4.0]
    np.testing.assert_allclose(memory.get(np.arange(3)).extras[NEC_RETURN], expected)  # type: ignore[attr-defined]
    assert agent.dnd.sizes == [2, 1]
    # The keys entered are the network's for those states, the values their returns.
    observations = np.concatenate([s.state["observation"] for s in steps])
    keys = _keys(agent, observations)
    q = agent.dnd.q_values(keys).numpy()
    assert q[1, 1] == pytest.approx(expected[1], rel=1e-5)  # the only entry of action 1
    # A second episode bootstraps from the dictionaries as they are.
    second = [_step(3, 1, 1.0, False), _step(4, 0, 1.0, False), _step(5, 1, 1.0, True)]
    later = _keys(agent, np.full((1, 4), 0.5, dtype=np.float32))
    bootstrap = float(agent.dnd.q_values(later).max())
    for step in second:
        agent.store(step, info)
    returns = memory.get(np.arange(3, 6)).extras[NEC_RETURN]  # type: ignore[attr-defined]
    assert returns[0] == pytest.approx(1 + G * 1 + G**2 * bootstrap, rel=1e-5)


def test_a_gradient_step_reaches_the_network_keys_and_values() -> None:
    agent = NECAgent(_params(), OBSERVATIONS, ACTIONS, 1, seed=0)
    info = ActionInfo(np.array([0]))
    for episode in range(3):
        for t in range(4):
            agent.store(_step(t + episode, t % 2, 1.0, t == 3), info)
    rng = np.random.default_rng(0)
    b = Batch(
        states={"observation": rng.uniform(-1, 1, (4, 4)).astype(np.float32)},
        actions=np.array([0, 1, 1, 0]),
        rewards=np.zeros(4, dtype=np.float32),
        next_states={},
        terminated=np.zeros(4, dtype=bool),
        truncated=np.zeros(4, dtype=bool),
        extras={NEC_RETURN: np.array([1.0, 2.0, 0.5, 1.5], dtype=np.float32)},
    )
    keys = _keys(agent, b.states["observation"])
    q = np.array(
        [agent.dnd.q_values(keys[i : i + 1])[0, a].item() for i, a in enumerate(b.actions)]
    )
    before = [p.detach().clone() for p in agent.networks["main"].online.parameters()]
    tables = [(t.keys[: t.size].clone(), t.values[: t.size].clone()) for t in agent.dnd.tables]
    losses = agent.learner.learn(b)  # type: ignore[union-attr]
    expected = np.mean((q - b.extras[NEC_RETURN]) ** 2)
    assert float(losses["q_loss"]) == pytest.approx(expected, rel=1e-4)
    after = list(agent.networks["main"].online.parameters())
    assert all(not torch.equal(x, y) for x, y in zip(before, after, strict=True))
    for (keys_before, values_before), table in zip(tables, agent.dnd.tables, strict=True):
        assert not torch.equal(keys_before, table.keys[: table.size])  # SGD moved the keys
        assert not torch.equal(values_before, table.values[: table.size])  # and the values


def test_kernel_of_the_learning_lookup_matches_acting() -> None:
    queries = torch.tensor([[0.0, 0.0]])
    keys = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]])
    values = torch.tensor([[3.0, 6.0]])
    # Weights 1/(1+d) and 1/(4+d), d = 1e-3, normalised.
    w = np.array([1 / 1.001, 1 / 4.001])
    expected = (w / w.sum() * [3.0, 6.0]).sum()
    assert kernel_values(queries, keys, values, 1e-3).item() == pytest.approx(expected, rel=1e-6)


def test_training_waits_for_k_entries_in_every_dictionary() -> None:
    params = _params(k=3)
    params.algorithm.num_consecutive_playing_steps = EnvironmentSteps(1)
    agent = NECAgent(params, OBSERVATIONS, ACTIONS, 1, seed=0)
    info = ActionInfo(np.array([0]))
    for t in range(6):  # action 0 gets 3 entries, action 1 gets 3: but the last episode is open
        agent.store(_step(t, t % 2, 1.0, t == 3), info)
    agent.phase = RunPhase.TRAIN
    agent.training_env_steps = 6
    assert agent.dnd.sizes == [2, 2] and agent.train() == 0
    assert agent.training_rounds == 6  # the rounds due were skipped, not saved up
    agent.store(_step(6, 0, 1.0, False), info)
    agent.store(_step(7, 1, 1.0, True), info)
    agent.training_env_steps = 8
    assert agent.dnd.sizes == [4, 4] and agent.train() == 2


def test_nec_refuses_what_it_cannot_do() -> None:
    # NEC bootstraps from its dictionaries: there is no double_q to set.
    with pytest.raises(CoachError, match=r"agent\.algorithm has no field 'double_q'"):
        set_parameter({"agent": NECAgentParameters()}, "agent.algorithm.double_q", "True")
    params = NECAgentParameters()
    params.algorithm.number_of_knn = 10
    params.algorithm.dnd_size = 5
    with pytest.raises(InvalidParameter, match="number_of_knn"):
        params.algorithm.validate()
    params = NECAgentParameters()
    params.network_wrappers["main"].heads = []
    with pytest.raises(InvalidParameter):
        params.validate()


def test_checkpoint_round_trip_and_same_seed_same_numbers(tmp_path: Path) -> None:
    probe = torch.linspace(-1, 1, 4 * 8).view(8, 4)

    def read(agent: Agent) -> tuple[int, torch.Tensor, torch.Tensor, dict]:
        steps, weights = main_weights(agent)
        with torch.no_grad():
            values = agent.action_values(agent.networks["main"].online({"observation": probe}))  # type: ignore[attr-defined]
        return steps, weights, values, copy.deepcopy(agent.state_dict())

    environment = GymEnvironmentParameters(level="CartPole-v1")
    runs = []
    for i, seed in enumerate((0, 0, 1)):
        params = _params(k=5)
        params.algorithm.n_step = 10
        runs.append(
            after_run(params, environment, short_schedule(400), seed, tmp_path / str(i), read)
        )
    assert (
        runs[0][0] > 0
        and torch.equal(runs[0][1], runs[1][1])
        and torch.equal(runs[0][2], runs[1][2])
    )
    assert not torch.equal(runs[0][1], runs[2][1])
    # A fresh agent loaded from the first run's state answers as it did.
    fresh = NECAgent(_params(k=5), OBSERVATIONS, ACTIONS, 1, seed=7)
    fresh.load_state_dict(runs[0][3])
    with torch.no_grad():
        values = fresh.action_values(fresh.networks["main"].online({"observation": probe}))
    torch.testing.assert_close(values, runs[0][2])
