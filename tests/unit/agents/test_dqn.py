"""Unit tests for coach/agents/dqn.py: DQN's TD targets, losses, determinism and heatup."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.core.action_masks import ACTION_MASK
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps, TrainingSteps
from coach.core.types import Batch
from coach.errors import CoachError
from coach.parameter_tree import validate_parameters

OBSERVATION_SPACE = spaces.Dict(
    {"observation": spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32)}
)
ACTION_SPACE = spaces.Discrete(3)


def _params(discount: float = 0.99, loss: str = "huber") -> DQNAgentParameters:
    params = DQNAgentParameters()
    params.algorithm.discount = discount
    params.algorithm.loss = loss
    params.memory.max_size = 100
    params.network_wrappers["main"].middleware.scheme = [16]
    return params


def _agent(
    params: DQNAgentParameters | None = None,
    seed: int = 0,
    num_envs: int = 1,
    action_space: spaces.Space = ACTION_SPACE,
) -> DQNAgent:
    return DQNAgent(params or _params(), OBSERVATION_SPACE, action_space, num_envs, seed=seed)


def _batch(
    n: int = 8,
    seed: int = 0,
    terminated: list[bool] | None = None,
    truncated: list[bool] | None = None,
    start: int = 0,
) -> Batch:
    rng = np.random.default_rng(seed)
    return Batch(
        states={"observation": rng.uniform(-1, 1, (n, 4)).astype(np.float32)},
        actions=rng.integers(0, 3, n) + start,
        rewards=rng.normal(0.0, 2.0, n).astype(np.float32),
        next_states={"observation": rng.uniform(-1, 1, (n, 4)).astype(np.float32)},
        terminated=np.array(terminated if terminated is not None else [False] * n),
        truncated=np.array(truncated if truncated is not None else [False] * n),
    )


def _q(module: torch.nn.Module, observation: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return module({"observation": torch.as_tensor(observation)})["q"].numpy().astype(np.float64)


def _huber(d: np.ndarray) -> float:
    return float(np.mean(np.where(np.abs(d) < 1.0, 0.5 * d**2, np.abs(d) - 0.5)))


def _mse(d: np.ndarray) -> float:
    return float(np.mean(d**2))


LOSSES = {"huber": _huber, "mse": _mse}


def _expected_loss(
    agent: DQNAgent, batch: Batch, discount: float, loss: str, bootstrap: np.ndarray
) -> float:
    """The TD loss written out by hand, bootstrapping where ``bootstrap`` is true."""
    rows = np.arange(len(batch))
    q = _q(agent.q_network.online, batch.states["observation"])
    q_taken = q[rows, batch.actions - agent.action_space.start]
    next_q = _q(agent.q_network.target, batch.next_states["observation"]).max(axis=1)
    target = batch.rewards + discount * np.where(bootstrap, next_q, 0.0)
    return LOSSES[loss](q_taken - target)


def _shift_target(agent: DQNAgent, amount: float = 3.0) -> None:
    """Make the target network differ from the online one (as between two syncs)."""
    assert agent.q_network.target is not None
    with torch.no_grad():
        agent.q_network.target.heads[0].bias.add_(amount)


# -- the TD loss --------------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["huber", "mse"])
def test_with_discount_zero_the_target_is_the_reward(loss: str) -> None:
    agent = _agent(_params(discount=0.0, loss=loss))
    _shift_target(agent)
    batch = _batch()
    q = _q(agent.q_network.online, batch.states["observation"])
    q_taken = q[np.arange(len(batch)), batch.actions]

    losses = agent.learner.learn(batch)

    assert losses["q_loss"] == pytest.approx(LOSSES[loss](q_taken - batch.rewards), rel=1e-5)
    assert losses["q_mean"] == pytest.approx(q_taken.mean(), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("loss", ["huber", "mse"])
def test_terminated_rows_do_not_bootstrap_and_truncated_rows_do(loss: str) -> None:
    discount = 0.9
    agent = _agent(_params(discount=discount, loss=loss))
    _shift_target(agent)
    terminated = [False, True, False, True, False, True]
    truncated = [False, False, True, True, False, False]
    batch = _batch(6, seed=1, terminated=terminated, truncated=truncated)
    right = _expected_loss(agent, batch, discount, loss, ~batch.terminated)
    # What a learner that also cut truncated rows would compute: the test can tell them apart.
    wrong = _expected_loss(agent, batch, discount, loss, ~(batch.terminated | batch.truncated))
    assert abs(right - wrong) > 1e-3

    losses = agent.learner.learn(batch)

    assert losses["q_loss"] == pytest.approx(right, rel=1e-5)


@pytest.mark.parametrize(
    ("terminated", "truncated", "bootstraps"),
    [(False, False, True), (True, False, False), (False, True, True), (True, True, False)],
)
def test_each_kind_of_row_on_its_own(terminated: bool, truncated: bool, bootstraps: bool) -> None:
    discount = 0.5
    agent = _agent(_params(discount=discount, loss="mse"))
    _shift_target(agent, 10.0)
    batch = _batch(1, seed=2, terminated=[terminated], truncated=[truncated])
    expected = _expected_loss(agent, batch, discount, "mse", np.array([bootstraps]))
    other = _expected_loss(agent, batch, discount, "mse", np.array([not bootstraps]))
    assert abs(expected - other) > 1e-2
    assert agent.learner.learn(batch)["q_loss"] == pytest.approx(expected, rel=1e-5)


def test_bootstrapping_uses_the_target_network() -> None:
    discount = 0.9
    agent = _agent(_params(discount=discount, loss="mse"))
    _shift_target(agent, 5.0)
    batch = _batch(4, seed=3)
    from_target = _expected_loss(agent, batch, discount, "mse", np.ones(4, dtype=bool))
    assert agent.learner.learn(batch)["q_loss"] == pytest.approx(from_target, rel=1e-5)


def test_actions_are_taken_relative_to_the_space_start() -> None:
    space = spaces.Discrete(3, start=1)
    agent = _agent(_params(discount=0.0, loss="mse"), action_space=space)
    batch = _batch(8, seed=4, start=1)
    assert set(batch.actions.tolist()) <= {1, 2, 3}
    q = _q(agent.q_network.online, batch.states["observation"])
    expected = _mse(q[np.arange(8), batch.actions - 1] - batch.rewards)
    assert agent.learner.learn(batch)["q_loss"] == pytest.approx(expected, rel=1e-5)


def test_learn_from_batch_takes_a_gradient_step_on_the_online_network_only() -> None:
    agent = _agent()
    batch = _batch()
    online_before = _q(agent.q_network.online, batch.states["observation"])
    target_before = _q(agent.q_network.target, batch.states["observation"])
    agent.learner.learn(batch)
    assert not np.allclose(_q(agent.q_network.online, batch.states["observation"]), online_before)
    np.testing.assert_array_equal(
        _q(agent.q_network.target, batch.states["observation"]), target_before
    )


def test_an_unknown_loss_is_refused() -> None:
    with pytest.raises(CoachError, match=r"agent\.algorithm\.loss must be one of 'huber', 'mse'"):
        validate_parameters({"agent": _params(loss="l1")})


def test_target_syncs_follow_the_training_env_steps() -> None:
    params = _params()
    params.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(10)
    agent = _agent(params)
    agent.learner.learn(_batch())
    online_state = {k: v.clone() for k, v in agent.q_network.online.state_dict().items()}
    agent.training_env_steps = 9
    agent.learner.end_round(agent.clock())
    assert agent.learner.target_syncs == 0
    assert not torch.equal(agent.q_network.target.heads[0].bias, online_state["heads.0.bias"])
    agent.training_env_steps = 25
    agent.learner.end_round(agent.clock())
    assert agent.learner.target_syncs == 2
    assert torch.equal(agent.q_network.target.heads[0].bias, online_state["heads.0.bias"])
    assert agent.state_dict()["learner"]["target_syncs"] == 2


def test_a_target_update_rate_moves_the_target_part_of_the_way() -> None:
    params = _params()
    params.algorithm.num_steps_between_copying_online_weights_to_target = TrainingSteps(1)
    params.algorithm.target_update_rate = 0.25
    agent = _agent(params)
    before = agent.q_network.target.heads[0].bias.clone()
    agent.learner.learn(_batch())
    online = agent.q_network.online.heads[0].bias.detach().clone()
    agent.training_steps = 1
    agent.learner.end_round(agent.clock())
    expected = before + 0.25 * (online - before)
    torch.testing.assert_close(agent.q_network.target.heads[0].bias, expected)
    assert not torch.equal(online, before)


@pytest.mark.parametrize("rate", [0.0, 1.5])
def test_a_target_update_rate_outside_0_1_is_refused(rate: float) -> None:
    params = _params()
    params.algorithm.target_update_rate = rate
    with pytest.raises(CoachError, match=r"target_update_rate must be in \(0, 1\]"):
        validate_parameters({"agent": params})


# -- determinism --------------------------------------------------------------------------


def test_same_seed_same_q_values_and_losses() -> None:
    a, b, c = _agent(seed=0), _agent(seed=0), _agent(seed=1)
    probe = _batch(16, seed=99).states["observation"]
    np.testing.assert_array_equal(_q(a.q_network.online, probe), _q(b.q_network.online, probe))
    assert not np.array_equal(_q(a.q_network.online, probe), _q(c.q_network.online, probe))

    losses_a, losses_b = [], []
    for step in range(5):
        batch = _batch(8, seed=step, terminated=[step % 2 == 0] + [False] * 7)
        losses_a.append(a.learner.learn(batch))
        losses_b.append(b.learner.learn(batch))
        if step == 2:
            a.q_network.update_target()
            b.q_network.update_target()
    assert losses_a == losses_b
    np.testing.assert_array_equal(_q(a.q_network.online, probe), _q(b.q_network.online, probe))
    np.testing.assert_array_equal(_q(a.q_network.target, probe), _q(b.q_network.target, probe))


# -- acting -------------------------------------------------------------------------------


def _heatup_actions(agent: DQNAgent, steps: int) -> np.ndarray:
    assert agent.phase is RunPhase.HEATUP
    return np.stack([agent.act().action.copy() for _ in range(steps)])


@pytest.mark.parametrize("start", [0, 2])
def test_heatup_acts_randomly_in_the_action_space(start: int) -> None:
    space = spaces.Discrete(3, start=start)
    agent = _agent(num_envs=3, action_space=space)
    actions = _heatup_actions(agent, 300)
    assert actions.shape == (300, 3)
    assert set(actions.ravel().tolist()) == {start, start + 1, start + 2}
    for column in actions.T:
        np.testing.assert_allclose(
            np.bincount(column - start, minlength=3) / 300, np.full(3, 1 / 3), atol=0.1
        )
    np.testing.assert_array_equal(agent.last_info.action, actions[-1])


def test_heatup_is_reproducible_by_seed() -> None:
    a = _heatup_actions(_agent(seed=7, num_envs=3), 50)
    b = _heatup_actions(_agent(seed=7, num_envs=3), 50)
    c = _heatup_actions(_agent(seed=8, num_envs=3), 50)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # The copies draw different actions, not one action broadcast over them.
    assert not np.array_equal(a[:, 0], a[:, 1])


def test_evaluation_acts_greedily_on_the_q_values() -> None:
    agent = _agent(num_envs=4)
    agent.phase = RunPhase.EVALUATE
    agent.state = {"observation": _batch(4, seed=5).states["observation"]}
    info = agent.act()
    assert info.action_values is not None
    assert info.action_values.shape == (4, 3)
    np.testing.assert_array_equal(info.action, info.action_values.argmax(axis=1))
    np.testing.assert_allclose(
        info.action_values, _q(agent.q_network.online, agent.state["observation"]), rtol=1e-6
    )
    assert agent.exploration.steps == 0


# -- action masks: the bootstrap's max and argmax run over the legal next actions ------------

MASKED_SPACE = spaces.Dict(
    {
        "observation": spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32),
        ACTION_MASK: spaces.Box(0, 1, shape=(3,), dtype=np.int8),
    }
)


def _masked_batch(chooser: np.ndarray) -> tuple[Batch, np.ndarray]:
    """Six rows whose next-state masks rule out the action ``chooser`` (Q-values (6, A) of
    the next states) ranks first, except: row 3 terminates in a state with no legal action,
    row 4 has none legal but goes on (not constrained), row 5 has every action legal.
    Returns the batch and the legal next actions, as the learner should count them."""
    batch = _batch(6, seed=5, terminated=[False, False, False, True, False, False])
    masks = np.ones((6, 3), dtype=np.int8)
    masks[np.arange(3), chooser[:3].argmax(axis=1)] = 0
    masks[3:5] = 0
    legal = masks.astype(bool)
    legal[3:5] = True
    batch.states[ACTION_MASK] = np.ones((6, 3), dtype=np.int8)
    batch.next_states[ACTION_MASK] = masks
    return batch, legal


@pytest.mark.parametrize("double_q", [False, True], ids=["DQN", "DDQN"])
def test_masked_next_actions_do_not_count_in_the_target(double_q: bool) -> None:
    discount = 0.9
    params = _params(discount=discount, loss="mse")
    params.algorithm.double_q = double_q
    agent = DQNAgent(params, MASKED_SPACE, ACTION_SPACE, 1, seed=0)
    _shift_target(agent, 1.0)
    with torch.no_grad():  # the target network ranks the actions otherwise than the online
        agent.q_network.target.heads[0].bias.mul_(-1.0)
    rows = np.arange(6)
    probe = _batch(6, seed=5)
    next_online = _q(agent.q_network.online, probe.next_states["observation"])
    next_target = _q(agent.q_network.target, probe.next_states["observation"])
    batch, legal = _masked_batch(next_online if double_q else next_target)
    # By hand: the best legal next action, picked by the online network (double Q) or the
    # target, valued by the target; nothing bootstrapped after the terminal row.
    chooser = np.where(legal, next_online if double_q else next_target, -np.inf)
    next_values = next_target[rows, chooser.argmax(axis=1)]
    q = _q(agent.q_network.online, batch.states["observation"])[rows, batch.actions]
    target = batch.rewards + discount * np.where(batch.terminated, 0.0, next_values)
    expected = _mse(q - target)
    unmasked = next_target[rows, (next_online if double_q else next_target).argmax(axis=1)]
    ignoring = _mse(q - batch.rewards - discount * np.where(batch.terminated, 0.0, unmasked))
    assert abs(expected - ignoring) > 1e-3  # the masks change the target

    losses = agent.learner.learn(batch)

    assert np.isfinite(losses["q_loss"]) and losses["q_loss"] == pytest.approx(expected, rel=1e-5)
