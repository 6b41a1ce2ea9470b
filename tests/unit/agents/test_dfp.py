"""Unit tests for coach/agents/dfp.py and coach/memories/future_measurements.py: DFP's
targets by hand for a scripted measurement sequence (episode ends inside the offsets), the
goal, a gradient step's loss by hand, acting on goal-weighed predictions, goals changed for
evaluation, the return as a measurement, checkpoints and determinism."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.dfp import GOAL, DFPAgent, DFPAgentParameters, goal_weights
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.core.types import ActionInfo, Batch, Transition
from coach.environments.measurements import MEASUREMENTS
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.memories.future_measurements import FUTURE, future_targets
from tests.unit.agents.seeded import after_run, main_weights, short_schedule

OBSERVATIONS = spaces.Dict(
    {
        "observation": spaces.Box(-1.0, 1.0, (3,), np.float32),
        MEASUREMENTS: spaces.Box(-np.inf, np.inf, (2,), np.float32),
    }
)
ACTIONS = spaces.Discrete(3)

# An episode of 5 steps: its states' measurements, then the state after the last step.
HEALTH = [100.0, 90.0, 95.0, 80.0, 60.0, 40.0]
AMMO = [10.0, 10.0, 9.0, 9.0, 8.0, 8.0]
NAN = float("nan")


def _measured() -> np.ndarray:
    return np.stack([HEALTH, AMMO], axis=1)


def test_targets_by_hand_with_the_episode_ending_inside_the_offsets() -> None:
    scales = np.array([10.0, 1.0])
    targets = future_targets(_measured(), [1, 2, 4], scales, terminated=True)
    # Row t: (health, ammo) changes after 1, 2 and 4 steps; health divided by 10; NaN where
    # t + offset lies beyond the state after the last step (index 5).
    expected = [
        [-1.0, 0.0, -0.5, -1.0, -4.0, -2.0],  # t=0: 90-100, 95-100, 60-100
        [0.5, -1.0, -1.0, -1.0, -5.0, -2.0],  # t=1: 95-90, 80-90, 40-90
        [-1.5, 0.0, -3.5, -1.0, NAN, NAN],  # t=2: 80-95, 60-95, (6 > 5)
        [-2.0, -1.0, -4.0, -1.0, NAN, NAN],  # t=3: 60-80, 40-80
        [-2.0, 0.0, NAN, NAN, NAN, NAN],  # t=4: 40-60
    ]
    np.testing.assert_allclose(targets, expected)
    # "last_step": beyond a terminated episode's end the measurements stay as they ended.
    last = future_targets(_measured(), [1, 2, 4], scales, terminated=True, after_end="last_step")
    np.testing.assert_allclose(last[2], [-1.5, 0.0, -3.5, -1.0, -5.5, -1.0])  # 40-95, 8-9
    np.testing.assert_allclose(last[4], [-2.0, 0.0, -2.0, 0.0, -2.0, 0.0])
    # A cut episode's future is unknown whatever the setting.
    cut = future_targets(_measured(), [1, 2, 4], scales, terminated=False, after_end="last_step")
    np.testing.assert_allclose(cut, expected)


def test_the_goal_weighs_each_measurement_at_the_last_offsets() -> None:
    goal = goal_weights([1.0, -2.0], [0.5, 1.0], num_offsets=3)
    # (offset, measurement) flat: offset 1 weighs 0, offsets 2 and 4 weigh 0.5 and 1.
    np.testing.assert_allclose(goal, [0, 0, 0.5, -1.0, 1.0, -2.0])


def _params() -> DFPAgentParameters:
    params = DFPAgentParameters()
    params.algorithm.num_predicted_steps_ahead = 3
    params.algorithm.goal_vector = [1.0, 0.5]
    params.algorithm.future_measurements_weights = [0.5, 1.0]
    params.algorithm.target_scales = [10.0, 1.0]
    params.algorithm.batch_size = 4
    params.memory.max_size = 100  # type: ignore[union-attr]
    for embedder in params.network_wrappers["main"].input_embedders.values():
        embedder.scheme = [8]
    params.network_wrappers["main"].heads[0].hidden = 8  # type: ignore[attr-defined]
    return params


def _step(t: int, ended: bool) -> Transition:
    state = {
        "observation": np.full((1, 3), t / 10, dtype=np.float32),
        MEASUREMENTS: np.array([[HEALTH[t], AMMO[t]]], dtype=np.float32),
    }
    following = {
        "observation": np.full((1, 3), (t + 1) / 10, dtype=np.float32),
        MEASUREMENTS: np.array([[HEALTH[t + 1], AMMO[t + 1]]], dtype=np.float32),
    }
    return Transition(
        state,
        np.array([t % 3]),
        np.array([1.0], dtype=np.float32),
        following,
        np.array([ended]),
        np.zeros(1, dtype=bool),
    )


def test_an_episode_is_stored_with_its_targets_when_it_ends() -> None:
    agent = DFPAgent(_params(), OBSERVATIONS, ACTIONS, 1, seed=0)
    memory = agent.memory
    assert memory is not None
    info = ActionInfo(np.array([0]))
    for t in range(4):
        agent.store(_step(t, False), info)
    assert len(memory) == 0  # the episode is open
    agent.store(_step(4, True), info)
    assert len(memory) == 5
    stored = memory.get(np.arange(5)).extras[FUTURE]  # type: ignore[attr-defined]
    expected = future_targets(_measured(), [1, 2, 4], np.array([10.0, 1.0]), terminated=True)
    np.testing.assert_allclose(stored, expected)
    # An open episode travels with a checkpoint, and a restart stores it cut.
    agent.store(_step(0, False), info)
    other = DFPAgent(_params(), OBSERVATIONS, ACTIONS, 1, seed=1)
    other.load_state_dict(copy.deepcopy(agent.state_dict()))
    other.store(_step(1, True), info)
    assert len(other.memory) == 2  # type: ignore[arg-type]


def _batch(n: int = 6, seed: int = 0) -> Batch:
    rng = np.random.default_rng(seed)
    targets = rng.normal(0.0, 1.0, (n, 6)).astype(np.float32)
    targets[0, 4:] = np.nan
    targets[3, 2:] = np.nan
    return Batch(
        states={
            "observation": rng.uniform(-1, 1, (n, 3)).astype(np.float32),
            MEASUREMENTS: rng.uniform(0, 100, (n, 2)).astype(np.float32),
        },
        actions=rng.integers(0, 3, n),
        rewards=np.zeros(n, dtype=np.float32),
        next_states={},
        terminated=np.zeros(n, dtype=bool),
        truncated=np.zeros(n, dtype=bool),
        extras={FUTURE: targets},
    )


def test_a_gradient_step_regresses_the_taken_predictions_on_the_known_targets() -> None:
    agent = DFPAgent(_params(), OBSERVATIONS, ACTIONS, 1, seed=0)
    b = _batch()
    goal = goal_weights([1.0, 0.5], [0.5, 1.0], 3)
    inputs = {k: torch.as_tensor(v) for k, v in b.states.items()}
    inputs[GOAL] = torch.as_tensor(goal).expand(len(b), -1)
    with torch.no_grad():
        predicted = agent.networks["main"].online(inputs)["future"].numpy()
    taken = predicted[np.arange(len(b)), b.actions]
    target = b.extras[FUTURE]
    errors = np.where(np.isnan(target), 0.0, taken - np.nan_to_num(target))
    expected = (errors**2).sum(axis=1).mean()
    losses = agent.learner.learn(b)  # type: ignore[union-attr]
    assert float(losses["loss"]) == pytest.approx(expected, rel=1e-5)
    # Acting: the goal-weighed predictions, the evaluation goal in evaluation.
    values = agent.policy.values(agent.policy.tensors(b.states)).numpy()  # type: ignore[attr-defined]
    with torch.no_grad():
        predicted = agent.networks["main"].online(inputs)["future"].numpy()
    np.testing.assert_allclose(values, predicted @ goal, rtol=1e-5, atol=1e-6)
    agent.set_goal_vector([0.0, -1.0], evaluation=True)
    agent.phase = RunPhase.EVALUATE
    other = goal_weights([0.0, -1.0], [0.5, 1.0], 3)
    inputs[GOAL] = torch.as_tensor(other).expand(len(b), -1)
    with torch.no_grad():
        predicted = agent.networks["main"].online(inputs)["future"].numpy()
    values = agent.policy.values(agent.policy.tensors(b.states)).numpy()  # type: ignore[attr-defined]
    np.testing.assert_allclose(values, predicted @ other, rtol=1e-5, atol=1e-6)


def test_measurements_and_goals_are_checked() -> None:
    bare = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (3,), np.float32)})
    with pytest.raises(CoachError, match="measure_return=True"):
        DFPAgent(_params(), bare, ACTIONS, 1, seed=0)
    params = _params()
    params.algorithm.goal_vector = [1.0]
    with pytest.raises(CoachError, match="goal_vector has 1 weights, the environment 2"):
        DFPAgent(params, OBSERVATIONS, ACTIONS, 1, seed=0)
    agent = DFPAgent(_params(), OBSERVATIONS, ACTIONS, 1, seed=0)
    with pytest.raises(CoachError, match="needs 2 weights"):
        agent.set_goal_vector([1.0])


def test_the_return_so_far_is_a_measurement() -> None:
    env = GymEnvironmentParameters(level="CartPole-v1", measure_return=True).make_measured_env()
    observation, _ = env.reset(seed=0)
    assert set(observation) == {"observation", MEASUREMENTS}
    assert observation[MEASUREMENTS].tolist() == [0.0]
    for t in range(1, 4):
        observation, *_ = env.step(0)
        assert observation[MEASUREMENTS].tolist() == [float(t)]
    observation, _ = env.reset(seed=1)
    assert observation[MEASUREMENTS].tolist() == [0.0]


def test_same_seed_same_numbers(tmp_path: Path) -> None:
    environment = GymEnvironmentParameters(level="CartPole-v1", measure_return=True)
    runs = []
    for i, seed in enumerate((0, 0, 1)):
        params = _params()
        params.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
        params.algorithm.goal_vector = [1.0]
        params.algorithm.target_scales = None
        runs.append(
            after_run(params, environment, short_schedule(), seed, tmp_path / str(i), main_weights)
        )
    assert runs[0][0] > 0 and torch.equal(runs[0][1], runs[1][1])
    assert not torch.equal(runs[0][1], runs[2][1])
